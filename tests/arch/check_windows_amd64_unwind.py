#!/usr/bin/env python3
"""tests/arch/check_windows_amd64_unwind.py: assembles the Windows amd64
trampolines (runtime/arch/sys_windows_amd64.S) with clang into a COFF object
and compares the SEH unwind data its .seh_* directives produced (.pdata and
.xdata, as llvm-objdump --unwind-info lists them) with the code itself, since
Windows' unwinder trusts the data and never reads the instructions. For each
of the three functions of runtime/arch/windows_trampolines.md it checks that:

  * one function-table entry begins at the function and ends after its last
    instruction (the ret), before the next function;
  * the prologue the unwind codes describe is the one in the code: each
    pushq of a non-volatile register is a UOP_PushNonVol of that register at
    the offset after the push, each subq $N, %rsp a UOP_AllocSmall (or
    AllocLarge) of N at the offset after it, in reverse order, and the
    recorded prologue size ends where the code's prologue does;
  * every return is preceded by the canonical epilogue Windows recognises:
    addq $N, %rsp with the same N, then the pops in reverse order;
  * rsp is 16-byte aligned after the prologue (return address included), so
    the calls inside see the alignment the ABI promises.

tests/os_windows_test.cc checks the same data at run time under Wine (a C++
exception thrown from inside a trampoline is caught by its caller). Exits
non-zero on any failure. Usage:
  check_windows_amd64_unwind.py [--clang clang-14] [--objdump llvm-objdump-14]
                                [--out DIR] [--src runtime/arch]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

FUNCS = ["gort_usleep2", "gort_usleep2HighRes", "gort_switchtothread"]


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (
            " ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def parse_unwind(text):
    """llvm-objdump --unwind-info: a list of entries {start, end, prolog,
    codes: [(offset, op, arg)]} in listing order."""
    entries = []
    cur = None
    off = lambda s: int(s, 16) if s else 0
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"Start Address: \.text(?: \+ 0x([0-9a-f]+))?$", line)
        if m:
            cur = {"start": off(m.group(1)), "end": None, "prolog": None,
                   "codes": []}
            entries.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"End Address: \.text(?: \+ 0x([0-9a-f]+))?$", line)
        if m:
            cur["end"] = off(m.group(1))
        m = re.match(r"Size of prolog: (\d+)$", line)
        if m:
            cur["prolog"] = int(m.group(1))
        m = re.match(r"0x([0-9a-f]+): (UOP_\w+)(?: (\S+))?", line)
        if m:
            cur["codes"].append((int(m.group(1), 16), m.group(2),
                                 m.group(3)))
    return entries


def parse_disassembly(text):
    """llvm-objdump -d (AT&T): function -> [(offset, mnemonic, operands)]."""
    funcs = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*(#.*)?$", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs


def check(arch_src, args):
    failures = []
    passes = [0]

    def ck(cond, what):
        if cond:
            passes[0] += 1
        else:
            failures.append(what)
        return cond

    obj = os.path.join(args.out, "sys_windows_amd64.obj")
    run([args.clang, "--target=x86_64-w64-windows-gnu", "-c", arch_src,
         "-o", obj])
    entries = parse_unwind(run([args.objdump, "--unwind-info", obj]))
    dis = parse_disassembly(run([args.objdump, "-d", "--no-show-raw-insn",
                                 obj]))
    starts = sorted(insns[0][0] for insns in dis.values() if insns)
    for f in FUNCS:
        insns = dis.get(f)
        if not ck(insns, "%s: no code" % f):
            continue
        start = insns[0][0]
        mine = [e for e in entries if e["start"] == start]
        if not ck(len(mine) == 1, "%s: %d function-table entries begin at "
                  "0x%x, want 1" % (f, len(mine), start)):
            continue
        e = mine[0]
        rets = [o for o, mn, _ in insns if mn == "retq"]
        ck(rets, "%s: no retq" % f)
        nxt = min([s for s in starts if s > start] or [1 << 62])
        ck(e["end"] is not None and rets and e["end"] > max(rets) and
           e["end"] <= nxt, "%s: entry ends at 0x%x, want after the ret at "
           "0x%x and not past the next function at 0x%x" %
           (f, e["end"] or 0, max(rets or [0]), nxt))
        # The prologue as the code has it.
        want = []
        pushed = []
        alloc = 0
        end = start
        for o, mn, ops in insns:
            nxt_off = next((o2 for o2, _, _ in insns if o2 > o), None)
            m = re.match(r"%(\w+)$", ops)
            if mn == "pushq" and m and not alloc:
                pushed.append(m.group(1).upper())
                want.append((nxt_off - start, "UOP_PushNonVol",
                             m.group(1).upper()))
            elif mn == "subq" and re.match(r"\$(\d+), %rsp$", ops):
                alloc = int(re.match(r"\$(\d+)", ops).group(1))
                op = "UOP_AllocSmall" if alloc <= 128 else "UOP_AllocLarge"
                want.append((nxt_off - start, op, str(alloc)))
            else:
                end = o
                break
        want.reverse()
        ck(e["codes"] == want, "%s: unwind codes %s, the code's prologue "
           "says %s" % (f, e["codes"], want))
        ck(e["prolog"] == end - start, "%s: prologue size %s, the code's "
           "prologue is %d bytes" % (f, e["prolog"], end - start))
        ck((8 + 8 * len(pushed) + alloc) % 16 == 0, "%s: rsp misaligned by "
           "%d after the prologue" % (f, (8 + 8 * len(pushed) + alloc) % 16))
        # Each epilogue undoes it, in the form Windows' unwinder recognises.
        epi = ([("addq", "$%d, %%rsp" % alloc)] if alloc else []) + \
            [("popq", "%" + r.lower()) for r in reversed(pushed)]
        for r in rets:
            i = [o for o, _, _ in insns].index(r)
            got = [(mn, ops) for _, mn, ops in insns[i - len(epi):i]]
            ck(got == epi, "%s: the epilogue before the ret at 0x%x is %s, "
               "want %s" % (f, r, got, epi))
    return failures, passes[0]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clang", default="clang-14")
    ap.add_argument("--objdump", default="llvm-objdump-14")
    ap.add_argument("--src", default=os.path.join(here, "..", "..", "runtime",
                                                  "arch"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.out is None:
        args.out = tempfile.mkdtemp(prefix="gort-windows-amd64-")
    os.makedirs(args.out, exist_ok=True)
    try:
        failures, passes = check(os.path.join(args.src,
                                              "sys_windows_amd64.S"), args)
    except RuntimeError as e:
        print("FAIL windows/amd64 unwind data: %s" % e)
        return 1
    if failures:
        print("FAIL windows/amd64 unwind data: %d of %d checks failed" %
              (len(failures), len(failures) + passes))
        for f in failures:
            print("  - " + f)
        return 1
    print("ok   windows/amd64 unwind data: %d checks "
          "(sys_windows_amd64.S)" % passes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
