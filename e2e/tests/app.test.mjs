// The page as its users drive it: by role and label, waiting for conditions.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import {
  cdf,
  headline,
  runStatus,
  runButton,
  waitFor,
  figure,
  waitForDone,
  waitForResults,
  waitForShown,
  pageTimeWhen,
  cdfShown,
  planShown,
  tableRows,
} from '../lib/page.mjs';
import { defaultScenario, linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

/** Opens the default scenario and measures navigation start to its CDF. */
async function timeDefaultScenario() {
  const opened = await site.openPage();
  const ms = await pageTimeWhen(opened.page, cdfShown);
  return { ...opened, ms };
}

// (Prints the time to first results; speed is judged by benchmarks, not here.)
test('the default scenario shows its CDF with the deadline', async () => {
  // The first page of a fresh browser pays for starting it; the second is
  // what a user opening the page sees.
  const cold = await timeDefaultScenario();
  await cold.page.context().close();
  const { page, errors, ms } = await timeDefaultScenario();
  console.log(`default scenario: results ${ms} ms after navigation started (first page of the browser: ${cold.ms} ms)`);
  assert.deepEqual(cold.errors, []);
  const svg = await cdf(page).evaluate((el) => el.outerHTML);
  assert.match(svg, /deadline nightly-batch 24\.0 h/, 'the 24 h deadline is drawn and labelled');
  assert.match(svg, /deadline api 60\.0 s/);
  assert.match(await figure(page, 'P(miss)'), /^\d+\.\d\d %$/);
  assert.match(await figure(page, 'Goodput'), /req\/h$/);
  assert.equal(await page.getByLabel('Scenario name').inputValue(), 'Overnight batch jobs, 24 h SLA');
  assert.match(page.url(), /\?s=2\./, 'the address bar holds the scenario');
  await screenshot(page, 'desktop-light', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});

// (Prints the time from the first results to the plan, the figure the
// planner's speed target is measured by.)
test('the default plan names a discipline, explains it, draws the frontier and re-plans the cases', async () => {
  const { page, errors } = await site.openPage();
  const firstResults = await pageTimeWhen(page, cdfShown);
  const planned = await pageTimeWhen(page, planShown, { plan: true });
  console.log(
    `default scenario: plan complete ${planned - firstResults} ms after the first results ` +
      `(${planned} ms after navigation started; first results at ${firstResults} ms)`,
  );
  const plan = page.getByRole('region', { name: 'Capacity plan' });
  const fleet = await plan.locator('.plan-fleet').innerText();
  assert.match(fleet, /^\d+ \+ \d+ replicas of .+, (priority|SIF|EDF)\b/, 'a discipline other than FCFS');
  assert.doesNotMatch(fleet, /FCFS/);
  assert.match(await plan.locator('.plan-fleet-detail').innerText(), /(priority|shortest input first|earliest deadline first) scheduling/);
  const why = await plan.locator('.plan-why').innerText();
  assert.match(why, /^Why: (Priority|Shortest input first|Earliest deadline first) scheduling/);
  assert.match(why, /instead of .+ FCFS with the scenario's own settings \(the smallest fleets meeting every target\), saving \$[\d,]+ per month/);
  assert.match(await plan.locator('details.plan-rule summary').innerText(), /^Decided by the upper end of the 95% interval/);
  assert.match(
    await plan.locator('.plan-effort').innerText(),
    /^\d+ configurations, \d+ pruned, \d+ simulations instead of \d+ for a plain search/,
  );

  const pareto = page.getByRole('img', { name: /^Cost against the worst target's margin: \d+ fleets decided, \d+ on the frontier; chosen: / });
  const svg = await pareto.evaluate((el) => el.outerHTML);
  assert.ok((svg.match(/<circle [^>]*r="5"/g) ?? []).length >= 1, 'the decided fleets are drawn');
  assert.match(svg, /\nchosen: .+, (priority|SIF|EDF)\n/, 'the choice is named');
  assert.match(svg, /1x: a target at its bound \(below: met\)/, 'the line where a target sits at its bound');

  const cases = await tableRows(page.locator('#table-cases table'));
  assert.deepEqual(cases.map((c) => c.case), ['expected demand', 'low demand', 'high demand']);
  for (const c of cases) {
    assert.match(c['own plan: configuration'], /^.+ x\d+, (FCFS|priority|SIF|EDF)/, `${c.case} is re-planned`);
    assert.match(c['own plan: steady replicas'], /^\d+$/);
    assert.match(c["plan's fleet: targets"], /^(met|uncertain|not met)$/);
  }
  assert.match(
    await plan.locator('.plan-cover').innerText(),
    /^Covering high demand takes \d+ \+ \d+ replicas of .+: \$[\d,]+ per month at the expected prices, /,
  );
  assert.match(await plan.locator('.plan-reading').innerText(), /^On the fixed fleet/);

  // The choice beside the scenario's own settings, item by item.
  const alternatives = page.locator('#table-alternative-costs');
  await alternatives.locator('summary').click();
  const items = await tableRows(alternatives.locator('table'));
  assert.equal(items[0].item, 'configuration');
  assert.match(items[0].chosen, /, (priority|SIF|EDF)$/);
  assert.match(items[0]['alternative 1'], /, FCFS$/);
  const total = items.find((r) => r.item === 'total [USD per month]');
  const usd = (text) => Number(text.replace(/[$,]/g, ''));
  assert.ok(usd(total.chosen) < usd(total['alternative 1']), JSON.stringify(total));
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('changing an input changes the results', async () => {
  const { page, errors } = await site.openPage();
  await waitForResults(page);
  const before = await figure(page, 'P(miss)');
  const urlBefore = page.url();
  await page.getByLabel('Replicas', { exact: true }).fill('3');
  await waitFor(page, 'P(miss) to change', async () => (await figure(page, 'P(miss)')) !== before);
  assert.notEqual(page.url(), urlBefore, 'the link follows the edit');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a share link restores identical inputs and identical numbers', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  await page.getByLabel('Seed').fill('5');
  await page.getByLabel('Batch arrivals').first().fill('4');
  // Done, and for these inputs: a "Done." of the run before the last edit
  // (its debounce not yet fired) would leave stale numbers to compare.
  await waitFor(
    page,
    'the run and the plan of the edited inputs',
    async () =>
      (await runStatus(page).innerText()) === 'Done.' &&
      !(await headline(page).innerText()).includes('for earlier inputs'),
    { plan: true },
  );
  assert.match(page.url(), /[?&]s=2\./, 'the address bar holds the edited scenario');
  const shared = page.url();
  const labels = ['Scenario name', 'Seed', 'Horizon', 'Replicas', 'Price per GPU-hour'];
  const inputs = async (p) => Promise.all(labels.map((l) => p.getByLabel(l, { exact: true }).first().inputValue()));
  const numbers = async (p) => (await headline(p).innerText()).replace(/\s+/g, ' ');
  const original = { inputs: await inputs(page), numbers: await numbers(page) };
  await screenshot(page, 'planned-desktop-light');

  const fresh = await site.openPage(shared.slice(shared.indexOf('?')));
  await waitForResults(fresh.page);
  await waitForDone(fresh.page);
  assert.deepEqual(await inputs(fresh.page), original.inputs);
  assert.equal(await numbers(fresh.page), original.numbers);
  assert.match(original.numbers, /Planned replicas/);
  assert.deepEqual(errors, []);
  assert.deepEqual(fresh.errors, []);
  await fresh.page.context().close();
  await page.context().close();
});

test('a corrupted link shows a clear message and the default scenario', async () => {
  const good = linkQuery(defaultScenario());
  const broken = good.slice(0, good.length - 40) + 'AAAA';
  const { page, errors } = await site.openPage(broken);
  const alert = page.getByRole('alert');
  await waitForShown(alert, 'the message');
  assert.match(await alert.innerText(), /This link could not be opened: .*default scenario is shown instead/);
  assert.equal(await page.getByLabel('Scenario name').inputValue(), 'Overnight batch jobs, 24 h SLA');
  await waitForResults(page);
  await screenshot(page, 'corrupted-link', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});

// The page starts its workers before it builds itself and waits for them
// to load (at most half a second): one whose engine cannot load must still
// leave the whole page, and say what went wrong.
test('a worker that cannot load leaves the page and says why', async () => {
  const { page, errors } = await site.openPage('', { block: ['worker_bg.wasm'] });
  await waitFor(page, 'the failure', async () => /worker/.test(await runStatus(page).innerText()));
  assert.match(await runStatus(page).innerText(), /the simulation worker stopped/);
  assert.equal(await page.getByLabel('Scenario name').inputValue(), 'Overnight batch jobs, 24 h SLA');
  assert.ok(await runButton(page).isEnabled(), 'the user can try again');
  assert.equal(await cdf(page).count(), 0, 'no result appeared');
  await screenshot(page, 'worker-blocked', { fullPage: false });
  assert.ok(errors.length > 0 && errors.every((e) => /worker_bg\.wasm|worker/i.test(e)), errors.join('\n'));
  await page.context().close();
});

test('an invalid input shows the engine message and blocks Run', async () => {
  const { page, errors } = await site.openPage();
  await waitForResults(page);
  const p90 = page.getByLabel('p90', { exact: true }).first();
  await p90.fill('10');
  await waitForShown(page.getByText('must be greater than the median (400), got 10', { exact: true }), 'the message');
  assert.equal(await p90.getAttribute('aria-invalid'), 'true');
  assert.ok(await runButton(page).isDisabled(), 'Run is disabled');
  assert.match(await page.locator('#run-reason').innerText(), /Class "nightly-batch", batch size, p90: /);
  await p90.fill('2000');
  await waitFor(page, 'Run to be enabled', () => runButton(page).isEnabled());
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('Cancel stops a long run', async () => {
  // Ten days of the default traffic: about 1.1 million requests, seconds of
  // work, inside a run's memory budget (20 days would be refused up front).
  const long = defaultScenario();
  long.run.horizon_s = 10 * 86400;
  const { page, errors } = await site.openPage(linkQuery(long));
  await waitFor(page, 'the simulation to start', async () => /Simulating/.test(await runStatus(page).innerText()));
  assert.ok(await page.getByRole('progressbar').isVisible());
  await page.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await runStatus(page).innerText(), 'Cancelled.');
  await page.waitForTimeout(1500);
  assert.equal(await runStatus(page).innerText(), 'Cancelled.', 'nothing comes back from the stopped worker');
  assert.equal(await page.getByRole('progressbar').isVisible(), false);
  assert.equal(await cdf(page).count(), 0, 'no result appeared');
  assert.ok(await runButton(page).isEnabled(), 'the user can run again');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('after Cancel, results for earlier inputs say to press Run, and an edit brings them up to date', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForDone(page);
  // The note is hidden while it has nothing to say: read in one step in
  // the page (a count, then a read, raced the note going away).
  const noteText = () =>
    page.evaluate(() => document.querySelector('[role="status"][aria-label="What the results are for"]')?.innerText ?? '');
  assert.equal(await noteText(), '', 'the results are for the inputs');
  // Ten days: a run long enough to cancel (as in "Cancel stops a long run").
  await page.getByLabel('Horizon', { exact: true }).fill('240 h');
  await waitFor(page, 'the longer run to start', async () => /Simulating/.test(await runStatus(page).innerText()));
  assert.equal(await noteText(), '', 'while it runs, the run status says what happens');
  await page.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await runStatus(page).innerText(), 'Cancelled.');
  // Nothing is on its way: the results shown are the 2 h run's.
  await waitFor(page, 'the press-Run note', async () => (await noteText()) === 'Results are for earlier inputs: press Run.');
  const staleMark = page.locator('.results-head .stale.shown');
  assert.equal(await staleMark.innerText(), 'for earlier inputs: press Run');
  assert.doesNotMatch(await page.locator('body').innerText(), /updating/);
  // An edit runs again, and the results catch up.
  await page.getByLabel('Horizon', { exact: true }).fill('3 h');
  // (The 240 h plan's failure, over the memory budget at 2x load, shows
  // until the new job starts: wait for its results before the plan.)
  await waitFor(page, 'results for the edited inputs', async () => (await noteText()) === '');
  await waitForDone(page);
  assert.equal(await noteText(), '', 'the results are for the inputs again');
  assert.equal(await staleMark.count(), 0, 'no stale mark');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('CSV export holds the per-class table', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: /Download Per class .* as CSV/ }).click(),
  ]);
  assert.equal(download.suggestedFilename(), 'per-class.csv');
  const csv = await readFile(await download.path(), 'utf8');
  // (After the provenance's comment lines, e2e/tests/layout.test.mjs.)
  const lines = csv.trim().split('\r\n').filter((line) => !line.startsWith('#'));
  const table = page.locator('#table-per-class table');
  const headers = await table.locator('thead th').allInnerTexts();
  assert.equal(lines[0], headers.join(','));
  const firstColumn = await table.locator('tbody tr td:first-child').allInnerTexts();
  assert.deepEqual(lines.slice(1).map((l) => l.split(',')[0]), firstColumn);
  // Counts match the table exactly.
  const arrivedShown = (await table.locator('tbody tr:last-child td:nth-child(3)').innerText()).replace(/,/g, '');
  assert.equal(lines.at(-1).split(',')[2], arrivedShown);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('an imported file with problems lists the engine messages', async () => {
  const { page, errors } = await site.openPage();
  await waitForResults(page);
  const bad = defaultScenario();
  bad.classes[1].deadline_s = -5;
  await page.getByLabel('Import JSON').setInputFiles({
    name: 'bad.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(bad)),
  });
  const alert = page.getByRole('alert').filter({ hasText: 'Imported bad.json' });
  await waitForShown(alert, 'the import\'s message');
  assert.match(await alert.innerText(), /Class "api", deadline \(SLA\): must be a positive number, got -5/);
  assert.ok(await runButton(page).isDisabled());
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a scenario too large for a link is kept, and the page says to export it', async () => {
  // r17 of the review: after importing a valid 4.5 MB scenario, a reload
  // showed the default and the user's work was gone.
  const { page, errors } = await site.openPage();
  await waitForResults(page);
  const big = defaultScenario();
  big.name = 'Prompt lengths from a trace';
  big.run.horizon_s = 3600;
  big.classes[1].input_tokens = {
    kind: 'empirical',
    values: Array.from({ length: 700_000 }, (_, i) => 1 + ((i * 7919) % 4000)),
  };
  await page.getByLabel('Import JSON').setInputFiles({
    name: 'trace.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(big)),
  });
  const alert = page.getByRole('alert').filter({ hasText: 'too large for a link' });
  await waitForShown(alert, 'the message');
  assert.match(await alert.innerText(), /use Export/);
  await screenshot(page, 'too-large-for-a-link', { fullPage: false });
  assert.doesNotMatch(page.url(), /[?&]s=/, 'no stale link is left in the address bar');
  assert.deepEqual(errors, []);
  await page.reload();
  await waitFor(page, 'the kept scenario', async () =>
    (await page.getByLabel('Scenario name').inputValue()) === 'Prompt lengths from a trace');
  // (The reload aborts the old page's loading workers: their blob: script,
  // worker.js or worker_bg.wasm, whichever is in flight.)
  const aborted = /^request failed: (blob:|\S*\/worker(\.js|_bg\.wasm) ).*ERR_ABORTED/;
  assert.deepEqual(errors.filter((e) => !aborted.test(e)), []);
  await page.context().close();
});

test('screenshots: desktop and narrow, light and dark', async () => {
  for (const colorScheme of ['light', 'dark']) {
    for (const [name, viewport] of [
      ['desktop', { width: 1440, height: 900 }],
      ['narrow', { width: 390, height: 844 }],
    ]) {
      const { page, errors } = await site.openPage(linkQuery(quickScenario()), { viewport, colorScheme });
      await waitForResults(page);
      await waitForDone(page);
      await screenshot(page, `${name}-${colorScheme}`, { fullPage: name === 'narrow' });
      if (name === 'desktop') {
        await page.locator('.outputs').screenshot({ path: `screenshots/results-${colorScheme}.png` });
      }
      // (The sticky toolbar would be stamped over the tall section where the
      // viewport stood.)
      await page.locator('.plan-results').screenshot({
        path: `screenshots/plan-${name}-${colorScheme}.png`,
        style: '.toolbar { visibility: hidden; }',
      });
      assert.deepEqual(errors, []);
      await page.context().close();
    }
  }
});
