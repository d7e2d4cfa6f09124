/**
 * Playwright as a kind of listed entry beside the framework adapters
 * (../frameworks/adapter.ts): its name, and its own way to be found — the
 * suite's @playwright/test as Node resolves it, else runset's lent to it
 * (./locate.ts) — through the one locate of every kind (../frameworks/locate.ts).
 */
import type { RunnerAdapter } from '../frameworks/adapter.js';
import { locatePlaywright, type PlaywrightInstall } from './locate.js';

export const playwrightAdapter = Object.freeze({
  title: 'Playwright',
  packageName: '@playwright/test',
  bin: 'playwright',
  locate: (spec: { dir: string }): Promise<PlaywrightInstall> => Promise.resolve().then(() => locatePlaywright(spec.dir)),
}) satisfies RunnerAdapter<{ dir: string }, PlaywrightInstall>;
