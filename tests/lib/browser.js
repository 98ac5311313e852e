// Headless Chromium for the tests that render pages: Debian's chromium (installed by setup) driven by
// playwright-core. Without it the tests fail, not skip: setup is what installs it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

/** Launch chromium headless, or fail saying how to get it. */
export async function launchChromium() {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: run npm run setup (it installs chromium) or apt-get install chromium`);
  const { chromium } = await import('playwright-core');
  // playwright gives chromium a fresh temporary --user-data-dir of its own (it refuses one in args).
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
}

/** Where screenshots go: SCDV_SCREENSHOT_DIR when set (to look at them), else a temporary folder. */
export const screenshotDir = () => process.env.SCDV_SCREENSHOT_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-shots-'));
