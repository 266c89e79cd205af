#!/usr/bin/env python3
"""Checks that the pictures in docs/ show names the code still has.

Each picture lists the runtime names it shows in a "code:" line: a
`// code: a b c` comment in a docs/diagrams/*.dot source, or an
`<!-- code: a b c -->` comment in a generated docs/**/*.svg with no .dot
beside it (tools/trace/zoom_svg.py writes one). For each picture the check
requires that

  - every listed name is an identifier somewhere in runtime/ (*.cc, *.h), so
    a renamed function or state makes the picture fail here;
  - every listed name appears in the rendered SVG, so the list does not
    claim more than the picture shows;
  - every name written as a call in a .dot label ("runqget()") is listed.

Usage: tools/check_diagrams.py [--root DIR]
Exit status: 0 all good, 1 problems (listed).
"""
import argparse
import os
import re
import sys

CODE_DOT = re.compile(r"^//\s*code:\s*(.*)$", re.M)
CODE_SVG = re.compile(r"<!--\s*code:\s*(.*?)\s*-->")
CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(\)")


def runtime_identifiers(root):
    ids = set()
    for dirpath, _, files in os.walk(os.path.join(root, "runtime")):
        for f in files:
            if f.endswith((".cc", ".h")):
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    ids.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fh.read()))
    return ids


def pictures(root):
    """(picture path, listed names, SVG text, label text or None)."""
    docs = os.path.join(root, "docs")
    for dirpath, _, files in sorted(os.walk(docs)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if f.endswith(".dot"):
                with open(path, encoding="utf-8") as fh:
                    dot = fh.read()
                m = CODE_DOT.search(dot)
                svg_path = path[:-4] + ".svg"
                svg = ""
                if os.path.isfile(svg_path):
                    with open(svg_path, encoding="utf-8") as fh:
                        svg = fh.read()
                labels = "\n".join(line for line in dot.splitlines()
                                   if not line.lstrip().startswith("//"))
                labels = re.sub(r"\\[nlr]", " ", labels)  # dot's line breaks
                yield path, m.group(1).split() if m else None, svg, labels
            elif f.endswith(".svg") and not os.path.isfile(path[:-4] + ".dot"):
                with open(path, encoding="utf-8") as fh:
                    svg = fh.read()
                m = CODE_SVG.search(svg)
                if m:
                    yield path, m.group(1).split(), svg, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    args = ap.parse_args()
    ids = runtime_identifiers(args.root)
    bad, checked, names = [], 0, 0
    for path, listed, svg, labels in pictures(args.root):
        rel = os.path.relpath(path, args.root)
        if listed is None:
            continue  # a diagram that shows no code names (goroutine-life)
        checked += 1
        if not svg:
            bad.append(f"{rel}: no rendered SVG beside it (scripts/diagrams.sh)")
        for name in listed:
            names += 1
            if name not in ids:
                bad.append(f"{rel}: {name}: not an identifier in runtime/")
            if svg and not re.search(r"\b" + re.escape(name) + r"\b", svg):
                bad.append(f"{rel}: {name}: listed but not in the SVG")
        if labels is not None:
            for call in sorted(set(CALL.findall(labels)) - set(listed)):
                bad.append(f"{rel}: {call}() is shown but not in its code: line")
    for b in bad:
        print(b)
    print(f"check_diagrams: {checked} pictures, {names} names checked, "
          f"{len(bad)} problems")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
