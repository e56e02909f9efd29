/**
 * What the console's browser test (test/console.browser.test.ts) needs around a page: a timing instance as
 * server.ts runs it (a live hub woken by its own LISTEN session) on an ephemeral port, Chromium launched as
 * the other browser tests launch it, screenshots into the git-ignored `test-output/console/`, and an
 * accessibility check with axe-core injected into the page that fails on serious or critical violations.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createLogger } from '@sports-timing/shared';
import { createApp } from '../../services/timing/src/app';
import { composeTiming } from '../../services/timing/src/composition';
import { startPunchListener, type PunchListener } from '../../services/timing/src/live/listener';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';

/** Where the screenshots go (git-ignored, kept after the run for a person to look at). */
export const OUTPUT = path.join(__dirname, '../../test-output/console');

/** A running timing instance with a browser. */
export interface ConsoleRig {
  timing: TimingTestContext;
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

/** Starts the instance and Chromium. */
export async function startConsoleRig(): Promise<ConsoleRig> {
  mkdirSync(OUTPUT, { recursive: true });
  const timing = await startTiming();
  const logger = createLogger('console-test');
  const composed = composeTiming({ database: timing.database, logger, validateResponses: true, keyUses: timing.keyUses });
  const hub = composed.live;
  const listener: PunchListener = startPunchListener(timing.database.url, composed, logger);
  await listener.ready;
  const app = createApp(composed);
  const server = http.createServer(app as unknown as http.RequestListener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    timing,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    browser,
    async close() {
      await browser.close();
      hub.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await listener.stop();
      await timing.close();
    },
  };
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Violations of axe-core's rules with impact serious or critical on the page as it is now ([] when none). */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (no inline script, no eval) does not govern;
  // a <script> element with the text would be refused, as it should be.
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`);
}

/** A full-page screenshot named `name` under {@link OUTPUT}. */
export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(OUTPUT, `${name}.png`), fullPage: true });
}

/** Signs the page's tab in with `key` at /console and waits for the navigation. */
export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console`);
  await page.fill('#sign-in-key', key);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#nav:not([hidden])');
}
