#!/usr/bin/env python3
"""Checks that every Go name gort's runtime cites exists in Go 1.19.

gort keeps Go's names and says so in comments: "schedule mirrors Go's
schedule", "(Go's entersyscallblock)". This check collects every "Go's X"
in runtime/ (*.cc, *.h, *.S) and looks X up in Go 1.19's source: runtime/,
and for gort's non-runtime twins sync/, time/, context/, net/ and
internal/poll/. X may name

  - a function (in Go or assembly), type, var or const (schedule, goexit,
    schedt, sched, _Grunning);
  - a method or struct/interface member, qualified or not (waitq.dequeue,
    Context.Err, pd.evict: evict must be some type's method or field);
  - a package-qualified name (sync.Mutex, runtime.Stack);
  - a prefix, written X* or X<...> (Go's _G* constants, sys_<goos>.s);
  - a file or package (proc.go, sync/cond.go, sys_linux_arm.s, sync);
  - alternatives, written a/b (mstart/mstart1).

Plain English after "Go's" ("Go's default", "Go's exit status") is not a
citation: PROSE lists those words; a word not in it is checked. A citation
of a later Go names the release ("Go 1.25's cgroup.FindCPU") and is not
looked up; NEWER_GO lists the few later names cited without one (their
file says which release has them).

Usage: tools/check_go_mapping.py [--go-src DIR] [--root DIR]
Exit status: 0 all found, 1 some not (listed as file:line), 77 Go's source
absent (ctest then reports the test as skipped, with the message).
"""
import argparse
import os
import re
import sys

SKIP = 77

# Directories of Go's source searched for declarations.
GO_DIRS = ["runtime", "sync", "time", "context", "net", "internal/poll"]

# Later-Go names cited without a release in the citation itself; the file
# names the release (runtime/os/cgroup_linux.cc: Go 1.25's
# internal/runtime/cgroup; runtime/proc_maxprocs.cc: Go 1.25's proc.go).
NEWER_GO = {
    "containsCPU": "1.25",
    "unescapePath": "1.25",
    "parseCPUMount": "1.25",
    "parseCPURelativePath": "1.25",
    "cgroup.ReadCPULimit": "1.25",
    "cgroup.FindCPU": "1.25",
    "defaultGOMAXPROCS": "1.25",
    "adjustCgroupGOMAXPROCS": "1.25",
    "updateMaxProcsG": "1.25",
    "updateMaxProcsGState": "1.25",
}

# Words that follow "Go's" in prose, not naming a declaration.
PROSE = {
    "G/M/P", "Windows", "behaviour", "chan", "children", "copy", "default",
    "deferred", "dialer", "does", "exit", "format", "function", "garbage",
    "goroutine", "message", "output", "package", "per", "process", "select",
    "text",
}

CITE = re.compile(
    r"Go(?:\s+(?P<ver>1\.\d+))?'s\s+"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z_][A-Za-z0-9_]*)*)"
    r"(?P<tail>[*<])?")

FUNC = re.compile(r"^func\s+(?:\(\s*\w*\s*\*?\s*(\w+)[^)]*\)\s*)?(\w+)")
SINGLE = re.compile(r"^(?:type|var|const)\s+(\w+)")
BLOCK = re.compile(r"^(?:type|var|const)\s*\($")
COMPOSITE = re.compile(r"^type\s+(\w+)\s+(?:struct|interface)\s*{\s*$")
ASM = re.compile(r"^TEXT\s+[\w/]*·(\w+)")
MEMBER = re.compile(r"^\t(\w+(?:\s*,\s*\w+)*)\b")


class GoSource:
    """Declared names, members, files and packages of Go's GO_DIRS."""

    def __init__(self, go_src):
        self.src = go_src
        self.names = set()    # f, T, v, pkg.f, T.m, pkg.T.m
        self.members = set()  # m: some type's method or field
        self.files = set()    # proc.go, sys_linux_arm.s
        self.packages = set()  # runtime, sync, internal/poll, poll
        for d in GO_DIRS:
            for dirpath, _, filenames in os.walk(os.path.join(go_src, d)):
                rel = os.path.relpath(dirpath, go_src).replace(os.sep, "/")
                self.packages.update({rel, rel.split("/")[-1]})
                for f in filenames:
                    self.files.add(f)
                    if f.endswith(".go") and not f.endswith("_test.go"):
                        self._scan(os.path.join(dirpath, f), rel.split("/")[-1])
                    elif f.endswith(".s"):
                        self._scan_asm(os.path.join(dirpath, f), rel.split("/")[-1])

    def _add(self, pkg, name):
        self.names.update({name, pkg + "." + name})

    def _scan_asm(self, path, pkg):
        """Functions written in assembly: TEXT runtime·goexit(SB)."""
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = ASM.match(line)
                if m:
                    self._add(pkg, m.group(1))

    def _scan(self, path, pkg):
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        in_block, composite = False, None
        for line in lines:
            if composite:
                if line.startswith("}"):
                    composite = None
                else:
                    m = MEMBER.match(line)
                    if m:
                        for member in re.split(r"\s*,\s*", m.group(1)):
                            self.members.add(member)
                            self._add(pkg, composite + "." + member)
                continue
            m = FUNC.match(line)
            if m:
                recv, name = m.groups()
                self._add(pkg, name)
                if recv:
                    self.members.add(name)
                    self._add(pkg, recv + "." + name)
                continue
            m = COMPOSITE.match(line)
            if m:
                composite = m.group(1)
                self._add(pkg, composite)
                continue
            m = SINGLE.match(line)
            if m:
                self._add(pkg, m.group(1))
                continue
            if BLOCK.match(line):
                in_block = True
                continue
            if in_block:
                if line.startswith(")"):
                    in_block = False
                else:
                    m = MEMBER.match(line)
                    if m:
                        for name in re.split(r"\s*,\s*", m.group(1)):
                            self._add(pkg, name)

    def knows(self, name, prefix=False):
        if prefix:
            return any(n.startswith(name) for n in self.names | self.files)
        if name in self.names or name in self.files or name in self.packages:
            return True
        if re.fullmatch(r"[\w/]+\.(go|s)", name):  # sync/cond.go
            return os.path.isfile(os.path.join(self.src, name))
        if "/" in name:  # alternatives: mstart/mstart1
            return all(self.knows(part) for part in name.split("/"))
        if "." in name:  # pd.evict: some type's method or field
            return name.rsplit(".", 1)[1] in self.members
        return False


def citations(root):
    """(path, line, name, release, tail) of every citation in runtime/, pkg/."""
    walks = [os.walk(os.path.join(root, d)) for d in ("runtime", "pkg")]
    for dirpath, _, filenames in sorted(w for walk in walks for w in walk):
        for f in sorted(filenames):
            if not f.endswith((".cc", ".h", ".S")):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for m in CITE.finditer(text):
                name = m.group("name").rstrip(".")
                yield (os.path.relpath(path, root),
                       text.count("\n", 0, m.start()) + 1, name,
                       m.group("ver"), m.group("tail"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--go-src", default="/usr/lib/go-1.19/src")
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.go_src, "runtime")):
        print(f"check_go_mapping: SKIP: no Go source at {args.go_src} "
              f"(scripts/deps.sh installs golang-go, which brings Go 1.19's)")
        return SKIP
    go = GoSource(args.go_src)
    bad, checked = [], 0
    for path, line, name, ver, tail in citations(args.root):
        if name in PROSE or ver and ver != "1.19" or name in NEWER_GO:
            continue
        checked += 1
        if not go.knows(name, prefix=tail is not None):
            bad.append(f"{path}:{line}: Go's {name}{tail or ''}: "
                       f"not in Go 1.19 ({', '.join(GO_DIRS)})")
    for b in bad:
        print(b)
    print(f"check_go_mapping: {checked} citations of Go 1.19 checked, "
          f"{len(bad)} not found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
