// tools/trace-ui-test/check-go.mjs: opens `go tool trace`'s timeline (/trace,
// Go 1.19's Catapult viewer, served on loopback) of a gort trace in Debian's
// headless Chromium, saves a screenshot (checked not blank), and checks
// through the viewer's model what a person would look for: a lane per P
// holding goroutine slices, the goroutines' names from gort's stacks,
// syscall and unblock events, and no request leaving the loopback server.
//
// Usage: node check-go.mjs http://127.0.0.1:PORT SCREENSHOT.png NAME
// (NAME: a function the goroutine slices must name)
import { check, finish, withPage } from './browser.mjs';
import { checkModel, checkNotBlank, openTimeline } from './go-viewer.mjs';

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
  await openTimeline(page, base);
  const png = await page.screenshot({ path: shot });
  console.log(`screenshot: ${shot}`);
  await checkNotBlank(page, png, 'the screenshot');
  await checkModel(page, name);
  check(errors.length === 0, `no page errors ${errors.join('; ')}`);
  check(outside.length === 0, `no request beyond the server ${outside}`);
});
finish('go tool trace UI test');
