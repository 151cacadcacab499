#!/usr/bin/env python3
"""Checks tapeflow's include graph against the allowed folder graph (tests/include_graph.txt).

Every `#include <tapeflow/...>` in include/tapeflow/ is an edge from the including header's
module (its first folder under include/tapeflow/, or `umbrella` for the headers beside the
folders) to the included header's module. An edge that the allowed graph does not list fails,
so a header that reaches upward (a data/ header including keras/, core/ including ops/) fails
the tests instead of slowly turning the modules into one. Modules and the reasons for the
graph: docs/architecture.md, "Layers".

Usage: tools/check_include_graph.py                   check; exit 1 on a forbidden edge
       tools/check_include_graph.py --graph           print the real module graph (edge counts)
       tools/check_include_graph.py --root DIR --rules FILE   check another tree (self-test)
"""
import argparse
import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s*<tapeflow/([^>]+)>', re.M)
UMBRELLA = "umbrella"


def module_of(path):
    """`ops/math/unary.hpp` -> `ops`; `tapeflow.hpp` -> `umbrella`."""
    parts = path.split("/")
    return parts[0] if len(parts) > 1 else UMBRELLA


def read_rules(path):
    """Returns ({module: allowed modules}, {(header, module): reason}, leaf umbrella headers)."""
    allowed, exceptions, includable = {}, {}, set()
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path.name}:{number}"
        if line.startswith("exception "):
            m = re.fullmatch(r"exception\s+(\S+)\s*->\s*(\S+)\s*:\s*(.+)", line)
            if not m:
                sys.exit(f"{where}: expected 'exception <header> -> <module>: <reason>'")
            exceptions[(m.group(1), m.group(2))] = m.group(3)
        elif line.startswith("includable "):
            includable.update(line.split()[1:])
        else:
            m = re.fullmatch(r"([\w.]+)\s*:\s*(.*)", line)
            if not m:
                sys.exit(f"{where}: expected '<module>: <modules it may include>'")
            allowed[m.group(1)] = set(m.group(2).split()) | {m.group(1)}
    return allowed, exceptions, includable


def edges(include_dir):
    """Yields (including header, included header), both relative to include/tapeflow/."""
    for header in sorted(include_dir.rglob("*.hpp")):
        source = header.relative_to(include_dir).as_posix()
        for m in INCLUDE.finditer(header.read_text()):
            yield source, m.group(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=ROOT / "include/tapeflow")
    parser.add_argument("--rules", type=pathlib.Path, default=ROOT / "tests/include_graph.txt")
    parser.add_argument("--graph", action="store_true", help="print the module graph and exit")
    args = parser.parse_args()

    all_edges = list(edges(args.root))
    if args.graph:
        counts = collections.Counter((module_of(a), module_of(b)) for a, b in all_edges)
        for (a, b), n in sorted(counts.items()):
            if a != b:
                print(f"{a} -> {b}  ({n})")
        return 0

    allowed, exceptions, includable = read_rules(args.rules)
    errors, used = [], set()
    for source, target in all_edges:
        a, b = module_of(source), module_of(target)
        if a not in allowed:
            errors.append(f"{source}: module '{a}' is not in {args.rules.name}; add it there")
            continue
        if b == UMBRELLA and a != UMBRELLA and target not in includable:
            errors.append(f"{source} includes the umbrella <tapeflow/{target}>: library code "
                          "includes the narrow headers it uses")
        elif b not in allowed[a]:
            if (source, b) in exceptions:
                used.add((source, b))
                continue
            errors.append(f"{source} includes <tapeflow/{target}>: {a} may not include {b} "
                          f"(allowed: {', '.join(sorted(allowed[a] - {a})) or 'nothing'})")
    for key in sorted(set(exceptions) - used):
        errors.append(f"{args.rules.name}: exception {key[0]} -> {key[1]} is no longer needed; "
                      "delete it")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} problem(s) with the layering in {args.rules.name}")
        return 1
    print(f"{len(all_edges)} includes follow {args.rules.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
