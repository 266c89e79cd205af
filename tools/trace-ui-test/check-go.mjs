// tools/trace-ui-test/check-go.mjs: opens `go tool trace`'s timeline (/trace,
// Go 1.19's Catapult viewer, served on loopback) of a gort trace in Debian's
// headless Chromium, saves a screenshot, and checks through the viewer's
// model what a person would look for: a lane per P holding goroutine
// slices, the goroutines' names from gort's stacks, syscall and unblock
// events, and no request leaving the loopback server.
//
// Usage: node check-go.mjs http://127.0.0.1:PORT SCREENSHOT.png NAME
// (NAME: a function the goroutine slices must name)
import { check, finish, withPage } from './browser.mjs';

const [base, shot, name] = process.argv.slice(2);
if (!base || !shot || !name) {
  console.error('usage: node check-go.mjs URL SCREENSHOT.png NAME');
  process.exit(2);
}

await withPage({
  prefix: 'gort-trace-ui-go-',
  viewport: { width: 1400, height: 800 },
  allowed: (url) => url.startsWith(base),
}, async (page, { refused: outside, errors }) => {
  await page.goto(`${base}/trace`);
  // The page fetches /jsontrace, imports it into a model and hands it to
  // its tr-ui-timeline-view, #trace-viewer (cmd/trace's templTrace).
  await page.waitForFunction(
    () => document.getElementById('trace-viewer')?.model?.bounds &&
      !document.getElementById('trace-viewer').model.bounds.isEmpty,
    null, { timeout: 60000 });
  // Two frames for the track view to draw before the screenshot.
  await page.evaluate(() => new Promise((r) =>
    requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.screenshot({ path: shot });
  console.log(`screenshot: ${shot}`);

  const threads = await page.evaluate(() => {
    const model = document.getElementById('trace-viewer').model;
    const out = [];
    for (const p of model.getAllProcesses()) {
      for (const t of Object.values(p.threads)) {
        const titles = t.sliceGroup.slices.map((s) => s.title);
        out.push({
          process: p.name ?? String(p.pid),
          name: t.name,
          slices: titles.length,
          titles: [...new Set(titles)].slice(0, 8),
        });
      }
    }
    return out;
  });
  const instants = await page.evaluate(() => {
    const model = document.getElementById('trace-viewer').model;
    const n = {};
    for (const p of model.getAllProcesses()) {
      for (const t of Object.values(p.threads)) {
        for (const s of t.sliceGroup.slices) {
          if (s.duration === 0) n[s.title] = (n[s.title] ?? 0) + 1;
        }
      }
    }
    return n;
  });
  console.log(JSON.stringify(threads));
  console.log(JSON.stringify(instants));
  const procs = threads.filter((t) => /^Proc \d+$/.test(t.name ?? ''));
  check(procs.length >= 1, `P lanes: ${procs.map((t) => t.name)}`);
  const gslices = procs.reduce((n, t) => n + t.slices, 0);
  check(gslices >= 2, `goroutine slices on the P lanes: ${gslices}`);
  const named = procs.some((t) => t.titles.some((s) => s.includes(name)));
  check(named, `a goroutine slice is named after ${name}`);
  const ev = (k) => Object.keys(instants).filter((s) => s.includes(k))
    .reduce((n, s) => n + instants[s], 0);
  check(ev('syscall') > 0, `syscall events: ${ev('syscall')}`);
  check(ev('unblock') > 0, `unblock events: ${ev('unblock')}`);
  check(errors.length === 0, `no page errors ${errors.join('; ')}`);
  check(outside.length === 0, `no request beyond the server ${outside}`);
});
finish('go tool trace UI test');
