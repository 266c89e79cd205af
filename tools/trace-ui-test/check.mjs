// tools/trace-ui-test/check.mjs: opens gort-trace's HTML timeline of a
// ChanToSyscallPing trace in Debian's headless Chromium (/usr/bin/chromium,
// driven by playwright-core; no browser is downloaded), saves a screenshot,
// and checks through the DOM what a person would look for: a lane per P and
// per M, sysmon's lane with its usleeps and the retake that hands the P
// away, goroutine slices that are laid out and visible, syscall slices,
// unblock events, a tooltip on hover, zoom, and no network request.
//
// Usage: node check.mjs TRACE.html SCREENSHOT.png
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { check, finish, withPage } from './browser.mjs';

const [html, shot] = process.argv.slice(2);
if (!html || !shot) {
  console.error('usage: node check.mjs TRACE.html SCREENSHOT.png');
  process.exit(2);
}

await withPage({
  prefix: 'gort-trace-ui-',
  viewport: { width: 1400, height: 700 },
  allowed: (url) => url.startsWith('file:'),
}, async (page, { refused: network, errors }) => {
  await page.goto(pathToFileURL(resolve(html)).href);
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`screenshot: ${shot}`);

  const lanes = await page.$$eval('.lane[data-kind]', (ls) => ls.map((l) => ({
    kind: l.dataset.kind,
    name: l.dataset.track,
    slices: l.querySelectorAll('.slice').length,
    goroutines: l.querySelectorAll('.slice.goroutine').length,
    syscalls: l.querySelectorAll('.slice.syscall').length,
    usleeps: l.querySelectorAll('.slice.usleep').length,
    retakes: l.querySelectorAll('.event[data-cat="ProcRetake"]').length,
    unblocks: l.querySelectorAll('.event[data-cat="GoUnblock"]').length,
  })));
  const ps = lanes.filter((l) => l.kind === 'P');
  const ms = lanes.filter((l) => l.kind === 'M');
  console.log(JSON.stringify(lanes));
  check(ps.length === 1 && ps[0].name === 'P0', 'one P lane, P0 (GOMAXPROCS 1)');
  check(ms.length >= 2, `M lanes: ${ms.length} (sysmon and at least one worker)`);
  const sysmon = ms.find((l) => l.name.includes('sysmon'));
  check(sysmon !== undefined, 'a lane is named sysmon');
  check(sysmon && sysmon.usleeps > 0, 'sysmon lane has usleep slices');
  check(sysmon && sysmon.retakes > 0, 'sysmon lane has retake events');
  check(ps.length > 0 && ps[0].goroutines >= 2, 'P0 has goroutine slices');
  const sum = (k) => lanes.reduce((n, l) => n + l[k], 0);
  check(sum('syscalls') > 0, `syscall slices on M lanes: ${sum('syscalls')}`);
  check(sum('unblocks') > 0, `unblock events: ${sum('unblocks')}`);
  const gnames = await page.$$eval('.lane[data-kind="P"] .slice.goroutine',
    (s) => [...new Set(s.map((x) => x.dataset.g))]);
  check(gnames.length === 2, `the ping's two goroutines run on P0: ${gnames}`);

  // Laid out: slices sit inside their lane and have a size.
  const box = await page.$eval('.lane[data-kind="P"] .slice.goroutine', (s) => {
    const r = s.getBoundingClientRect();
    const l = s.closest('.lane').getBoundingClientRect();
    return { w: r.width, h: r.height, inLane: r.top >= l.top && r.bottom <= l.bottom };
  });
  check(box.w >= 1 && box.h > 0 && box.inLane, `a goroutine slice is visible ${JSON.stringify(box)}`);

  // Hover shows the tooltip with the slice's goroutine.
  // Zoom doubles the lanes' width.
  const width = () => page.$eval('.lane[data-kind="P"] .lane-body', (b) => b.getBoundingClientRect().width);
  const w1 = await width();
  await page.click('#zoom-in');
  const w2 = await width();
  check(Math.abs(w2 - 2 * w1) < 2, `zoom in doubles lane width (${w1} -> ${w2})`);

  // Zoomed in 64x, the mouse goes to the centre of the first goroutine
  // slice that is on top there (event ticks may cover narrow slices).
  for (let i = 0; i < 5; i++) await page.click('#zoom-in');
  const spot = await page.$$eval('.lane[data-kind="P"] .slice.goroutine', (ss) => {
    for (const s of ss) {
      s.scrollIntoView({ block: 'nearest', inline: 'center' });
      const r = s.getBoundingClientRect();
      const x = r.left + r.width / 2, y = r.top + r.height / 2;
      if (x < window.innerWidth && document.elementFromPoint(x, y) === s) return { x, y };
    }
    return null;
  });
  check(spot !== null, 'a goroutine slice can be pointed at');
  if (spot) await page.mouse.move(spot.x, spot.y);
  const tip = page.locator('#tooltip');
  const zoomed = shot.replace(/\.png$/, '') + '-zoomed.png';
  await page.screenshot({ path: zoomed });
  console.log(`screenshot: ${zoomed}`);
  const tipText = (await tip.isVisible()) ? await tip.textContent() : '';
  check(/^G\d+ \(goroutine\)/.test(tipText) && tipText.includes('duration'),
    `tooltip on hover: ${JSON.stringify(tipText.split('\n')[0])}`);

  check(network.length === 0, `no network requests ${JSON.stringify(network)}`);
  check(errors.length === 0, `no script errors ${JSON.stringify(errors)}`);
});
finish('trace UI test');
