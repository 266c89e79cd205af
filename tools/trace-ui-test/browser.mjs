// tools/trace-ui-test/browser.mjs: what the two trace-UI checks share: the
// check list that decides the exit status, and Debian's headless Chromium
// (/usr/bin/chromium, driven by playwright-core; no browser is downloaded)
// on a throwaway profile, with every request that `allowed` refuses aborted
// and recorded.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const failures = [];

// check prints one verdict line and remembers a failure.
export function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

// finish exits 1 if any check failed, else prints NAME: PASS.
export function finish(name) {
  if (failures.length > 0) {
    console.error(`${name}: ${failures.length} check(s) failed`);
    process.exit(1);
  }
  console.log(`${name}: PASS`);
}

// withPage runs body(page, { refused, errors }) in a fresh headless
// Chromium: refused lists the requests `allowed` turned away, errors the
// page's script errors.
export async function withPage({ prefix, viewport, allowed }, body) {
  const profile = mkdtempSync(join(tmpdir(), prefix));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
      '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
  });
  try {
    const page = context.pages()[0] ?? await context.newPage();
    const refused = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (allowed(url)) return route.continue();
      refused.push(url);
      return route.abort();
    });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await body(page, { refused, errors });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
