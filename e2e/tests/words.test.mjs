// The page in the user's words and still while it fills in: a refused
// share link or imported file names the field as the form labels it (never
// an engine path such as `classes[0].load.requests[1].input_tokens`), and
// the service curve's sentence arriving with the plan moves nothing below
// the chart.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { screenshot, screenshotDir, siteForFile } from '../lib/harness.mjs';
import { runButton, verdict, waitFor, waitForDone, waitForResults, waitForShown } from '../lib/page.mjs';
import { defaultScenario, linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

/** An engine path: a name with an index, or two names joined by a dot. */
const ENGINE_PATH = /[a-z_]+\[\d+\]|[a-z]+_[a-z_]+\.[a-z_]+|\b(classes|plan|engine|model|run)\.[a-z_]/;

test('a share link with a bad trace request names it in words, 1-based', async () => {
  const s = quickScenario();
  s.classes[0].name = 'chat';
  s.classes[0].load = {
    kind: 'trace',
    requests: [
      { arrival_s: 0, input_tokens: 100, output_tokens: 20 },
      { arrival_s: 1, input_tokens: 0, output_tokens: 20 },
    ],
  };
  const { page, errors } = await site.openPage(linkQuery(s));
  await waitFor(page, 'Run to be blocked', () => runButton(page).isDisabled());
  const reason = await page.locator('#run-reason').innerText();
  assert.match(reason, /Class "chat", trace request 2, input tokens: /, reason);
  assert.doesNotMatch(reason, ENGINE_PATH, reason);
  await screenshot(page, 'words-link-trace-request', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('an imported file with a bad target and a bad class lists them in the form\'s words', async () => {
  const { page, errors } = await site.openPage();
  await waitForResults(page);
  const bad = defaultScenario();
  bad.classes[1].deadline_s = -5;
  bad.plan.targets = [
    { metric: 'miss_probability', epsilon: 0.01 },
    { metric: 'tpot_percentile', percentile: 0.9, bound_s: -1 },
  ];
  await page.getByLabel('Import JSON').setInputFiles({
    name: 'bad.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(bad)),
  });
  const alert = page.getByRole('alert').filter({ hasText: 'Imported bad.json' });
  await waitForShown(alert, 'the import\'s message');
  const text = await alert.innerText();
  assert.match(text, /Class "api", deadline \(SLA\): must be a positive number, got -5/, text);
  assert.match(text, /SLA target 2, at most: /, text);
  assert.doesNotMatch(text, ENGINE_PATH, text);
  // The results shown are the earlier scenario's, and nothing brings them
  // up to date until the inputs are fixed (a run still going is for the
  // earlier inputs too).
  assert.equal(
    await page.locator('.results-head .stale.shown').innerText(),
    'for earlier inputs: fix the inputs to run',
  );
  await screenshot(page, 'words-import-problems', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});

/** Saves a screenshot of the service curve and what follows it, `screenshots/<name>.png`. */
async function shootCurve(page, name) {
  const box = await page.evaluate(() => {
    const top = document.getElementById('curve-figure').getBoundingClientRect();
    const below = document.getElementById('tornado-figure').getBoundingClientRect();
    return { x: top.left + scrollX, y: top.top + scrollY, width: top.width, height: below.top - top.top + 60 };
  });
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true, clip: box });
}

/**
 * How far below the service curve's top the chart under it (the tornado)
 * starts [px]: what a sentence arriving with the plan, in the curve or
 * between the two, would push down. (Content above the curve also arrives
 * with the plan, so the curve's own position is no measure.)
 */
function gapBelowCurve(page) {
  return page.evaluate(() => {
    const curve = document.getElementById('curve-figure');
    const below = document.getElementById('tornado-figure');
    if (!curve || !below) return null;
    return below.getBoundingClientRect().top - curve.getBoundingClientRect().top;
  });
}

/**
 * The quick scenario with a TPOT target that binds: the curve's sentence
 * is then at its longest (how far traffic can grow before the target
 * breaks, and why the operating point is where it is).
 */
function tpotScenario() {
  const s = quickScenario();
  s.name = 'Quick e2e scenario with a TPOT target';
  s.plan.targets = [
    { metric: 'miss_probability', epsilon: 0.01 },
    { metric: 'tpot_percentile', class: 'api', percentile: 0.9, bound_s: 0.03 },
  ];
  s.plan.service_curve.load_multipliers = [0.5, 1, 1.5, 2];
  return s;
}

for (const width of [1280, 390]) {
  test(`the service curve's sentence moves nothing below the chart (${width} px)`, async () => {
    const { page, errors } = await site.openPage(linkQuery(tpotScenario()), {
      viewport: { width, height: 900 },
    });
    const waiting = await waitFor(page, 'the curve placeholder', async () => {
      const label = await page.locator('#curve-figure [role="img"]').getAttribute('aria-label').catch(() => null);
      return label?.startsWith('Service curve: ') && label.endsWith('…') ? await gapBelowCurve(page) : null;
    });
    await waitForDone(page);
    const label = await page.locator('#curve-figure [role="img"]').getAttribute('aria-label');
    assert.match(label, /operating point/i, 'the curve itself is drawn');
    const done = await gapBelowCurve(page);
    assert.ok(Math.abs(done - waiting) <= 1, `the element below the curve moved ${done - waiting} px`);
    await shootCurve(page, `words-curve-done-${width}`);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}

test('a plan over its budget names the fields to change as the form labels them', async () => {
  // The api stream at 25 requests a second: one day's run fits a run's
  // budget, but the high-demand case's does not, so the plan stops
  // before its first run with the engine's advice.
  const s = defaultScenario();
  s.classes[1].batches_per_hour = 90000;
  const { page, errors } = await site.openPage(linkQuery(s));
  const plan = verdict(page).locator('#verdict-plan');
  await waitFor(page, 'the plan\'s failure', async () => /^The plan failed/.test(await plan.innerText()));
  const text = await plan.innerText();
  assert.match(text, /lower “Class "api", batch arrivals” or shorten “Simulation, horizon”/, text);
  assert.doesNotMatch(text, ENGINE_PATH, text);
  assert.deepEqual(errors, []);
  await page.context().close();
});
