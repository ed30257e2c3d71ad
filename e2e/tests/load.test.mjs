// A class's load mode in the page: closed-loop clients, a fixed count,
// offline, as published benchmarks run them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { runStatus, verdict, waitFor, waitForResults, waitForShown } from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

/** How many requests of class `name` arrived, as the per-class table shows. */
async function arrived(page, name) {
  const table = page.locator('#table-per-class table');
  const headers = await table.locator('thead th').allInnerTexts();
  const column = headers.findIndex((h) => h.trim() === 'arrived');
  const rows = await table.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('th, td'), (cell) => cell.innerText.trim())),
  );
  const row = rows.find((cells) => cells[0] === name);
  return row?.[column]?.replace(/,/g, '');
}

test('a class becomes closed-loop clients: its rate and profile give way, with an undo, and it sends exactly its total', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const batch = page.locator('details.class-editor').first();
  assert.equal(await batch.getByLabel('Batch arrivals').count(), 1);

  await batch.getByLabel('Load', { exact: true }).selectOption('closed_loop');
  const notice = page.locator('.notice');
  await waitFor(page, 'the notice', async () => /load changed: its hourly profile.* removed/.test(await notice.innerText()));
  assert.equal(await batch.getByLabel('Batch arrivals').count(), 0, 'a closed loop has no rate');
  await batch.getByLabel('Clients', { exact: true }).fill('4');
  await batch.getByLabel('Requests in all', { exact: true }).fill('120');
  await batch.getByLabel('Think time', { exact: true }).selectOption('exponential');
  await batch.getByLabel('Mean', { exact: true }).fill('2000');
  assert.match(await batch.locator('summary').innerText(), /4 clients, 120 requests/);

  await waitFor(page, 'the closed loop\'s run', async () => {
    return (await arrived(page, 'nightly-batch')) === '120' && !/Simulating/.test(await runStatus(page).innerText());
  });
  await screenshot(page, 'load-closed-loop');

  // Undo brings the open stream back, profile and rate included.
  await notice.getByRole('button', { name: 'Undo' }).click();
  await waitForShown(batch.getByLabel('Batch arrivals'), 'the batch arrivals box');
  assert.equal(await batch.getByLabel('Load', { exact: true }).inputValue(), 'open');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('an offline class sends its count at time 0', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const batch = page.locator('details.class-editor').first();
  await batch.getByLabel('Load', { exact: true }).selectOption('offline');
  await batch.getByLabel('Requests', { exact: true }).fill('300');
  await waitFor(page, 'the offline run', async () => {
    return (await arrived(page, 'nightly-batch')) === '300';
  });
  assert.match(await batch.locator('summary').innerText(), /300 requests at time 0/);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('an imported trace is replayed exactly, and its class can switch to the fitted open stream', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const rows = ['arrival_s,input_tokens,output_tokens,class'];
  for (let i = 0; i < 90; i++) rows.push(`${i * 40},${200 + (i % 7) * 50},${30 + (i % 5) * 20},${i % 3 ? 'chat' : 'bulk'}`);
  await page.getByLabel('Import trace').setInputFiles({
    name: 'requests.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(rows.join('\n')),
  });
  await waitFor(page, 'the replay', async () =>
    (await arrived(page, 'chat')) === '60' && (await arrived(page, 'bulk')) === '30');
  assert.match(await page.locator('.notice').innerText(), /90 requests replayed exactly in 2 class\(es\)/);
  const chat = page.locator('details.class-editor', { has: page.locator('.class-name', { hasText: /^chat$/ }) });
  assert.match(await chat.locator('summary').innerText(), /replays 60 traced requests/);
  assert.equal(await chat.getByLabel('Load', { exact: true }).inputValue(), 'trace');

  await chat.getByLabel('Load', { exact: true }).selectOption('open');
  await waitFor(page, 'the notice of what the switch removed', async () =>
    /its traced requests removed/.test(await page.locator('.notice').innerText()));
  await waitForShown(chat.getByLabel('Batch arrivals'), 'the batch arrivals box');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a plan of a closed-loop class says why planning refuses it and what to do', async () => {
  const s = quickScenario();
  s.classes[0].load = { kind: 'closed_loop', clients: 4, requests: 120 };
  // (A closed loop takes neither an hourly profile nor batches.)
  delete s.classes[0].time_of_day;
  s.classes[0].batch_size = { kind: 'constant', value: 1 };
  const { page, errors } = await site.openPage(linkQuery(s));
  await waitForResults(page);
  const plan = verdict(page).locator('#verdict-plan');
  await waitFor(page, 'the plan\'s refusal', async () => /^The plan failed/.test(await plan.innerText()));
  const text = await plan.innerText();
  assert.match(text, /planning refuses classes that are not open streams, and class "nightly-batch" is a closed loop of clients/, text);
  assert.match(text, /set the class's Load to "open \(Poisson batches\)" under Workload/, text);
  assert.doesNotMatch(text, /classes\[\d+\]|not a valid scenario/, text);
  // The headline's plan card says it too.
  assert.match(await page.locator('dl.plan-metrics').innerText(), /planning refuses classes that are not open streams/);
  // The run itself is this scenario's: its closed loop sent its 120.
  assert.equal(await arrived(page, 'nightly-batch'), '120');
  await screenshot(page, 'load-closed-loop-plan', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});
