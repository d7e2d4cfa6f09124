// A browser flow against the demo shop (src/demo/shop.ts). Variables arrive as
// environment: BASE_URL (the `broken` environment points it at the shop's
// broken deploy, where this fails with a screenshot and a trace) and
// SHOP_PASSWORD (a secret: masked in output, errors and the trace).
import { expect, test } from '@playwright/test';

const base = process.env.BASE_URL ?? 'http://127.0.0.1:4010';

test.describe('demo shop', () => {
  test('the home page welcomes visitors', async ({ page }) => {
    await page.goto(`${base}/`);
    await expect(page.getByRole('heading', { name: /Welcome/ })).toBeVisible();
  });

  test('a visitor signs in', async ({ page }) => {
    await page.goto(`${base}/`);
    await page.getByLabel('User').fill('demo');
    await page.getByLabel('Password').fill(process.env.SHOP_PASSWORD ?? '');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('status')).toHaveText('Signed in as demo');
  });
});
