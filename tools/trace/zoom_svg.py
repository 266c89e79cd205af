#!/usr/bin/env python3
"""Draws one stretch of a gort execution trace as an SVG timeline.

Made for docs/images/ping-roundtrip.svg: one ChanToSyscallPing round trip,
from one of sysmon's retakes to the next, zoomed in far enough to read
every slice and event (gort-trace html shows the whole trace at once).
The lanes are the trace's P and M tracks that have something in the
window; slices are labelled where they are wide enough, instants are ticks
with their names, unblocks are arrows from the waker to the woken
goroutine's next run. The SVG names, in a comment, the runtime trace
events it shows (checked by tools/check_diagrams.py).

Usage: zoom_svg.py TRACE.json OUT.svg [--retake N] [--margin US]
"""
import argparse
import json
import sys
from html import escape

# Slice categories and instant categories -> (colour, traceEv names).
SLICES = {
    "goroutine": ("#43a047", ["GoStart"]),
    "syscall": ("#e67e22", ["GoSysCall", "GoSysExit"]),
    "MPark": ("#b0bec5", ["MPark", "MUnpark"]),
    "usleep": ("#8e44ad", ["Usleep"]),
    "spinning": ("#f1c40f", ["SpinStart", "SpinStop"]),
}
INSTANTS = {
    "ProcRetake": "#d35400",
    "GoUnblock": "#2980b9",
    "GoBlock": "#c0392b",
    "GoCreate": "#27ae60",
    "GoEnd": "#555555",
    "Steal": "#16a085",
    "PreemptReq": "#7f8c8d",
    "NetpollBlock": "#34495e",
    "NetpollWake": "#34495e",
}

LANE_H, LABEL_W, WIDTH, TOP = 46, 150, 1100, 58


def load(path):
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    events = data["traceEvents"] if isinstance(data, dict) else data
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    return [e for e in events if e.get("ph") != "M"], names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--retake", type=int, default=50,
                    help="start at the Nth ProcRetake (default 50)")
    ap.add_argument("--margin", type=float, default=6,
                    help="microseconds shown before and after")
    args = ap.parse_args()
    events, names = load(args.trace)
    retakes = sorted(e["ts"] for e in events if e.get("cat") == "ProcRetake")
    if len(retakes) < args.retake + 2:
        sys.exit(f"zoom_svg: only {len(retakes)} retakes in {args.trace}")
    t0 = retakes[args.retake] - args.margin
    t1 = retakes[args.retake + 1] + args.margin

    def visible(e):
        end = e["ts"] + e.get("dur", 0)
        return end >= t0 and e["ts"] <= t1

    shown = [e for e in events if visible(e) and e.get("ph") in "Xi"]
    lanes = sorted({(e["pid"], e["tid"]) for e in shown})
    row = {lane: i for i, lane in enumerate(lanes)}
    scale = (WIDTH - LABEL_W - 20) / (t1 - t0)

    def x(ts):
        return LABEL_W + (min(max(ts, t0), t1) - t0) * scale

    height = TOP + LANE_H * len(lanes) + 40
    cats = set()
    out = []
    add = out.append
    add(f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{height}" font-family="DejaVu Sans, sans-serif" '
        f'font-size="11">')
    add('<rect width="100%" height="100%" fill="white"/>')
    add('<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="7" '
        'refY="4" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#2980b9"/>'
        '</marker></defs>')
    add(f'<text x="{WIDTH / 2}" y="18" text-anchor="middle" font-size="13">'
        f'One ChanToSyscallPing round trip, from one sysmon retake to the '
        f'next ({t1 - t0:.0f} µs)</text>')
    # Time axis: a tick every 10 us.
    step = 10
    origin = retakes[args.retake]
    tick = origin - step * int((origin - t0) // step)
    while tick < t1:
        add(f'<line x1="{x(tick):.1f}" y1="{TOP - 14}" x2="{x(tick):.1f}" '
            f'y2="{height - 30}" stroke="#eeeeee"/>')
        add(f'<text x="{x(tick):.1f}" y="{TOP - 18}" text-anchor="middle" '
            f'fill="#777" font-size="9">{tick - origin:+.0f} µs'
            f'</text>')
        tick += step
    for lane, i in row.items():
        y = TOP + i * LANE_H
        name = names.get(lane) or f"{'P' if lane[0] == 1 else 'M'}{lane[1]}"
        group = "P" if lane[0] == 1 else "M"
        add(f'<text x="8" y="{y + 24}" font-weight="bold">{escape(name)}'
            f'</text><text x="8" y="{y + 37}" fill="#777" font-size="9">'
            f'{"processor" if group == "P" else "thread"}</text>')
        add(f'<line x1="{LABEL_W}" y1="{y + LANE_H - 4}" x2="{WIDTH - 20}" '
            f'y2="{y + LANE_H - 4}" stroke="#dddddd"/>')
    for e in shown:
        if e["ph"] != "X":
            continue
        cat = e.get("cat", "")
        colour = SLICES.get(cat, ("#95a5a6", []))[0]
        cats.add(cat)
        y = TOP + row[(e["pid"], e["tid"])] * LANE_H
        top, h = (y + 8, 26) if cat == "goroutine" else (y + 14, 16)
        xa, xb = x(e["ts"]), x(e["ts"] + e.get("dur", 0))
        w = max(xb - xa, 1.5)
        label = e.get("name", "")
        end = e.get("args", {}).get("end")
        tip = label + (f" (until {end})" if end else "") + \
            f", {e.get('dur', 0):.1f} µs"
        add(f'<rect x="{xa:.1f}" y="{top}" width="{w:.1f}" height="{h}" '
            f'fill="{colour}" rx="2"><title>{escape(tip)}</title></rect>')
        text = label + (f" → {end}" if end else "")
        if w > 7 * len(text):
            add(f'<text x="{xa + 3:.1f}" y="{top + h / 2 + 4}" fill="white">'
                f'{escape(text)}</text>')
        elif w > 7 * len(label):
            add(f'<text x="{xa + 3:.1f}" y="{top + h / 2 + 4}" fill="white">'
                f'{escape(label)}</text>')
    flows = {}
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = e
    labelled = []
    for e in shown:
        if e["ph"] != "i":
            continue
        cat = e.get("cat", "")
        cats.add(cat)
        y = TOP + row[(e["pid"], e["tid"])] * LANE_H
        xi = x(e["ts"])
        colour = INSTANTS.get(cat, "#c0392b")
        add(f'<line x1="{xi:.1f}" y1="{y + 4}" x2="{xi:.1f}" y2="{y + 40}" '
            f'stroke="{colour}" stroke-width="2"><title>'
            f'{escape(e.get("name", ""))}</title></line>')
        # Stagger labels that would overlap on the same lane.
        level = sum(1 for (lx, ly) in labelled if ly == y and abs(lx - xi) < 90)
        labelled.append((xi, y))
        add(f'<text x="{xi + 3:.1f}" y="{y + 4 + 9 * (level + 1)}" '
            f'fill="{colour}" font-size="9">{escape(e.get("name", ""))}</text>')
    for f in flows.values():
        # An arrow with at least one end in the window (clamped to it).
        if "s" in f and "f" in f and (visible(f["s"]) or visible(f["f"])) \
                and (f["s"]["pid"], f["s"]["tid"]) in row \
                and (f["f"]["pid"], f["f"]["tid"]) in row:
            s, d = f["s"], f["f"]
            ys = TOP + row.get((s["pid"], s["tid"]), 0) * LANE_H + 40
            yd = TOP + row.get((d["pid"], d["tid"]), 0) * LANE_H + 40
            add(f'<path d="M{x(s["ts"]):.1f},{ys} C{x(s["ts"]) + 40:.1f},'
                f'{ys + 14} {x(d["ts"]) - 40:.1f},{yd + 14} {x(d["ts"]):.1f},'
                f'{yd}" fill="none" stroke="#2980b9" stroke-dasharray="4,3" '
                f'marker-end="url(#arrow)"/>')
    legend = [("goroutine running", "#43a047"), ("syscall", "#e67e22"),
              ("M parked", "#b0bec5"), ("sysmon usleep", "#8e44ad"),
              ("retake", "#d35400"), ("unblock (arrow: to its next run)",
                                      "#2980b9"), ("block", "#c0392b")]
    lx = LABEL_W
    for text, colour in legend:
        add(f'<rect x="{lx}" y="{height - 22}" width="10" height="10" '
            f'fill="{colour}"/><text x="{lx + 14}" y="{height - 13}" '
            f'font-size="10">{escape(text)}</text>')
        lx += 24 + 6.2 * len(text)
    code = sorted({n for c in cats for n in SLICES.get(c, (None, []))[1]} |
                  {c for c in cats if c in INSTANTS})
    add(f'<!-- code: {" ".join(code)} -->')
    add("</svg>")
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")
    print(f"wrote {args.out}: {t1 - t0:.0f} us, {len(lanes)} lanes, "
          f"{len(shown)} events")


if __name__ == "__main__":
    main()
