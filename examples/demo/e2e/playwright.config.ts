// The demo's Playwright suite: runset lists it (`playwright test --list`) and
// runs each test case as one member of a set. It is an ordinary Playwright
// project: `npx playwright test` runs it too (with BASE_URL set).
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'tests',
  timeout: 15_000,
  // The broken deploy should fail in seconds, not wait out the test's whole timeout.
  expect: { timeout: 2_000 },
  use: { actionTimeout: 3_000 },
});
