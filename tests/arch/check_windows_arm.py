#!/usr/bin/env python3
"""tests/arch/check_windows_arm.py: assembles the Windows ARM trampolines
(runtime/arch/sys_windows_arm.S, Thumb-2, and sys_windows_arm64.S) with clang
into COFF objects and reads them back with llvm-objdump, since they cannot run
on this machine. For each object it checks that:

  * the three functions of the contract (runtime/arch/windows_trampolines.md)
    are defined, global, typed as functions, in .text; the only undefined
    symbols are the three entry-point globals;
  * every call is indirect through the global of the right API, in the order
    the contract gives, with the right relocations: arm64 adrp
    (IMAGE_REL_ARM64_PAGEBASE_REL21) + ldr (IMAGE_REL_ARM64_PAGEOFFSET_12L)
    of the global, then blr of the loaded register; arm movw/movt
    (IMAGE_REL_ARM_MOV32T) of the global's address, ldr of it, then blx;
    there is no other relocation and no direct call or branch, except the
    one the contract needs: in gort_usleep2HighRes, a cbz of
    SetWaitableTimer's result (r0 / w0) forward past the wait, to the
    epilogue, with the stack as it is there;
  * gort_usleep2HighRes returns 1 after the wait (a constant written after
    the last call, never the wait's NTSTATUS: STATUS_SUCCESS is 0) and, on
    the branch, SetWaitableTimer's 0 untouched, without waiting;
  * the stack stays aligned (8 bytes on arm, 16 on arm64) at every call and
    is back where it started at the return, fifth and sixth arguments are
    stored at [sp] and [sp, #4] before SetWaitableTimer on arm;
  * callee-saved registers (r4-r11; x19-x30) are written only once saved, and
    x18 (the TEB on Windows) is never used;
  * arm64: .pdata has one unwind entry per function.

Exits non-zero on any failure. Usage:
  check_windows_arm.py [--clang clang-14] [--objdump llvm-objdump-14]
                       [--out DIR] [--src runtime/arch]
"""
import argparse
import os
import re
import subprocess
import sys

FUNCS = ["gort_usleep2", "gort_usleep2HighRes", "gort_switchtothread"]
GLOBALS = ["gort_SetWaitableTimer", "gort_NtWaitForSingleObject",
           "gort_SwitchToThread"]
# The APIs each function calls, in order.
CALLS = {
    "gort_usleep2": ["gort_NtWaitForSingleObject"],
    "gort_usleep2HighRes": ["gort_SetWaitableTimer",
                            "gort_NtWaitForSingleObject"],
    "gort_switchtothread": ["gort_SwitchToThread"],
}

TARGETS = {
    "arm": {
        "file": "sys_windows_arm.S",
        "triple": "thumbv7-w64-windows-gnu",
        "format": "coff-arm",
        "align": 8,
    },
    "arm64": {
        "file": "sys_windows_arm64.S",
        "triple": "aarch64-w64-windows-gnu",
        "format": "coff-arm64",
        "align": 16,
    },
}


class Checker:
    def __init__(self, arch):
        self.arch = arch
        self.failures = []
        self.passes = 0

    def check(self, cond, what):
        if cond:
            self.passes += 1
        else:
            self.failures.append(what)
        return cond


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (
            " ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


# ---- llvm-objdump output parsing -------------------------------------------

def parse_symbols(text):
    """COFF symbol table rows of llvm-objdump -t: name -> (sec, ty, scl)."""
    syms = {}
    row = re.compile(r"^\[\s*\d+\]\(sec\s+(-?\d+)\)\(fl 0x[0-9a-f]+\)"
                     r"\(ty\s+([0-9a-f]+)\)\(scl\s+(\d+)\) \(nx \d+\) "
                     r"0x([0-9a-f]+) (\S+)$")
    for line in text.splitlines():
        m = row.match(line.strip())
        if m:
            syms[m.group(5)] = (int(m.group(1)), int(m.group(2), 16),
                                int(m.group(3)), int(m.group(4), 16))
    return syms


def parse_disassembly(text):
    """llvm-objdump -d -r --no-show-raw-insn: function -> list of
    (offset, mnemonic, operands, [(reloc_type, symbol)])."""
    funcs = {}
    cur = None
    head = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
    insn = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")
    reloc = re.compile(r"^\s*([0-9a-f]+):\s+(IMAGE_REL_\S+)\s+(\S+)$")
    for line in text.splitlines():
        m = head.match(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = reloc.match(line)
        if m:
            off = int(m.group(1), 16)
            for ins in reversed(cur):
                if ins[0] <= off:
                    ins[3].append((m.group(2), m.group(3)))
                    break
            continue
        m = insn.match(line)
        if m:
            ops = re.sub(r"\s*(//|@).*$", "", m.group(3))
            cur.append((int(m.group(1), 16), m.group(2), ops, []))
    return funcs


# ---- the result register ---------------------------------------------------

class ResultFlow:
    """Follows the result register (r0 on arm, w0/x0 on arm64) through one
    function walked in a straight line: its value on the fall-through path,
    and on the path of the one branch the contract allows (cbz of
    SetWaitableTimer's result forward to the epilogue), which joins the
    straight path at its target."""

    def __init__(self, ck, name, regs, sp_of):
        self.ck, self.name, self.regs = ck, name, regs
        self.value = ("unset",)
        self.branch = None
        self.sp_of = sp_of

    def called(self, api):
        self.value = ("ret", api)

    def wrote(self, mn, ops):
        m = re.match(r"\w+, #(\d+)$", ops)
        if mn.split(".")[0] in ("mov", "movs") and m:
            self.value = ("const", int(m.group(1)))
        else:
            self.value = ("other", mn)
        if self.branch is not None and self.branch["joined"]:
            self.branch["value"] = self.value

    def cbz(self, where, off, ops, sp, calls):
        m = re.match(r"(\w+), 0x([0-9a-f]+)", ops)
        ok = self.ck.check(m is not None and m.group(1) in self.regs,
                           "%s: branch on something other than the result "
                           "register" % where)
        ok = ok and self.ck.check(
            self.value == ("ret", "gort_SetWaitableTimer"),
            "%s: cbz does not test SetWaitableTimer's result (the register "
            "holds %s)" % (where, self.value))
        ok = ok and self.ck.check(self.branch is None,
                                  "%s: a second branch" % where)
        if not ok:
            return
        target = int(m.group(2), 16)
        self.ck.check(target > off, "%s: branch backwards" % where)
        self.branch = {"target": target, "sp": sp, "calls": list(calls),
                       "value": ("zero", self.value[1]), "joined": False,
                       "where": where}

    def at(self, off, sp):
        b = self.branch
        if b is None or b["joined"] or off != b["target"]:
            return
        b["joined"] = True
        self.ck.check(sp == b["sp"], "%s: stack differs at the branch "
                      "target (%d, %d at the branch)" % (b["where"], sp,
                                                         b["sp"]))

    def finish(self):
        b = self.branch
        if b is not None:
            self.ck.check(b["joined"], "%s: branch target 0x%x is not an "
                          "instruction of %s before its return" %
                          (b["where"], b["target"], self.name))
        return {"value": self.value, "branch": b}


# ---- per-architecture instruction semantics ---------------------------------

def arm_reglist(ops):
    m = re.search(r"\{([^}]*)\}", ops)
    regs = []
    for part in m.group(1).split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-")
            regs += ["r%d" % i for i in range(int(a[1:]), int(b[1:]) + 1)]
        else:
            regs.append(part)
    return regs


def first_reg(ops):
    m = re.match(r"\s*([a-z]+\d*)", ops)
    return m.group(1) if m else None


def walk_arm(ck, name, insns, align):
    """Straight-line walk: sp offset, calls, saved registers."""
    sp = 0
    saved = set()
    calls = []
    stored_stack_args = set()
    callee_saved = {"r%d" % i for i in range(4, 12)}
    pending = {}  # register -> global whose address / value it holds
    returned = False
    flow = ResultFlow(ck, name, ("r0",), None)
    for off, mn, ops, rel in insns:
        base = mn.split(".")[0]
        where = "%s+0x%x: %s %s" % (name, off, mn, ops)
        flow.at(off, sp)
        ck.check(not returned, "%s: code after the return" % where)
        if base == "cbz":
            flow.cbz(where, off, ops, sp, [c for c, _ in calls])
        elif base == "push":
            regs = arm_reglist(ops)
            saved |= set(regs)
            sp -= 4 * len(regs)
        elif base == "pop":
            regs = arm_reglist(ops)
            sp += 4 * len(regs)
            if "pc" in regs:
                ck.check(sp == 0, "%s: sp off by %d at the return" %
                         (where, sp))
                returned = True
        elif base in ("sub", "add") and re.match(r"sp, (sp, )?#\d+$", ops):
            n = int(ops.rsplit("#", 1)[1])
            sp += -n if base == "sub" else n
        elif base == "bx" and ops == "lr":
            ck.check(sp == 0, "%s: sp off by %d at the return" % (where, sp))
            returned = True
        elif base == "movw":
            r = first_reg(ops)
            types = [t for t, _ in rel]
            if rel:
                ck.check(types == ["IMAGE_REL_ARM_MOV32T"],
                         "%s: relocation %s, want IMAGE_REL_ARM_MOV32T" %
                         (where, types))
                pending[r] = ("addr", rel[0][1])
        elif base == "movt":
            r = first_reg(ops)
            ck.check(not rel, "%s: unexpected relocation" % where)
            if r in pending and pending[r][0] == "addr":
                pending[r] = ("addr+movt", pending[r][1])
        elif base == "ldr" and re.match(r"(\w+), \[(\w+)\]$", ops):
            dst, src = re.match(r"(\w+), \[(\w+)\]$", ops).groups()
            if src in pending and pending[src][0] == "addr+movt":
                pending[dst] = ("value", pending[src][1])
            elif dst in pending:
                del pending[dst]
        elif base == "blx":
            r = ops.strip()
            ck.check(sp % align == 0, "%s: sp misaligned by %d at a call" %
                     (where, sp % align))
            if ck.check(r in pending and pending[r][0] == "value",
                        "%s: call target not loaded from an entry-point "
                        "global (movw/movt MOV32T + ldr)" % where):
                calls.append((pending[r][1], set(stored_stack_args)))
                flow.called(pending[r][1])
            pending.clear()
        elif base in ("bl", "b", "cbz", "cbnz", "bx") or \
                re.match(r"^b(eq|ne|cs|cc|mi|pl|hi|ls|ge|lt|gt|le)$", base):
            ck.check(False, "%s: branch not allowed (direct calls and "
                     "control flow are outside the contract)" % where)
        elif base in ("str", "strd") and "[sp" in ops:
            m = re.search(r"\[sp(?:, #(\d+))?\]", ops)
            o = int(m.group(1) or 0)
            width = 8 if base == "strd" else 4
            for k in range(o, o + width, 4):
                stored_stack_args.add(k)
        else:
            if rel:
                ck.check(False, "%s: unexpected relocation %s" % (where, rel))
        # Writes to callee-saved registers need a save first.
        if base not in ("push", "pop", "str", "strd", "blx", "bx", "cmp",
                        "tst", "cbz"):
            d = first_reg(ops)
            if d == "r0":
                flow.wrote(mn, ops)
            if d in callee_saved:
                ck.check(d in saved, "%s: writes %s without saving it" %
                         (where, d))
            if d == "sp" and not (base in ("sub", "add")):
                ck.check(False, "%s: sp changed in a way the checker does "
                         "not follow" % where)
    ck.check(returned, "%s: no return found" % name)
    return calls, flow.finish()


def walk_arm64(ck, name, insns, align):
    sp = 0
    saved = set()
    calls = []
    callee_saved = {"x%d" % i for i in range(19, 31)} | {"x29", "x30"}
    pending = {}
    returned = False
    flow = ResultFlow(ck, name, ("w0", "x0"), None)
    for off, mn, ops, rel in insns:
        where = "%s+0x%x: %s %s" % (name, off, mn, ops)
        flow.at(off, sp)
        ck.check(not returned, "%s: code after the return" % where)
        ck.check(not re.search(r"\b[wx]18\b", ops),
                 "%s: uses x18 (the TEB on Windows)" % where)
        m = re.match(r"(\w+), (\w+), \[sp, #(-?\d+)\]!$", ops)  # pre-index
        m2 = re.match(r"(\w+), (\w+), \[sp\], #(\d+)$", ops)    # post-index
        m3 = re.match(r"(\w+), \[sp(?:, #(\d+))?\]$", ops)
        if mn == "cbz":
            flow.cbz(where, off, ops, sp, [c for c, _ in calls])
        elif mn == "stp" and m:
            saved |= {m.group(1), m.group(2)}
            sp += int(m.group(3))
        elif mn == "ldp" and m2:
            sp += int(m2.group(3))
        elif mn in ("sub", "add") and re.match(r"sp, sp, #\d+$", ops):
            n = int(ops.rsplit("#", 1)[1])
            sp += -n if mn == "sub" else n
        elif mn == "str" and m3:
            if m3.group(1) in callee_saved:
                saved.add(m3.group(1))
        elif mn == "ret":
            ck.check(sp == 0, "%s: sp off by %d at the return" % (where, sp))
            returned = True
        elif mn == "adrp":
            types = [t for t, _ in rel]
            if ck.check(types == ["IMAGE_REL_ARM64_PAGEBASE_REL21"],
                        "%s: relocation %s, want PAGEBASE_REL21" %
                        (where, types)):
                pending[first_reg(ops)] = ("page", rel[0][1])
        elif mn == "ldr" and re.match(r"(\w+), \[(\w+)(, #\d+)?\]$", ops) \
                and rel:
            dst, src = re.match(r"(\w+), \[(\w+)", ops).groups()
            types = [t for t, _ in rel]
            ok = ck.check(types == ["IMAGE_REL_ARM64_PAGEOFFSET_12L"],
                          "%s: relocation %s, want PAGEOFFSET_12L" %
                          (where, types))
            if ok and src in pending and pending[src] == ("page", rel[0][1]):
                pending[dst] = ("value", rel[0][1])
            else:
                ck.check(False, "%s: ldr :lo12: does not pair with the adrp "
                         "of the same global" % where)
        elif mn == "blr":
            r = ops.strip()
            ck.check(sp % align == 0, "%s: sp misaligned by %d at a call" %
                     (where, sp % align))
            if ck.check(r in pending and pending[r][0] == "value",
                        "%s: call target not loaded from an entry-point "
                        "global (adrp + ldr :lo12:)" % where):
                calls.append((pending[r][1], None))
                flow.called(pending[r][1])
            pending.clear()
        elif mn in ("bl", "b", "br", "cbz", "cbnz", "tbz", "tbnz") or \
                mn.startswith("b."):
            ck.check(False, "%s: branch not allowed (direct calls and "
                     "control flow are outside the contract)" % where)
        elif rel:
            ck.check(False, "%s: unexpected relocation %s" % (where, rel))
        if mn not in ("stp", "str", "ldp", "ret", "blr", "cmp", "tst",
                      "cbz") and \
                not (mn == "ldr" and m3 and m3.group(1) in saved):
            d = first_reg(ops)
            if d in ("w0", "x0"):
                flow.wrote(mn, ops)
            if d in callee_saved:
                ck.check(d in saved, "%s: writes %s without saving it" %
                         (where, d))
            if d == "sp" and mn not in ("sub", "add"):
                ck.check(False, "%s: sp changed in a way the checker does "
                         "not follow" % where)
    ck.check(returned, "%s: no return found" % name)
    return calls, flow.finish()


# ---- the checks ------------------------------------------------------------

def check_highres_result(ck, arch, result):
    """gort_usleep2HighRes returns 1 once it has waited, and
    SetWaitableTimer's 0 without waiting when that call failed."""
    ck.check(result["value"] == ("const", 1),
             "%s: gort_usleep2HighRes returns %s after the wait, want the "
             "constant 1" % (arch, result["value"]))
    b = result["branch"]
    if not ck.check(b is not None,
                    "%s: gort_usleep2HighRes does not test SetWaitableTimer's "
                    "result (no cbz): a failed SetWaitableTimer would wait "
                    "forever" % arch):
        return
    ck.check(b["calls"] == ["gort_SetWaitableTimer"],
             "%s: the branch on SetWaitableTimer's result is taken after %s"
             % (arch, b["calls"]))
    ck.check(b["value"] == ("zero", "gort_SetWaitableTimer"),
             "%s: on the failure branch gort_usleep2HighRes returns %s, want "
             "SetWaitableTimer's 0 untouched" % (arch, b["value"]))


def check_target(arch, args):
    t = TARGETS[arch]
    ck = Checker(arch)
    src = os.path.join(args.src, t["file"])
    obj = os.path.join(args.out, "sys_windows_%s.obj" % arch)
    run([args.clang, "--target=" + t["triple"], "-c", src, "-o", obj])

    header = run([args.objdump, "-h", obj])
    ck.check(("file format " + t["format"]) in header,
             "%s: not a %s object" % (obj, t["format"]))

    syms = parse_symbols(run([args.objdump, "-t", obj]))
    for f in FUNCS:
        if ck.check(f in syms, "%s: symbol %s missing" % (arch, f)):
            sec, ty, scl, _ = syms[f]
            ck.check(sec == 1 and scl == 2 and ty == 0x20,
                     "%s: %s is not a global function in .text "
                     "(sec %d, ty 0x%x, scl %d)" % (arch, f, sec, ty, scl))
    undefined = sorted(n for n, (sec, _, scl, _) in syms.items()
                       if sec == 0 and scl == 2)
    ck.check(undefined == sorted(GLOBALS),
             "%s: undefined symbols %s, want exactly %s" %
             (arch, undefined, sorted(GLOBALS)))

    dis = parse_disassembly(run([args.objdump, "-d", "-r",
                                 "--no-show-raw-insn", obj]))
    walk = walk_arm if arch == "arm" else walk_arm64
    for f in FUNCS:
        if not ck.check(f in dis, "%s: no code for %s" % (arch, f)):
            continue
        calls, result = walk(ck, f, dis[f], t["align"])
        ck.check([c for c, _ in calls] == CALLS[f],
                 "%s: %s calls %s, want %s" %
                 (arch, f, [c for c, _ in calls], CALLS[f]))
        if f == "gort_usleep2HighRes":
            check_highres_result(ck, arch, result)
        else:
            ck.check(result["branch"] is None,
                     "%s: %s branches" % (arch, f))
        if arch == "arm" and f == "gort_usleep2HighRes" and calls:
            stored = calls[0][1]
            ck.check(0 in stored and 4 in stored,
                     "arm: SetWaitableTimer's fifth and sixth arguments are "
                     "not stored at [sp] and [sp, #4] before the call")

    if arch == "arm64":
        # One .pdata entry (begin, unwind data) per function, each beginning
        # at a function.
        dump = run([args.objdump, "-s", "-j", ".pdata", obj])
        words = []
        for line in dump.splitlines():
            m = re.match(r"^\s*[0-9a-f]{4,} ((?:[0-9a-f]{8} ?){1,4})", line)
            if m:
                words += [int.from_bytes(bytes.fromhex(w), "little")
                          for w in m.group(1).split()]
        begins = sorted(words[0::2])
        want = sorted(syms[f][3] for f in FUNCS if f in syms)
        ck.check(begins == want,
                 "arm64: .pdata entries begin at %s, want the functions at "
                 "%s" % ([hex(b) for b in begins], [hex(w) for w in want]))
    return ck


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clang", default="clang-14")
    ap.add_argument("--objdump", default="llvm-objdump-14")
    ap.add_argument("--src", default=os.path.join(here, "..", "..", "runtime",
                                                  "arch"))
    ap.add_argument("--out", default=None)
    ap.add_argument("arch", nargs="*", default=["arm", "arm64"])
    args = ap.parse_args()
    if args.out is None:
        import tempfile
        args.out = tempfile.mkdtemp(prefix="gort-windows-arm-")
    os.makedirs(args.out, exist_ok=True)

    failed = 0
    for arch in args.arch:
        try:
            ck = check_target(arch, args)
        except RuntimeError as e:
            print("FAIL windows/%s: %s" % (arch, e))
            failed += 1
            continue
        if ck.failures:
            failed += 1
            print("FAIL windows/%s: %d of %d checks failed" %
                  (arch, len(ck.failures), len(ck.failures) + ck.passes))
            for f in ck.failures:
                print("  - " + f)
        else:
            print("ok   windows/%s: %d checks (%s)" %
                  (arch, ck.passes, TARGETS[arch]["file"]))
    print("%d passed, %d failed" % (len(args.arch) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
