// tools/trace-ui-test/go-viewer.mjs: what check-go.mjs and shot-go.mjs share
// about `go tool trace`'s timeline (/trace, Go 1.19's Catapult viewer):
// loading it until its model is drawn, the checks a person's first look
// makes (a lane per P holding goroutine slices named after the program,
// syscall and unblock events), and a check that a screenshot is not blank.
import { check } from './browser.mjs';

// openTimeline loads BASE/trace in page and waits until the viewer has
// imported /jsontrace into a non-empty model and drawn it twice.
export async function openTimeline(page, base) {
  await page.goto(`${base}/trace`);
  // The page fetches /jsontrace, imports it into a model and hands it to
  // its tr-ui-timeline-view, #trace-viewer (cmd/trace's templTrace).
  await page.waitForFunction(
    () => document.getElementById('trace-viewer')?.model?.bounds &&
      !document.getElementById('trace-viewer').model.bounds.isEmpty,
    null, { timeout: 60000 });
  await nextFrames(page);
}

// nextFrames waits for two animation frames: the track view draws in one.
export async function nextFrames(page) {
  await page.evaluate(() => new Promise((r) =>
    requestAnimationFrame(() => requestAnimationFrame(r))));
}

// checkModel checks through the viewer's model that the trace shows what
// the ping's does: P lanes with goroutine slices, one named after name,
// syscall and unblock events. It returns the lanes it saw.
export async function checkModel(page, name) {
  const threads = await page.evaluate((name) => {
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
          named: titles.some((s) => s.includes(name)),
        });
      }
    }
    return out;
  }, name);
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
  const named = procs.some((t) => t.named);
  check(named, `a goroutine slice is named after ${name}`);
  const ev = (k) => Object.keys(instants).filter((s) => s.includes(k))
    .reduce((n, s) => n + instants[s], 0);
  check(ev('syscall') > 0, `syscall events: ${ev('syscall')}`);
  check(ev('unblock') > 0, `unblock events: ${ev('unblock')}`);
  return threads;
}

// checkNotBlank decodes the PNG in png (a Buffer) in the page and checks
// that the picture holds a drawing: at least 16 colours, and at least 2 %
// of its pixels not of its commonest colour (the background).
export async function checkNotBlank(page, png, what) {
  const stats = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const count = new Map();
    for (let i = 0; i < d.length; i += 4) {
      const k = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
      count.set(k, (count.get(k) ?? 0) + 1);
    }
    const top = Math.max(...count.values());
    const pixels = d.length / 4;
    return { colours: count.size, other: (pixels - top) / pixels };
  }, png.toString('base64'));
  check(stats.colours >= 16 && stats.other >= 0.02,
    `${what} is not blank: ${stats.colours} colours, ` +
    `${(100 * stats.other).toFixed(1)} % off the background`);
}
