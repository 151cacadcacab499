#!/usr/bin/env python3
"""Counts the lines of the chapters' Python programs and of their C++ mirrors in examples/, and
writes the table in docs/line_counts.md.

usage: tools/line_counts.py           # print the table
       tools/line_counts.py --write   # update docs/line_counts.md between its markers
       tools/line_counts.py --check   # exit 1 if docs/line_counts.md is out of date

Python side: docs/seed_programs/<name>.py. C++ side: every region of examples/ (main.cpp and
common/*.hpp) between `// [seed:<name> begin]` and `// [seed:<name> end]`; a program's regions
may span several files. Counted on both sides: non-blank lines that are not comments only;
Python import lines and C++ #include lines are not counted (the regions hold none). The C++
column also shows, in parentheses, the count without lines that hold only closing brackets
(`}`, `};`, `});`), which Python's indentation makes unnecessary.
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYTHON_DIR = ROOT / "docs" / "seed_programs"
EXAMPLES = ROOT / "examples"
TABLE = ROOT / "docs" / "line_counts.md"
BEGIN, END = "<!-- line_counts begin -->", "<!-- line_counts end -->"
AIM = 1.3

# (seed name, what it is); docs/seed_programs/<name>.py and the [seed:<name>] regions.
PROGRAMS = [
    ("mlp", "MLP model (Flatten, Dense 100 relu, Dense 10)"),
    ("cnn", "CNN model (2 x Conv2D + MaxPool2D, Dense 1024, Dense 10)"),
    ("mnist_loader", "MNISTLoader (load, scale, random batches)"),
    ("train_mnist", "MNIST training loop + test with SparseCategoricalAccuracy"),
    ("checkpoint", "Checkpoint / CheckpointManager: train, save, restore, test"),
    ("tensorboard", "TensorBoard: scalar per batch, trace_on / trace_export"),
    ("data_pipeline", "tf.data MNIST: from_tensor_slices, map(rot90), shuffle, batch, show"),
    ("cats_vs_dogs", "tf.data cats_vs_dogs: files, decode/resize, CNN, fit, evaluate"),
    ("tfrecord", "TFRecord: write Examples, read with parse_single_example"),
    ("text_generation", "RNN text generation: DataLoader, LSTMCell model, train, sample"),
    ("keras_custom", "Custom Layer, Loss and Metric"),
    ("tf_function", "tf.function: the CNN's training step as a graph, timed"),
    ("function_quiz", "tf.function quizzes (retracing; a variable in a function)"),
    ("tensor_array", "tf.TensorArray in a tf.function"),
    ("autograph", "tf.autograph.to_code of square_if_positive"),
    ("config", "tf.config: list devices, visibility, memory growth, logical devices"),
    ("distribute", "tf.distribute: MirroredStrategy, model built under scope(), fit"),
]

REGION = re.compile(r"^\s*// \[seed:([a-z0-9_]+) (begin|end)\]\s*$")


def python_lines(path):
    n = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        is_import = s.startswith("import ") or (s.startswith("from ") and " import " in s)
        if not s or s.startswith("#") or is_import:
            continue
        n += 1
    return n


def cpp_regions():
    """{name: [(file, [lines])]} for every [seed:name] region under examples/."""
    regions = {}
    files = sorted(EXAMPLES.glob("*/main.cpp")) + sorted((EXAMPLES / "common").glob("*.hpp"))
    for f in files:
        open_name, body = None, []
        for number, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            m = REGION.match(line)
            if m and m.group(2) == "begin":
                if open_name:
                    sys.exit(f"{f}:{number}: [seed:{m.group(1)} begin] inside [seed:{open_name}]")
                open_name, body = m.group(1), []
            elif m:
                if m.group(1) != open_name:
                    sys.exit(f"{f}:{number}: [seed:{m.group(1)} end] without its begin")
                regions.setdefault(open_name, []).append((f.relative_to(ROOT), body))
                open_name = None
            elif open_name:
                body.append(line)
        if open_name:
            sys.exit(f"{f}: [seed:{open_name} begin] is never closed")
    return regions


def cpp_counts(lines):
    total = braces = 0
    for line in lines:
        s = line.strip()
        if not s or s.startswith("//") or s.startswith("#include"):
            continue
        total += 1
        if re.fullmatch(r"[}\])]+[;,]?\)?;?", s):
            braces += 1
    return total, total - braces


def table():
    regions = cpp_regions()
    unknown = sorted(set(regions) - {name for name, _ in PROGRAMS})
    if unknown:
        sys.exit(f"examples/ has [seed:...] regions for unknown programs: {', '.join(unknown)}")
    rows = [
        "| program | Python | C++ mirror | Python lines | C++ lines (no `}` lines) | C++ / Python |",
        "|---|---|---|---:|---:|---:|",
    ]
    sums = [0, 0, 0]
    over = []
    for name, what in PROGRAMS:
        py = PYTHON_DIR / f"{name}.py"
        if not py.exists():
            sys.exit(f"missing {py.relative_to(ROOT)}")
        if name not in regions:
            sys.exit(f"no [seed:{name} begin] ... [seed:{name} end] region under examples/")
        p = python_lines(py)
        c = b = 0
        for _, lines in regions[name]:
            t, nb = cpp_counts(lines)
            c, b = c + t, b + nb
        files = sorted({str(f) for f, _ in regions[name]})
        ratio = c / p
        sums = [sums[0] + p, sums[1] + c, sums[2] + b]
        mark = "" if ratio <= AIM else " (over)"
        if ratio > AIM:
            over.append(name)
        rows.append(f"| {what} | `{py.relative_to(ROOT)}` | {', '.join(f'`{f}`' for f in files)} "
                    f"| {p} | {c} ({b}) | {ratio:.2f}{mark} |")
    rows.append(f"| **all** | | | **{sums[0]}** | **{sums[1]} ({sums[2]})** | "
                f"**{sums[1] / sums[0]:.2f}** |")
    text = "\n".join(rows) + "\n"
    text += (f"\nAim: C++ <= {AIM}x the Python. Over it: "
             f"{', '.join(over) if over else 'none'}.\n")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="update docs/line_counts.md")
    ap.add_argument("--check", action="store_true", help="fail if docs/line_counts.md is stale")
    args = ap.parse_args()
    generated = table()
    if not (args.write or args.check):
        sys.stdout.write(generated)
        return 0
    doc = TABLE.read_text(encoding="utf-8")
    if BEGIN not in doc or END not in doc:
        sys.exit(f"{TABLE.relative_to(ROOT)} lacks the markers {BEGIN} / {END}")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    updated = f"{head}{BEGIN}\n{generated}{END}{tail}"
    if args.check:
        if updated != doc:
            print(f"{TABLE.relative_to(ROOT)} is out of date: run tools/line_counts.py --write",
                  file=sys.stderr)
            return 1
        print(f"{TABLE.relative_to(ROOT)} is up to date")
        return 0
    TABLE.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
