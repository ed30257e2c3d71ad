// The Batches panel: what the engine steps of the default run were like.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdir } from 'node:fs/promises';
import { siteForFile } from '../lib/harness.mjs';
import { tableRows, waitForDone, waitForShown } from '../lib/page.mjs';

const site = siteForFile();

/** The panel alone, beside the harness's screenshots (the page's toolbar
 * would cover its top in a screenshot of the viewport). */
async function shot(name) {
  const dir = new URL('../screenshots/', import.meta.url).pathname;
  await mkdir(dir, { recursive: true });
  return `${dir}${name}.png`;
}

/** "8,192" as 8192. */
const number = (text) => Number(text.replaceAll(',', ''));

test('the Batches panel shows plausible batch statistics for the default scenario', async () => {
  const { page, errors } = await site.openPage();
  const panel = page.locator('section[aria-labelledby="batches-heading"]');
  const batches = panel.locator('#table-batches table');
  await waitForShown(batches, 'the Batches table');
  // Read once the page has settled: the run and the default scenario's
  // plan both done (under load the plan ends while the panel is read).
  await waitForDone(page);

  // The default engine: 256 sequences and 8,192 tokens a step at most.
  const rows = await tableRows(batches);
  assert.deepEqual(
    rows.map((r) => `${r['per step']} by ${r['weighted by']}`),
    ['sequences by step time', 'sequences by step', 'tokens by step time', 'tokens by step'],
  );
  for (const row of rows) {
    const [mean, p50, p99] = [row.mean, row.p50, row.p99].map(number);
    const limit = row['per step'] === 'sequences' ? 256 : 8192;
    assert.ok(mean >= 1 && mean <= limit, `${JSON.stringify(row)}: mean`);
    assert.ok(p50 >= 1 && p50 <= p99 && p99 <= limit, `${JSON.stringify(row)}: percentiles`);
  }
  // A typical moment of work has a larger batch than a typical step: the
  // long steps are the big ones.
  assert.ok(number(rows[0].mean) > number(rows[1].mean), 'weighted by time, the batch is larger');

  // Step time by part, in a bar whose shares add up to the whole.
  const bar = panel.getByRole('img', { name: /^step time: / });
  const label = await bar.getAttribute('aria-label');
  const shares = [...label.matchAll(/(prefill|decode|recomputation) (\d+) %/g)].map((m) => Number(m[2]));
  assert.equal(shares.length, 3, label);
  const total = shares.reduce((a, b) => a + b, 0);
  assert.ok(total >= 98 && total <= 102, label);
  assert.match(await panel.innerText(), /[\d,]+ steps, [\d.,]+ per second of step time \(mean step \d+ ms\)/);

  // KV cache use: 24 stretches of an hour (288 samples of 5 min), each peak
  // at least its mean.
  const strip = panel.getByRole('img', { name: /^KV cache used over time: / });
  assert.equal(await strip.locator('.kv-stretch').count(), 24);
  await panel.locator('#table-kv-use summary').click();
  const kv = await tableRows(panel.locator('#table-kv-use table'));
  assert.equal(kv.length, 24);
  for (const row of kv) {
    const mean = number(row['mean (fleet, at samples)'].replace(' %', ''));
    const peak = number(row['peak (fullest replica)'].replace(' %', ''));
    assert.ok(mean >= 0 && mean <= peak && peak <= 100, JSON.stringify(row));
  }

  await panel.screenshot({ path: await shot('batches-light') });
  assert.deepEqual(errors, []);
  await page.context().close();

  const dark = await site.openPage('', { colorScheme: 'dark' });
  const darkPanel = dark.page.locator('section[aria-labelledby="batches-heading"]');
  await waitForShown(darkPanel.locator('#table-batches table'), 'the Batches table');
  await darkPanel.screenshot({ path: await shot('batches-dark') });
  assert.deepEqual(dark.errors, []);
  await dark.page.context().close();
});
