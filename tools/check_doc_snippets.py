#!/usr/bin/env python3
"""Checks that the C++ in the documentation is code the tests compile and run.

Every ```cpp block of README.md and docs/**/*.md may be preceded, on the line just before its
opening fence, by a reference

    <!-- snippet: <repo-relative path> <name> -->

The block's text must then equal the text of that file between its two marker lines
`// [snippet:<name>]` (`// [readme]` counts as the marker of the name `readme`), with the
region's common leading indentation removed. Marker lines of other snippets, and the
`// [seed:<name> begin|end]` lines of tools/line_counts.py, inside the region are left out.
A ```cpp block that contains `int main(` must have such a reference, to a file under examples/
or tests/ (which the tests build and run); other blocks without one are fragments and pass.

Usage: tools/check_doc_snippets.py               check the repository; exit 1 on a failure
       tools/check_doc_snippets.py --root DIR    check another tree (the tests' fixture)
       tools/check_doc_snippets.py --list        also print each referenced block
       tools/check_doc_snippets.py --write       copy each referenced region into its block

Failures are printed as `file:line: message` (the line of the block's opening fence).
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = re.compile(r"^\s*<!--\s*snippet:\s*(\S+)\s+([A-Za-z0-9_.-]+)\s*-->\s*$")
REFERENCE_START = re.compile(r"^\s*<!--\s*snippet\b")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
SNIPPET_MARKER = re.compile(r"^\s*// \[(?:snippet:([A-Za-z0-9_.-]+)|(readme))\]\s*$")
SEED_MARKER = re.compile(r"^\s*// \[seed:[a-z0-9_]+ (?:begin|end)\]\s*$")
MAIN = re.compile(r"\bint\s+main\s*\(")
CPP_INFO = {"cpp", "c++", "cxx"}
RUN_DIRS = ("examples", "tests")


class Block:
    def __init__(self, path, line, info, lines, reference, reference_line, indent=""):
        self.path = path  # the markdown file, relative to the root
        self.line = line  # 1-based line of the opening fence
        self.indent = indent  # the fence's indentation (a block in a list item)
        self.info = info
        self.lines = lines
        self.reference = reference  # (path, name) or None
        self.reference_line = reference_line


def markdown_files(root):
    files = []
    if (root / "README.md").is_file():
        files.append(root / "README.md")
    docs = root / "docs"
    if docs.is_dir():
        files += sorted(p for p in docs.rglob("*.md") if p.is_file())
    return files


def parse_blocks(root, md, errors):
    """The fenced blocks of one markdown file; malformed references and fences go to errors."""
    rel = md.relative_to(root).as_posix()
    text = md.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    pending = None  # (line number, (path, name)) of a reference waiting for its block
    while i < len(text):
        line = text[i]
        fence = FENCE.match(line)
        if fence:
            indent, marks, info = fence.group(1), fence.group(2), fence.group(3).lower()
            body = []
            j = i + 1
            closed = False
            while j < len(text):
                close = re.match(r"^\s*" + re.escape(marks[0]) + "{" + str(len(marks)) + r",}\s*$",
                                 text[j])
                if close:
                    closed = True
                    break
                # a fence indented in a list item: its lines carry the same indentation
                body.append(text[j][len(indent):] if text[j].startswith(indent) else text[j])
                j += 1
            if not closed:
                errors.append(f"{rel}:{i + 1}: code block is never closed")
                return blocks
            reference = reference_line = None
            if pending and pending[0] == i:  # the reference is on the line just before
                reference_line, reference = pending
            elif pending:
                errors.append(f"{rel}:{pending[0]}: snippet reference is not on the line just "
                              f"before a ```cpp block")
            pending = None
            if reference and info not in CPP_INFO:
                errors.append(f"{rel}:{reference_line}: snippet reference before a "
                              f"```{info or '(no language)'} block; only ```cpp blocks are checked")
            elif info in CPP_INFO:
                blocks.append(Block(rel, i + 1, info, body, reference, reference_line, indent))
            i = j + 1
            continue
        if pending:
            errors.append(f"{rel}:{pending[0]}: snippet reference is not on the line just "
                          f"before a ```cpp block")
            pending = None
        if REFERENCE_START.match(line):
            m = REFERENCE.match(line)
            if m:
                pending = (i + 1, (m.group(1), m.group(2)))
            else:
                errors.append(f"{rel}:{i + 1}: malformed snippet reference; expected "
                              f"'<!-- snippet: <repo-relative path> <name> -->'")
        i += 1
    if pending:
        errors.append(f"{rel}:{pending[0]}: snippet reference is not on the line just before a "
                      f"```cpp block")
    return blocks


def dedent(lines):
    indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
    cut = min(indents) if indents else 0
    return [l[cut:] if l.strip() else "" for l in lines]


def snippet(root, source, name, cache):
    """(lines, first line number) of a source's region, or raises ValueError with the reason."""
    if source not in cache:
        path = (root / source).resolve()
        try:
            path.relative_to(root.resolve())
        except ValueError:
            raise ValueError(f"{source} is outside the repository")
        if not path.is_file():
            raise ValueError(f"{source} does not exist")
        cache[source] = path.read_text(encoding="utf-8").splitlines()
    lines = cache[source]
    markers = []
    for number, line in enumerate(lines, 1):
        m = SNIPPET_MARKER.match(line)
        if m and (m.group(1) or m.group(2)) == name:
            markers.append(number)
    marker = f"// [snippet:{name}]"
    if len(markers) != 2:
        where = f" (lines {', '.join(map(str, markers))})" if markers else ""
        raise ValueError(f"{source} has {len(markers)} '{marker}' marker line(s){where}; a "
                         f"snippet is the text between exactly two")
    first, last = markers
    region = [l for l in lines[first:last - 1]
              if not SNIPPET_MARKER.match(l) and not SEED_MARKER.match(l)]
    return dedent(region), first + 1


def strip_trailing_blank(lines):
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def first_difference(expected, found):
    for k in range(max(len(expected), len(found))):
        e = expected[k] if k < len(expected) else None
        f = found[k] if k < len(found) else None
        if e != f:
            return k, e, f
    return None


def describe(line):
    return "(end of block)" if line is None else repr(line)


def write(root):
    """Replaces every referenced block's text with its source region; returns the files changed."""
    changed = []
    for md in markdown_files(root):
        errors = []
        blocks = [b for b in parse_blocks(root, md, errors) if b.reference]
        text = md.read_text(encoding="utf-8").split("\n")
        for block in reversed(blocks):  # bottom up, so earlier line numbers stay valid
            try:
                region, _ = snippet(root, *block.reference, {})
            except ValueError:
                continue  # reported by the check
            new = [block.indent + l if l else l for l in strip_trailing_blank(region)]
            text[block.line:block.line + len(block.lines)] = new
        updated = "\n".join(text)
        if updated != md.read_text(encoding="utf-8"):
            md.write_text(updated, encoding="utf-8")
            changed.append(md.relative_to(root).as_posix())
    return changed


def check(root, list_blocks=False):
    errors = []
    cache = {}
    files = markdown_files(root)
    checked = referenced = with_main = 0
    for md in files:
        for block in parse_blocks(root, md, errors):
            checked += 1
            has_main = any(MAIN.search(l) for l in block.lines)
            with_main += has_main
            where = f"{block.path}:{block.line}"
            if block.reference is None:
                if has_main:
                    errors.append(f"{where}: ```cpp block with 'int main(' has no "
                                  f"'<!-- snippet: <path> <name> -->' reference on the line "
                                  f"before it: quote a program under examples/ or tests/")
                continue
            referenced += 1
            source, name = block.reference
            if has_main and pathlib.PurePosixPath(source).parts[:1] not in [(d,) for d in RUN_DIRS]:
                errors.append(f"{where}: ```cpp block with 'int main(' references {source}, which "
                              f"is not under examples/ or tests/ (the programs the tests run)")
                continue
            try:
                expected, start = snippet(root, source, name, cache)
            except ValueError as e:
                errors.append(f"{where}: {e}")
                continue
            expected = strip_trailing_blank(expected)
            found = strip_trailing_blank(block.lines)
            diff = first_difference(expected, found)
            if diff:
                k, e, f = diff
                errors.append(f"{where}: block differs from {source} [snippet:{name}] at block "
                              f"line {k + 1} ({source}:{start + k}): expected {describe(e)}, "
                              f"found {describe(f)}; copy the region into the block (--write)")
            elif list_blocks:
                print(f"{where}: {source} [snippet:{name}] ({len(expected)} lines)")
    return errors, len(files), checked, referenced, with_main


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=pathlib.Path, default=ROOT,
                    help="the tree to check (default: this repository)")
    ap.add_argument("--list", action="store_true", help="print every referenced block")
    ap.add_argument("--write", action="store_true",
                    help="first copy every referenced region into its block, then check")
    args = ap.parse_args()
    root = args.root.resolve()
    if args.write:
        for path in write(root):
            print(f"updated {path}")
    errors, files, checked, referenced, with_main = check(root, args.list)
    def where(error):  # "file:line: message" -> (file, line)
        path, line, _ = error.split(":", 2)
        return path, int(line)
    for e in sorted(errors, key=where):
        print(e)
    if errors:
        print(f"check_doc_snippets: {len(errors)} failure(s) in {checked} ```cpp blocks",
              file=sys.stderr)
        return 1
    print(f"check_doc_snippets: {files} markdown files, {checked} ```cpp blocks checked, "
          f"{referenced} referenced (equal to their source), {checked - referenced} fragments; "
          f"{with_main} with main, all referenced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
