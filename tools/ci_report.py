#!/usr/bin/env python3
"""CI's closing summary: what a green run might otherwise hide.

Reads what the stages of .ci/run left in build/ (only files newer than
--since, so an earlier run's trees do not count) and prints
  - the slowest tests of every test tree (ctest's LastTest.log, and the
    per-binary logs), so the next engineer sees where CI's minutes go;
  - every skipped test with the reason its GTEST_SKIP gave, from the ctest
    trees and from the per-binary GoogleTest logs (scripts/cross.sh and
    windows.sh run each test binary whole: lib.sh's run_binaries);
  - every mutant not run because its tests skip here (scripts/mutants.sh
    writes them to not-run.txt).
Usage: tools/ci_report.py [--since FILE] [--slowest N] [BUILD_DIR]
"""

import argparse
import glob
import os
import re
import sys

RESULT = re.compile(r'^"(?P<name>[^"]+)" end time:')
SKIP_LINE = re.compile(r"^(?P<where>\S+:\d+): Skipped$")


def newer(path, since):
    return since is None or os.path.getmtime(path) >= since


def ctest_records(log):
    """(name, seconds, skipped, reason) for each test of a LastTest.log."""
    name = None
    seconds = 0.0
    skipped = False
    reason = ""
    where = ""
    lines = open(log, errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\d+/\d+ Test: (.+)$", line)
        if m:
            name, seconds, skipped, reason, where = m.group(1), 0.0, False, "", ""
            continue
        if name is None:
            continue
        m = SKIP_LINE.match(line)
        if m and i + 1 < len(lines):
            where, reason = m.group("where"), lines[i + 1].strip()
            continue
        m = re.match(r"^Test time =\s*([0-9.]+) sec", line)
        if m:
            seconds = float(m.group(1))
            continue
        if line.startswith("Skip regular expression found in output"):
            skipped = True
            continue
        if RESULT.match(line):
            yield name, seconds, skipped, (reason + (f" ({where})" if where else ""))
            name = None


def gtest_log_records(log):
    """(test, seconds, skipped, reason) for each test of one GoogleTest
    binary's log (a binary run whole: scripts/lib.sh's run_binaries)."""
    lines = open(log, errors="replace").read().splitlines()
    current = None
    reason = ""
    for i, line in enumerate(lines):
        m = re.match(r"^\[ RUN      \] (\S+)", line)
        if m:
            current, reason = m.group(1), ""
            continue
        m = SKIP_LINE.match(line)
        if m and i + 1 < len(lines):
            reason = f"{lines[i + 1].strip()} ({m.group('where')})"
            continue
        m = re.match(r"^\[ +(OK|SKIPPED|FAILED) +\] (\S+) \((\d+) ms\)", line)
        if m and m.group(2) == current:
            yield current, int(m.group(3)) / 1000, m.group(1) == "SKIPPED", reason
            current = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--since", help="only files newer than this one count")
    ap.add_argument("--slowest", type=int, default=20)
    ap.add_argument("build", nargs="?", default="build")
    args = ap.parse_args()
    since = os.path.getmtime(args.since) if args.since else None

    times = []
    skips = []
    for log in sorted(glob.glob(os.path.join(args.build, "*", "Testing",
                                             "Temporary", "LastTest.log"))):
        if not newer(log, since):
            continue
        tree = log.split(os.sep)[-4]
        for name, secs, skipped, reason in ctest_records(log):
            times.append((secs, tree, name))
            if skipped:
                skips.append((tree, name, reason or "no reason given"))
    for log in sorted(glob.glob(os.path.join(args.build, "*", "tests", "**",
                                             "*_test.log"), recursive=True)):
        if not newer(log, since):
            continue
        tree = os.path.relpath(log, args.build).split(os.sep)[0]
        binary = os.path.basename(log)[:-len(".log")]
        for test, secs, skipped, reason in gtest_log_records(log):
            times.append((secs, tree, f"{binary}.{test}"))
            if skipped:
                skips.append((tree, f"{binary}.{test}",
                              reason or "no reason given"))
    not_run = []
    for f in sorted(glob.glob(os.path.join(args.build, "mutants", "**",
                                           "not-run.txt"), recursive=True)):
        if newer(f, since):
            not_run += [l.rstrip("\n") for l in open(f) if l.strip()]

    print(f"ci: the {args.slowest} slowest tests "
          f"(of {len(times)} in the test trees):")
    for secs, tree, name in sorted(times, reverse=True)[:args.slowest]:
        print(f"  {secs:7.2f}s  {tree:14s} {name}")
    print(f"ci: {len(skips)} skipped tests, each with its reason:")
    for tree, name, reason in skips:
        print(f"  {tree:14s} {name}: {reason}")
    print(f"ci: {len(not_run)} mutants not run (their tests skip here):")
    for line in not_run:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
