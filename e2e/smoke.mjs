import { startSite, screenshot } from './lib/harness.mjs';
const site = await startSite();
const t0 = Date.now();
const { page, errors } = await site.openPage();
try {
  await page.getByRole('img', { name: /Sojourn-time CDF/ }).waitFor({ timeout: 30000 });
  console.log('cdf after', Date.now() - t0, 'ms');
} catch (e) { console.log('no cdf', e.message); }
await page.waitForTimeout(3000);
console.log(await page.getByRole('status').first().innerText());
await screenshot(page, 'smoke');
console.log(errors);
await site.close();
