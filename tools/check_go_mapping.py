#!/usr/bin/env python3
"""Checks that every Go name gort's runtime cites exists in Go 1.19.

gort keeps Go's names and says so in comments: "schedule mirrors Go's
schedule", "(Go's entersyscallblock)". This check collects every "Go's X"
in runtime/ and pkg/ (*.cc, *.h, *.S) and in the diagrams' sources
(docs/diagrams/*.dot: comments and labels alike, a label's line break \\n
read as a space) and looks X up in Go 1.19's source: runtime/, and for
gort's non-runtime twins sync/, time/, context/, net/ and internal/poll/.
X may name

  - a function (in Go or assembly), type, var or const (schedule, goexit,
    schedt, sched, _Grunning);
  - a method or struct/interface member, qualified or not (waitq.dequeue,
    Context.Err, pd.evict: evict must be some type's method or field);
  - a package-qualified name (sync.Mutex, runtime.Stack);
  - a prefix, written X* or X<...> (Go's _G* constants, sys_<goos>.s);
  - a file or package (proc.go, sync/cond.go, sys_linux_arm.s, sync);
  - alternatives, written a/b (mstart/mstart1).

A citation may carry the file and line in Go 1.19 where the name is
defined or the cited code is: "Go's handoffp (proc.go:2380)". The check
then also confirms that the line lies inside X's declaration (a function's
body, a type's, a var or const block) in that file; a file outside runtime/
is written with its directory ("sync/mutex.go:72"). docs/learning.md's
table ("`schedule` (proc.go:3185)") is checked the same way. --require-lines
reports
citations without a line; --add-lines appends the line of X's declaration
to every citation that has none and names one declaration unambiguously.

Plain English after "Go's" ("Go's default", "Go's exit status") is not a
citation: PROSE lists those words; a word not in it is checked. A citation
of a later Go names the release ("Go 1.25's cgroup.FindCPU") and is not
looked up; NEWER_GO lists the few later names cited without one (their
file says which release has them).

Usage: tools/check_go_mapping.py [--go-src DIR] [--root DIR]
                                 [--require-lines | --add-lines]
Exit status: 0 all found, 1 some not (listed as file:line), 77 Go's source
absent (ctest then reports the test as skipped, with the message).
"""
import argparse
import itertools
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
    "deferred", "dialer", "does", "error", "exit", "format", "function",
    "garbage", "goroutine", "layout", "message", "output", "package", "per",
    "process", "run", "select", "stack", "status", "tail", "text", "do",
    "full",
}

CITE = re.compile(
    r"Go(?:\s+(?P<ver>1\.\d+))?'s\s+"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z_][A-Za-z0-9_]*)*)"
    r"(?P<tail>[*<])?"
    r"(?P<at>(?:\s|//)*\((?P<file>[\w/]+\.(?:go|s)):(?P<line>\d+)\))?")

# File-name words of Go's ports (GOOS, GOARCH, pollers), for locate().
PORT_WORDS = {
    "aix", "darwin", "dragonfly", "freebsd", "illumos", "ios", "js", "linux",
    "netbsd", "openbsd", "plan9", "solaris", "windows", "wasm", "unix",
    "bsd", "epoll", "kqueue", "futex", "sema", "fake", "stub", "386",
    "amd64", "arm", "arm64", "mips", "mipsx", "mips64x", "mipsle", "ppc64",
    "ppc64x", "ppc64le", "riscv64", "s390x", "loong64", "wasm", "libc",
    "syscall", "solaris2", "os3", "nonlinux", "noos", "generic",
}

# The ports whose files locate() prefers, for gort's Linux and Windows code.
PREFERRED = {
    "linux": {"linux", "epoll", "futex", "unix", "amd64", "nonlinux"} - {
        "nonlinux"},
    "windows": {"windows", "amd64"},
}

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
        # Where things are declared: (relative file, first line, last line)
        # per key, the keys as in names (f, T.m, pkg.f) plus members (.m).
        self.spans = {}
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

    def _add(self, pkg, name, where=None):
        self.names.update({name, pkg + "." + name})
        if where:
            for key in (name, pkg + "." + name):
                self.spans.setdefault(key, []).append(where)

    def _rel(self, path):
        return os.path.relpath(path, self.src).replace(os.sep, "/")

    def _scan_asm(self, path, pkg):
        """Functions written in assembly: TEXT runtime·goexit(SB)."""
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        starts = [(i + 1, ASM.match(line)) for i, line in enumerate(lines)]
        starts = [(n, m.group(1)) for n, m in starts if m]
        for k, (n, name) in enumerate(starts):
            end = starts[k + 1][0] - 1 if k + 1 < len(starts) else len(lines)
            self._add(pkg, name, (self._rel(path), n, end))

    def _scan(self, path, pkg):
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
        rel = self._rel(path)

        def span(i, closer):
            """Lines of the declaration starting at index i: to the closer
            at column 0 if the line opens a body, else the line alone."""
            if not lines[i].rstrip().endswith(("{", "(")):
                return (rel, i + 1, i + 1)
            for j in range(i + 1, len(lines)):
                if lines[j].startswith(closer):
                    return (rel, i + 1, j + 1)
            return (rel, i + 1, len(lines))

        in_block, composite = None, None
        for i, line in enumerate(lines):
            if composite:
                if line.startswith("}"):
                    composite = None
                else:
                    m = MEMBER.match(line)
                    if m:
                        for member in re.split(r"\s*,\s*", m.group(1)):
                            self.members.add(member)
                            self._add(pkg, composite + "." + member,
                                      (rel, i + 1, i + 1))
                            self.spans.setdefault("." + member, []).append(
                                (rel, i + 1, i + 1))
                continue
            m = FUNC.match(line)
            if m:
                recv, name = m.groups()
                where = span(i, "}")
                self._add(pkg, name, where)
                if recv:
                    self.members.add(name)
                    self._add(pkg, recv + "." + name, where)
                    self.spans.setdefault("." + name, []).append(where)
                continue
            m = COMPOSITE.match(line)
            if m:
                composite = m.group(1)
                self._add(pkg, composite, span(i, "}"))
                continue
            m = SINGLE.match(line)
            if m:
                self._add(pkg, m.group(1), span(i, "}"))
                continue
            if BLOCK.match(line):
                in_block = span(i, ")")
                continue
            if in_block:
                if line.startswith(")"):
                    in_block = None
                else:
                    m = MEMBER.match(line)
                    if m:
                        for name in re.split(r"\s*,\s*", m.group(1)):
                            # A name in a block: its own line, or the block.
                            self._add(pkg, name, (rel, i + 1, i + 1))
                            self._add(pkg, name, in_block)

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


    def _keys(self, name):
        """The span keys a cited name may refer to."""
        keys = []
        for part in name.split("/") if re.fullmatch(r"[\w.]+(/[\w.]+)+",
                                                     name) else [name]:
            keys.append(part)
            # T.m, pkg.f, a variable's .m, or a bare member (Mutex's state)
            keys.append("." + part.rsplit(".", 1)[-1])
        return keys

    def resolve(self, cited_file):
        """Go's file for a citation's file part: proc.go is runtime/proc.go;
        a path with a directory is taken as it is (sync/mutex.go)."""
        if "/" in cited_file:
            return cited_file
        return "runtime/" + cited_file

    def inside(self, name, cited_file, line, prefix=False):
        """Whether line of cited_file lies in a declaration name refers to."""
        rel = self.resolve(cited_file)
        if prefix:
            spans = [w for k, ws in self.spans.items() if k.startswith(name)
                     for w in ws]
        else:
            spans = [w for k in self._keys(name) for w in self.spans.get(k, [])]
        return any(f == rel and a <= line <= b for f, a, b in spans)

    def locate(self, name, prefer_os="linux", prefer_pkg="runtime"):
        """(file as cited, first line) of the one declaration name refers
        to, preferring runtime/, then portable files, then prefer_os's;
        None if there is none or the choice is not clear. Alternatives
        (a/b) give a's; a member (pd.evict) any type's one of that name."""
        if re.fullmatch(r"\w+(/\w+)+", name):
            name = name.split("/")[0]
        keys = [name] if name in self.spans else \
            ["." + name.rsplit(".", 1)[1]] if "." in name else []
        where = sorted({w for k in keys for w in self.spans.get(k, [])})
        if not where:
            return None
        # A var/const block and the name's own line: keep the name's line.
        own = [w for w in where if w[1] == w[2]]
        blocks = [w for w in where if w[1] != w[2]]
        if own and blocks and all(any(b[0] == o[0] and b[1] <= o[1] <= b[2]
                                      for b in blocks) for o in own):
            where = own

        def rank(w):
            path = w[0]
            parts = {p if p in PORT_WORDS else p.rstrip("0123456789")
                     for p in re.split(r"[_.]", path.rsplit("/", 1)[-1])[1:]}
            ports = parts & PORT_WORDS
            d = path.rsplit("/", 1)[0]
            return (0 if d == prefer_pkg else 1 if d == "runtime" else 2,
                    0 if not ports else 1 if ports <= PREFERRED[prefer_os]
                    else 2)

        best = min(rank(w) for w in where)
        top = [w for w in where if rank(w) == best]
        if len(top) != 1:
            return None
        f, first, _ = top[0]
        shown = f[len("runtime/"):] if f.startswith("runtime/") and \
            f.count("/") == 1 else f
        return shown, first


# Where citations are looked for: directory, file endings.
CITING = [("runtime", (".cc", ".h", ".S")), ("pkg", (".cc", ".h", ".S")),
          ("docs/diagrams", (".dot",))]


def sources(root):
    """(path, text) of every C++ and assembly file in runtime/ and pkg/, and
    of every Graphviz source in docs/diagrams/."""
    found = []
    for d, ends in CITING:
        for dirpath, _, filenames in os.walk(os.path.join(root, d)):
            found += [os.path.join(dirpath, f) for f in filenames
                      if f.endswith(ends)]
    for path in sorted(found, key=lambda p: os.path.split(p)):
        with open(path, encoding="utf-8") as fh:
            yield path, fh.read()


def searchable(path, text):
    """text as CITE reads it: in a .dot, a label's escaped line break (\\n,
    \\l, \\r) becomes two spaces, so "Go's wakep\\n(proc.go:2380)" is one
    citation with its line; offsets and line numbers stay those of text."""
    if path.endswith(".dot"):
        return re.sub(r"\\[nlr]", "  ", text)
    return text


def citations(root):
    """(path, line, name, release, tail) of every citation sources() has."""
    for path, text in sources(root):
        for m in CITE.finditer(searchable(path, text)):
            name = m.group("name").rstrip(".")
            at = (m.group("file"), int(m.group("line"))) \
                if m.group("at") else None
            yield (os.path.relpath(path, root),
                   text.count("\n", 0, m.start()) + 1, name,
                   m.group("ver"), m.group("tail"), at)


# docs/learning.md's table: "`schedule` (proc.go:3185)".
TABLE = re.compile(r"`(?P<name>\w+)` \((?P<file>[\w/]+\.(?:go|s)):"
                   r"(?P<line>\d+)\)")


def table_citations(root):
    """Citations in docs/learning.md's table, as citations() yields them."""
    path = os.path.join(root, "docs", "learning.md")
    if not os.path.isfile(path):
        return
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    for m in TABLE.finditer(text):
        yield ("docs/learning.md", text.count("\n", 0, m.start()) + 1,
               m.group("name"), None, None,
               (m.group("file"), int(m.group("line"))))


def add_lines(root, go):
    """Appends " (file:line)" to each citation without one that names one
    declaration; returns (added, left) citation counts."""
    added, left = 0, []
    for path, text in sources(root):
        out, pos = [], 0
        for m in CITE.finditer(searchable(path, text)):
            name = m.group("name").rstrip(".")
            if (m.group("at") or m.group("tail") or name in PROSE or
                    m.group("ver") and m.group("ver") != "1.19" or
                    name in NEWER_GO or re.search(r"\.(go|s)$", name) or
                    name in go.packages):
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            pkg = os.path.dirname(rel)[len("pkg/"):] \
                if rel.startswith("pkg/") else "runtime"
            where = go.locate(name, "windows" if "windows" in os.path.basename(path) else
                              "linux", pkg)
            line = text.count("\n", 0, m.start()) + 1
            if where is None:
                left.append(f"{os.path.relpath(path, root)}:{line}: "
                            f"Go's {name}")
                continue
            end = m.start("name") + len(name)
            out.append(text[pos:end])
            out.append(f" ({where[0]}:{where[1]})")
            pos = end
            added += 1
        if out:
            out.append(text[pos:])
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("".join(out))
    return added, left


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--go-src", default="/usr/lib/go-1.19/src")
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--require-lines", action="store_true",
                    help="report citations of a declaration without a line")
    ap.add_argument("--add-lines", action="store_true",
                    help="append the line to citations that lack one")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.go_src, "runtime")):
        print(f"check_go_mapping: SKIP: no Go source at {args.go_src} "
              f"(scripts/deps.sh installs golang-go, which brings Go 1.19's)")
        return SKIP
    go = GoSource(args.go_src)
    if args.add_lines:
        added, left = add_lines(args.root, go)
        for entry in left:
            print(f"{entry}: no single declaration; cite its line by hand")
        print(f"check_go_mapping: added {added} lines, {len(left)} left")
        return 0
    bad, checked, lined = [], 0, 0
    for path, line, name, ver, tail, at in itertools.chain(
            citations(args.root), table_citations(args.root)):
        if name in PROSE or ver and ver != "1.19" or name in NEWER_GO:
            continue
        checked += 1
        if not go.knows(name, prefix=tail is not None):
            bad.append(f"{path}:{line}: Go's {name}{tail or ''}: "
                       f"not in Go 1.19 ({', '.join(GO_DIRS)})")
        elif at:
            lined += 1
            if not os.path.isfile(os.path.join(args.go_src,
                                               go.resolve(at[0]))):
                bad.append(f"{path}:{line}: Go's {name} ({at[0]}:{at[1]}): "
                           f"no such file in Go 1.19")
            elif not go.inside(name, at[0], at[1], prefix=tail is not None):
                bad.append(f"{path}:{line}: Go's {name} ({at[0]}:{at[1]}): "
                           f"line {at[1]} of {go.resolve(at[0])} is not in "
                           f"{name}")
        elif (args.require_lines and not re.search(r"\.(go|s)$", name) and
              name not in go.packages and not tail):
            bad.append(f"{path}:{line}: Go's {name}: no (file:line)")
    for b in bad:
        print(b)
    print(f"check_go_mapping: {checked} citations of Go 1.19 checked "
          f"({lined} with a line), {len(bad)} not found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
