import { startSite, screenshot } from './lib/harness.mjs';
import { waitForDone, headline } from './lib/page.mjs';
const site = await startSite();
const tag = process.argv[2] ?? 'x';
for (const [w, h] of [[390, 844], [1280, 800]]) {
  const { page } = await site.openPage('', { viewport: { width: w, height: h } });
  await waitForDone(page);
  const top = await headline(page).evaluate((el) => el.getBoundingClientRect().top);
  console.log(w, 'headline top', top);
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
  await new Promise((r) => setTimeout(r, 500));
  const tables = await page.evaluate(() => Array.from(document.querySelectorAll('.table-scroll')).map((s) => {
    const t = s.querySelector('table'); const r = s.getBoundingClientRect();
    const heads = Array.from(t.querySelectorAll('thead th')).map((th) => [th.innerText, Math.round(th.getBoundingClientRect().right - r.left)]);
    return { id: t.id, caption: s.closest('details')?.querySelector('summary')?.innerText, width: Math.round(r.width), scroll: s.scrollWidth, heads };
  }));
  if (w === 1280) console.log(JSON.stringify(tables, null, 1));
  await screenshot(page, `${tag}-${w}`, { fullPage: false });
  await page.context().close();
}
await site.close();
