// The configured fleet judged like every fleet: before the plan the
// verdict reads its one simulation; once the plan is done, the plan's
// judgement of it over its replications, with the bound the decision rule
// reads.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startSite } from '../lib/harness.mjs';
import { PLAN_TIMEOUT_MS, tableRows, waitForDone } from '../lib/page.mjs';

let site;
before(async () => {
  site = await startSite();
});
after(async () => {
  await site?.close();
});

const verdict = (page) => page.getByRole('region', { name: 'Verdict against the targets' });
const verdictTable = (page) => verdict(page).locator('#table-verdict table');
const VERDICTS = ['met', 'not met', 'uncertain'];

test('after the plan the configured fleet is judged over replications, with its bounds', async () => {
  const { page, errors } = await site.openPage();
  await verdictTable(page).waitFor({ timeout: PLAN_TIMEOUT_MS });
  await waitForDone(page);
  const text = await verdict(page).innerText();
  assert.match(text, /Targets: the configured fleet \(2 replicas, \d+ replications\)/, text);
  assert.doesNotMatch(text, /one simulation/, text);
  assert.match(text, /The configured fleet, 2 replicas of H100 SXM5 80GB x1: .* over \d+ replications\./, text);
  const rows = await tableRows(verdictTable(page));
  for (const row of rows) {
    assert.ok(VERDICTS.includes(row['configured fleet']), JSON.stringify(row));
  }
  // The api class misses on 2 replicas: its P(miss) has an interval, and
  // the value shows the bound the rule reads.
  const api = rows.find((r) => /^api: P\(sojourn > 60 s\)/.test(r.target));
  assert.match(api['configured fleet: value (bound)'], /^[\d.]+ % \(up to [\d.]+ %\)$/, JSON.stringify(api));
  await verdict(page).scrollIntoViewIfNeeded();
  await screenshot(page, 'fleet-verdict-done', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});
