// "What sets the fleet" is a diagnosis (issue 40, item 6): under the
// binding target, why it binds (each class's share of step time, prefill
// in the binding class's steps, KV pressure) and the levers tried against
// it, the best named with its saving.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { tableRows, verdict, waitForDone } from '../lib/page.mjs';
import { linkQuery, sharedPrefillScenario } from '../lib/scenario.mjs';

const site = siteForFile();

test("the binding target's diagnosis names a lever and its saving", async () => {
  const { page, errors } = await site.openPage(linkQuery(sharedPrefillScenario()));
  await waitForDone(page);
  await verdict(page).scrollIntoViewIfNeeded();
  const binding = await verdict(page).locator('.verdict-binding').innerText();
  assert.match(binding, /^What sets the fleet: chat: p99 TPOT <= 22 ms sets the fleet: \d+ replicas/);
  const diagnosis = verdict(page).locator('#binding-diagnosis');
  await screenshot(page, 'verdict-diagnosis', { fullPage: false });
  const text = await diagnosis.innerText();
  // Why: the batch class's prompts share chat's decode steps.
  assert.match(text, /Why it binds: On \d+ replicas?, where chat: p99 TPOT <= 22 ms is not met, batch takes \d+% of step time/);
  assert.match(text, /prefill takes \d+% of step time/);
  assert.match(text, /chat's decodes share their steps with prefill/);
  // The best lever, with its fleet and its saving.
  assert.match(text, /Best: a token budget of 512 meets every target with \d+ replicas?: \$[\d,.]+ less per month\./);
  const rows = await tableRows(diagnosis.locator('table'));
  const best = rows.find((r) => /\(best\)$/.test(r.lever));
  assert.ok(best, JSON.stringify(rows));
  assert.match(best['saving per month'] ?? best['saving per month [USD]'], /^\$[\d,.]+$/);
  assert.ok(rows.some((r) => /^a separate pool for batch/.test(r.lever)), JSON.stringify(rows));
  assert.deepEqual(errors, []);
  await page.context().close();
});
