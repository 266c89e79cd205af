#!/usr/bin/env python3
"""tools/check_docs.py: the documentation's rules, checked (scripts/docs-check.sh).

1. Sizes: README.md at most 120 lines; every page under docs/ (the notebook
   docs/notes/ included) at most 500. docs/results/ is left out: those files
   are generated whole by the tools that measure, at the size a run makes.
2. No words of the development process in any tracked text file: sessions,
   "stop N", issue numbers ("issue 27"; Go's public issues are cited as
   golang.org/issue/N or golang/go#N), and, outside the dated notebook
   docs/notes/, the host's hours and days ("a slow hour", "this morning").
   A reader of the code or the pages has no use for them: history belongs
   in docs/notes/ (dated) or in commit messages.
3. Links: every relative link of README.md and docs/**/*.md, [text](path)
   or [text](path#anchor), names a file of the tree, and an anchor names a
   heading of that page.
4. Copies: docs/performance.md's results region is exactly the files
   docs/results/compare-*.md, in name order, each after a line
   "<!-- copy of docs/results/NAME -->". With --sync the region is
   rewritten from the files instead (a CPU model's first file gets its
   section then).

Usage: tools/check_docs.py [--sync] [ROOT]   (ROOT: the checkout, default .)
Prints each problem as FILE:LINE: what, and exits 1 if there is one.
"""

import os
import re
import subprocess
import sys

README_MAX = 120
PAGE_MAX = 500

# Words of the development process, anywhere (case-insensitive).
PROCESS_WORDS = re.compile(
    r"\bsessions?\b|\bstop [0-9]+\b|\bissues? #?[0-9]+"
    r"|\bthis hour\b|\bhour's host\b|\bslow-lock day\b|\bfast-lock day\b",
    re.IGNORECASE)
# Outside docs/notes/ only: when something was measured is the notebook's.
HOURS_AND_DAYS = re.compile(
    r"\b(slow|fast|middling|quiet|busy) (hour|day)s?\b"
    r"|\bthis (morning|evening|afternoon|week)\b|\blast night\b|\byesterday\b",
    re.IGNORECASE)
# Technical uses the words above may not be mistaken for: libdw's Dwfl
# session in runtime/os/traceback_linux.cc (a function of that name).
ALLOWED = re.compile(r"\bsession\(\)")
# Not text, or not ours to word: the fuzz corpus, images, lock files.
SKIP = re.compile(
    r"^tests/fuzz/corpus/|\.(png|svg|ico|jpg|gz)$|package-lock\.json$")

LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
RESULTS_BEGIN = "<!-- results:begin"
RESULTS_END = "<!-- results:end -->"
COPY_LINE = "<!-- copy of docs/results/{} -->"


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"],
                         check=True, capture_output=True).stdout
    return [f for f in out.decode().split("\0") if f]


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8",
              errors="replace") as f:
        return f.read()


def slug(heading):
    """A heading's anchor as GitHub makes it."""
    s = heading.strip().lower()
    s = re.sub(r"[`*_]", "", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text):
    found, seen = set(), {}
    in_code = False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
            continue
        m = None if in_code else re.match(r"#{1,6} (.*)", line)
        if m:
            a = slug(m.group(1))
            n = seen.get(a, 0)
            seen[a] = n + 1
            found.add(a if n == 0 else "%s-%d" % (a, n))
    return found


def mask_code(text):
    """text with code blocks, indented code and code spans blanked out (the
    newlines kept, so offsets still give line numbers)."""
    out, in_code = [], False
    for line in text.split("\n"):
        fence = line.lstrip().startswith("```")
        if fence or in_code or line.startswith("    "):
            out.append("")
            if fence:
                in_code = not in_code
            continue
        out.append(re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line))
    return "\n".join(out)


def results_region(root):
    """The text docs/performance.md's results region should hold."""
    d = os.path.join(root, "docs", "results")
    names = sorted(n for n in os.listdir(d)
                   if n.startswith("compare-") and n.endswith(".md"))
    return "".join(COPY_LINE.format(n) + "\n" + read(root, "docs/results/" + n)
                   for n in names)


def check_copies(root, sync, problems):
    page = "docs/performance.md"
    text = read(root, page)
    b = text.find(RESULTS_BEGIN)
    e = text.find(RESULTS_END)
    if b < 0 or e < b:
        problems.append("%s:1: no results region (%s ... %s)" %
                        (page, RESULTS_BEGIN, RESULTS_END))
        return
    start = text.index("\n", b) + 1
    want = results_region(root)
    if text[start:e] == want:
        return
    if sync:
        with open(os.path.join(root, page), "w", encoding="utf-8") as f:
            f.write(text[:start] + want + text[e:])
        print("docs-check: rewrote the results region of %s" % page)
        return
    line = text.count("\n", 0, start) + 1
    problems.append("%s:%d: the results region differs from "
                    "docs/results/compare-*.md (scripts/docs-check.sh --sync)" %
                    (page, line))


def main(argv):
    sync = "--sync" in argv
    args = [a for a in argv if a != "--sync"]
    root = args[0] if args else "."
    files = tracked(root)
    # Pages written but not yet added count too.
    for dirpath, _, names in os.walk(os.path.join(root, "docs")):
        for n in names:
            p = os.path.relpath(os.path.join(dirpath, n), root)
            if p not in files:
                files.append(p)
    problems = []
    if sync:
        check_copies(root, True, problems)

    pages = [f for f in files
             if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))]
    for f in pages:
        if not os.path.exists(os.path.join(root, f)) or f.startswith("docs/results/"):
            continue
        n = read(root, f).count("\n")
        limit = README_MAX if f == "README.md" else PAGE_MAX
        if n > limit:
            problems.append("%s:%d: %d lines, more than %d" % (f, n, n, limit))

    for f in files:
        if f == "tools/check_docs.py":
            continue  # it names the words it looks for
        if SKIP.search(f) or not os.path.isfile(os.path.join(root, f)):
            continue
        try:
            text = read(root, f)
        except OSError:
            continue
        if "\0" in text:
            continue
        notes = f.startswith("docs/notes/")
        for i, line in enumerate(text.split("\n"), 1):
            clean = ALLOWED.sub("", line)
            m = PROCESS_WORDS.search(clean) or (
                None if notes else HOURS_AND_DAYS.search(clean))
            if m:
                problems.append("%s:%d: a word of the development process: "
                                "%r" % (f, i, m.group(0)))

    texts = {}
    for f in pages:
        if os.path.exists(os.path.join(root, f)):
            texts[f] = read(root, f)
    for f, text in list(texts.items()):
        masked = mask_code(text)
        for m in LINK.finditer(masked):
            i = masked.count("\n", 0, m.start(1)) + 1
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # a URL
            path, _, anchor = target.partition("#")
            dest = f if not path else os.path.normpath(
                os.path.join(os.path.dirname(f), path))
            if not os.path.exists(os.path.join(root, dest)):
                problems.append("%s:%d: link to %s: no such file" %
                                (f, i, target))
                continue
            if anchor and dest.endswith(".md"):
                if dest not in texts:
                    texts[dest] = read(root, dest)
                if anchor not in anchors(texts[dest]):
                    problems.append("%s:%d: link to %s: no heading #%s" %
                                    (f, i, target, anchor))

    if not sync:
        check_copies(root, False, problems)

    for p in problems:
        print(p)
    if problems:
        print("docs-check: %d problem(s)" % len(problems))
        return 1
    print("docs-check: PASS (%d pages, %d tracked files)" % (len(pages), len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
