#!/usr/bin/env python3
"""Builds the API reference (docs/api/Doxyfile) and fails on public entities without docs.

Usage: tools/check_api_docs.py [--doxygen PATH] [--out DIR] [--list] [--root SRC]
Runs Doxygen on the public headers into DIR (default build/docs/api), prints every warning
Doxygen gives (an undocumented public entity, a broken doc command) as `file:line: message`,
and exits 1 if there is any. Doxygen's "potential recursive class relation" notes are not
warnings about our docs (CRTP bases such as keras::Layer<Self> trigger them) and are ignored.
--list prints only the count of undocumented entities per folder (for planning work).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IGNORED = ("Detected potential recursive class relation",)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doxygen", default=shutil.which("doxygen"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "docs", "api"))
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--root", default=ROOT, help="source tree (default: this script's)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    if not args.doxygen:
        print("check_api_docs: doxygen not found (Debian package doxygen)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    warn_log = os.path.join(args.out, "warnings.log")
    with open(os.path.join(root, "docs", "api", "Doxyfile"), encoding="utf-8") as f:
        config = f.read()
    config += f'\nOUTPUT_DIRECTORY = "{args.out}"\nWARN_LOGFILE = "{warn_log}"\n'
    subprocess.run([args.doxygen, "-"], input=config.encode(), cwd=root, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(warn_log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    # One warning per "<file>:<line>: warning: ..." line; continuation lines belong to it.
    warnings = []
    for line in text.splitlines():
        m = re.match(r"(.*?):(\d+): warning: (.*)", line)
        if m and not any(s in m.group(3) for s in IGNORED):
            path = os.path.relpath(m.group(1), root)
            warnings.append((path, int(m.group(2)), m.group(3)))
    warnings = sorted(set(warnings))
    if args.list:
        per_folder = collections.Counter(os.path.dirname(p) for p, _, _ in warnings)
        for folder, n in per_folder.most_common():
            print(f"{n:5d} {folder}")
        print(f"{len(warnings):5d} total")
        return 0
    for path, line, message in warnings:
        print(f"{path}:{line}: {message}")
    html = os.path.join(args.out, "html", "index.html")
    if warnings:
        print(f"check_api_docs: {len(warnings)} warnings (above); reference in {html}")
        return 1
    print(f"check_api_docs: every public entity is documented; reference in {html}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
