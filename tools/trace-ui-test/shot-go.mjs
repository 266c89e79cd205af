// tools/trace-ui-test/shot-go.mjs: a screenshot of a few ChanToSyscallPing
// round trips in `go tool trace`'s timeline (/trace, served on loopback), for
// docs/results/trace-side-by-side-<cpu>.md (scripts/trace-side-by-side.sh).
// It opens the timeline in Debian's headless Chromium, checks the model as
// check-go.mjs does, hides the viewer's panels around the tracks, finds the
// round trips on the P lane (each from a waiter's run that sysmon's retake
// ends to the next) and zooms the viewer
// (its own display transform, what its w/s/a/d keys move) onto ROUNDTRIPS
// of them from the middle of the run, saves the screenshot of the tracks
// (checked not blank) and writes SUMMARY: one line of
// what the whole trace's round trips show of sysmon's retake, as
// tab-separated fields:
//   runs          the waiter's runs on the P lane (slices of the goroutine
//                 named NAME: one or more a round trip)
//   retaken       those that ended in their syscall (the last event a
//                 syscall, the end without a stack: GoSysBlock, the P taken
//                 from it; the goroutine runs again) with sysmon taking the
//                 P: the next
//                 goroutine on the P had not been in a syscall itself
//   by exit       those that ended in their syscall with the P going to a
//                 goroutine (the waiter itself or the other) whose previous
//                 run had ended in a syscall: taken as that syscall returned
//                 (exitsyscall), not by sysmon
//   moved         retakes after which the P's next `proc start` names
//                 another thread (its ThreadID arg) than the one the waiter
//                 ran on: the P handed to another M
//   held          µs from the syscall event to sysmon's retake: the P held
//                 by a goroutine blocked in a syscall (median, min, max)
//   handoff       µs from the retake to the next goroutine's start on the
//                 P: another M taking the P and running it (median, min,
//                 max)
//   picture       the screenshot's time span, µs, and the waiter's runs in it
//
// Usage: node shot-go.mjs URL SCREENSHOT.png NAME ROUNDTRIPS SUMMARY
import { writeFileSync } from 'node:fs';

import { check, finish, withPage } from './browser.mjs';
import { checkModel, checkNotBlank, nextFrames, openTimeline } from './go-viewer.mjs';

const [base, shot, name, nArg, summary] = process.argv.slice(2);
const n = Number(nArg);
if (!base || !shot || !name || !(n >= 1) || !summary) {
  console.error('usage: node shot-go.mjs URL SCREENSHOT.png NAME ROUNDTRIPS SUMMARY');
  process.exit(2);
}

// roundTrips reads the P lane's slices from the viewer's model (times in
// ms, as the viewer keeps them): the waiter's runs, and for each whether
// it ended in its syscall, after how long, and when the P ran next.
function roundTrips(pattern) {
  const model = document.getElementById('trace-viewer').model;
  let lane;
  for (const p of model.getAllProcesses()) {
    for (const t of Object.values(p.threads)) {
      if (t.name === 'Proc 0') lane = t;
    }
  }
  if (!lane) return null;
  const all = lane.sliceGroup.slices;
  const runs = all.filter((s) => s.duration > 0).sort((a, b) => a.start - b.start);
  const instants = all.filter((s) => s.duration === 0);
  const re = new RegExp(pattern, 'i');
  const gid = (s) => s.title.split(' ')[0];
  // inSyscall: the syscall event a run ended inside, if any: the run's
  // last event is a syscall and its end has no stack (GoSysBlock; a block
  // on a channel has one) and is not the goroutine's end (GoEnd, which
  // has none either: it runs no more).
  const inSyscall = (s) => {
    const end = s.start + s.duration;
    const inside = instants.filter((e) => e.start >= s.start && e.start < end)
      .sort((a, b) => a.start - b.start);
    const last = inside[inside.length - 1];
    const again = runs.some((r) => r.start >= end && gid(r) === gid(s));
    return last?.title === 'syscall' && !s.endStackFrame && again ? last : null;
  };
  // threadOf: the ThreadID (the M) of the last `proc start` in [from, to).
  const starts = instants.filter((e) => e.title === 'proc start')
    .sort((a, b) => a.start - b.start);
  const threadOf = (from, to) => starts.filter((e) => e.start >= from && e.start < to)
    .pop()?.args?.ThreadID;
  const out = [];
  runs.forEach((s, i) => {
    if (!re.test(s.title)) return;
    const end = s.start + s.duration;
    const sys = inSyscall(s);
    const next = runs[i + 1];
    // Who took the P from the syscall: the next goroutine's syscall exit
    // (exitsyscall takes its old P back from a syscall) if that goroutine,
    // the waiter itself or the other, had last stopped in a syscall; else
    // sysmon.
    const before = next && runs.slice(0, i + 1).reverse().find((r) => gid(r) === gid(next));
    const byExit = !!(sys && before && inSyscall(before));
    out.push({
      start: s.start,
      end,
      title: s.title,
      inSyscall: !!sys,
      retaken: !!sys && !byExit,
      byExit,
      held: sys ? end - sys.start : null,
      // The P's thread while the waiter ran, and the one it started on
      // between the waiter's end and the next run.
      thread: threadOf(-Infinity, s.start + 1e-9),
      nextThread: next ? threadOf(end, next.start + 1e-9) : undefined,
      handoff: next ? next.start - end : null,
      next: next?.title ?? null,
    });
  });
  const lastRun = runs[runs.length - 1];
  return { trips: out, laneEnd: lastRun ? lastRun.start + lastRun.duration : 0 };
}

// zoom sets the viewer's display transform so that [min, max] (ms) spans
// the track canvas, as its own initial view spans the whole trace.
function zoom([min, max]) {
  const tv = document.getElementById('trace-viewer').trackView;
  const vp = tv.viewport;
  const dt = vp.currentDisplayTransform.clone();
  dt.xSetWorldBounds(min, max, vp.modelTrackContainer.canvas.width);
  vp.setDisplayTransformImmediately(dt);
}

// tidy leaves the timeline alone on the page: it hides the viewer's
// polyfill warning, its empty analysis panel and side tabs, the mouse-mode
// palette and the hint text, lets the tracks take the room (a resize event:
// the canvas follows), and returns the tracks' bottom edge in pixels.
function tidy() {
  for (const q of ['#polyfill-warning', '#analysis', '#drag_handle',
    'tr-ui-side-panel-container', 'tr-ui-b-mouse-mode-selector', '#hint_text']) {
    const el = document.querySelector(q);
    if (el) el.style.display = 'none';
  }
  window.dispatchEvent(new Event('resize'));
  let bottom = 0;
  // (The page's web-components polyfill returns a list for...of cannot walk.)
  const tracks = document.querySelectorAll('.process-track-base');
  for (let i = 0; i < tracks.length; i++) {
    bottom = Math.max(bottom, tracks[i].getBoundingClientRect().bottom);
  }
  return Math.ceil(bottom);
}

// stat is "median min max" of xs in µs (xs in ms), or "- - -".
function stat(xs) {
  if (xs.length === 0) return '- - -';
  const s = [...xs].sort((a, b) => a - b);
  const us = (x) => (1000 * x).toFixed(1);
  const mid = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return `${us(mid)} ${us(s[0])} ${us(s[s.length - 1])}`;
}

await withPage({
  prefix: 'gort-trace-shot-go-',
  viewport: { width: 1200, height: 560 },
  allowed: (url) => url.startsWith(base),
}, async (page, { refused: outside, errors }) => {
  await openTimeline(page, base);
  await checkModel(page, name);
  // The viewer sets its initial view (the whole trace) from a 250 ms poll
  // once the model is in; zooming before that would be undone.
  await page.waitForFunction(() => {
    const v = document.getElementById('trace-viewer');
    const tv = v.trackView;
    return tv && tv.model === v.model && tv.pollIfViewportAttachedInterval_ === undefined;
  }, null, { timeout: 10000 });

  const bottom = await page.evaluate(tidy);
  await nextFrames(page);

  const found = await page.evaluate(roundTrips, name);
  check(found !== null, 'a lane is Proc 0');
  const trips = found?.trips ?? [];
  const retaken = trips.filter((t) => t.retaken);
  const byExit = trips.filter((t) => t.byExit);
  check(retaken.length >= 1, `waiter runs whose P sysmon retook in the syscall: ${retaken.length} of ${trips.length}`);

  // ROUNDTRIPS round trips from the middle, each from the start of a
  // waiter's run that ends in a retake to the next such start (or waiter
  // runs, if too few did), skipping the first (the waiter's creation),
  // with a 4 % margin on each side.
  const marks = retaken.length > n + 1 ? retaken : trips;
  const k = Math.max(1, Math.floor((marks.length - n) / 2));
  const from = marks[Math.min(k, marks.length - 1)]?.start ?? 0;
  const to = marks[k + n]?.start ?? found?.laneEnd ?? 0;
  const pad = 0.04 * (to - from);
  const span = [from - pad, to + pad];
  await page.evaluate(zoom, span);
  await nextFrames(page);
  const shown = trips.filter((t) => t.start >= span[0] && t.end <= span[1]);
  check(shown.length >= Math.min(n, marks.length - 1), `waiter runs in the picture: ${shown.length}`);
  check(shown.some((t) => t.retaken), 'a retake is in the picture');

  const png = await page.screenshot({
    path: shot,
    clip: { x: 0, y: 0, width: page.viewportSize().width, height: Math.min(bottom + 4, page.viewportSize().height) },
  });
  console.log(`screenshot: ${shot}`);
  await checkNotBlank(page, png, 'the screenshot');

  const moved = retaken.filter((t) => t.thread !== undefined &&
    t.nextThread !== undefined && t.thread !== t.nextThread);
  const line = [
    trips.length, retaken.length, byExit.length, moved.length,
    stat(retaken.map((t) => t.held)),
    stat(retaken.filter((t) => t.handoff !== null).map((t) => t.handoff)),
    `${(1000 * (span[1] - span[0])).toFixed(0)} ${shown.length}`,
  ].join('\t');
  writeFileSync(summary, `${line}\n`);
  console.log(`summary: ${line}`);
  console.log(JSON.stringify(trips));
  check(errors.length === 0, `no page errors ${errors.join('; ')}`);
  check(outside.length === 0, `no request beyond the server ${outside}`);
});
finish('go tool trace screenshot');
