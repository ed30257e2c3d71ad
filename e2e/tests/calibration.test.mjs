// The calibration panel takes what `sojourn calibrate` takes (issue 40,
// item 7): pasted benchmark points are fitted in the page (in a worker,
// with Cancel), showing the fitted values and each point's error before and
// after; Apply puts the fit in the scenario (and its link), and the run's
// step time changes. vLLM's benchmark output (its result JSON, its printed
// summary) is read as points, and bad input names its row or key.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { waitFor, waitForResults } from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

/** Benchmark points about three times slower than the default model. */
const POINTS = `mode,clients,requests,input_tokens,output_tokens,output_tokens_per_s,mean_itl_ms,mean_ttft_ms
concurrency,1,8,512,128,38,25,70
concurrency,16,64,512,128,520,30,180
`;

/** vLLM's result file (`vllm bench serve --save-result`), its keys. */
const VLLM_JSON = JSON.stringify({
  date: '20250101-120000', backend: 'vllm', model_id: 'meta-llama/Llama-3.1-8B-Instruct',
  num_prompts: 64, request_rate: 'inf', burstiness: 1.0, max_concurrency: 16,
  duration: 15.2, completed: 64, total_input_tokens: 32768, total_output_tokens: 8192,
  request_throughput: 4.2, output_throughput: 520.0, total_token_throughput: 2676.0,
  mean_ttft_ms: 180.0, median_ttft_ms: 170.0, p99_ttft_ms: 300.0,
  mean_tpot_ms: 30.1, median_tpot_ms: 30.0, p99_tpot_ms: 33.0,
  mean_itl_ms: 30.0, median_itl_ms: 29.0, p99_itl_ms: 40.0,
});

/** The run's mean step [ms], from the Batches panel. */
const meanStep = (page) =>
  page.evaluate(() => {
    const m = document.body.textContent.match(/mean step ([\d.,]+) ms/);
    return m ? Number(m[1].replace(/,/g, '')) : null;
  });

async function openFitArea(page) {
  await page.getByText('Advanced: KV blocks, sequence length, step-time model').click();
  const box = page.getByLabel('Measured step times, benchmark points, vLLM benchmark output or a table');
  await box.waitFor();
  return box;
}

const fitArea = (page) => page.locator('.fit-area');

for (const width of [1280, 390]) {
  test(`pasted benchmark points fit in the page, with each point's error, and Apply changes the step time (${width} px)`, async () => {
    const { page, errors } = await site.openPage(linkQuery(quickScenario()), { viewport: { width, height: 900 } });
    await waitForResults(page);
    const before = await waitFor(page, 'the mean step', () => meanStep(page));
    const box = await openFitArea(page);
    await box.fill(POINTS);
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    // The fit runs in a worker: the page says so and offers Cancel.
    const summary = fitArea(page).getByText(/^Fitted \d of 8 parameters to 6 measured figures of benchmark points/);
    await waitFor(page, 'the fit', () => summary.isVisible());
    const text = await fitArea(page).innerText();
    assert.doesNotMatch(text, /sojourn calibrate POINTS/, 'no pointer to the CLI');
    // The fitted values and each point's error before and after.
    const tables = fitArea(page).locator('table');
    assert.equal(await tables.count(), 2, text);
    const points = await tables.nth(1).innerText();
    assert.match(points, /1 clients, 512 in \/ 128 out/);
    assert.match(points, /16 clients, 512 in \/ 128 out/);
    assert.match(points, /mean ITL \[ms\]/);
    assert.match(await tables.nth(0).innerText(), /overhead_s/);
    const url = page.url();
    // The summary at the top of the screen, below the sticky toolbar.
    await summary.evaluate((el) => {
      el.scrollIntoView({ block: 'start' });
      window.scrollBy(0, -(document.querySelector('.toolbar')?.getBoundingClientRect().height ?? 100) - 10);
    });
    await screenshot(page, `calibration-fit-${width}`, { fullPage: false });
    await fitArea(page).getByRole('button', { name: 'Apply' }).click();
    // The scenario carries the fit (its record shows, the link changes)
    // and the run's step time follows it: measured steps were slower.
    await waitFor(page, 'the record of the fit', () =>
      fitArea(page).getByText(/^This model was fitted to 6 benchmark points/).isVisible(),
    );
    await waitFor(page, 'the link to change', () => page.url() !== url);
    const after = await waitFor(page, 'a slower mean step', async () => {
      const ms = await meanStep(page);
      return ms !== null && ms > 1.5 * before ? ms : null;
    });
    assert.ok(after > 1.5 * before, `mean step ${before} ms before, ${after} ms after`);
    assert.deepEqual(errors, []);
  });
}

test('a pasted vLLM result file and printed summary become points and fit', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const box = await openFitArea(page);
  await box.fill(VLLM_JSON);
  await page.getByRole('button', { name: 'Fit', exact: true }).click();
  const summary = fitArea(page).getByText(/^Fitted \d of 8 parameters to 3 measured figures of benchmark points/);
  await waitFor(page, 'the fit of the vLLM result', () => summary.isVisible());
  assert.match(await fitArea(page).locator('table').nth(1).innerText(), /16 clients, 512 in \/ 128 out/);
  const printed = `============ Serving Benchmark Result ============
Successful requests:                     8
Maximum request concurrency:             1
Benchmark duration (s):                  27.10
Total input tokens:                      4096
Total generated tokens:                  1024
Request throughput (req/s):              0.30
Output token throughput (tok/s):         38.00
---------------Time to First Token----------------
Mean TTFT (ms):                          70.00
---------------Inter-token Latency----------------
Mean ITL (ms):                           25.00
==================================================`;
  await box.fill(printed);
  await page.getByRole('button', { name: 'Fit', exact: true }).click();
  await waitFor(page, 'the fit of the printed summary', () =>
    fitArea(page).locator('table').nth(1).getByText('1 clients, 512 in / 128 out').first().isVisible(),
  );
  assert.deepEqual(errors, []);
});

test('bad benchmark input names its row or key, and a running fit can be cancelled', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const box = await openFitArea(page);
  const alert = fitArea(page).getByRole('alert');
  await box.fill(POINTS.replace('concurrency,16,64', 'concurrency,16,lots'));
  await page.getByRole('button', { name: 'Fit', exact: true }).click();
  assert.equal(await alert.innerText(), 'row 3, column requests: "lots" is not a number');
  const noOutput = JSON.parse(VLLM_JSON);
  delete noOutput.total_output_tokens;
  await box.fill(JSON.stringify(noOutput));
  await page.getByRole('button', { name: 'Fit', exact: true }).click();
  assert.match(await alert.innerText(), /^vLLM result 1: no key "total_output_tokens"/);
  // Over the fit's budget: refused before any worker starts, by key.
  await box.fill(JSON.stringify({ ...JSON.parse(VLLM_JSON), completed: 200000, total_input_tokens: 200000 * 512, total_output_tokens: 200000 * 128, max_concurrency: null }));
  await page.getByRole('button', { name: 'Fit', exact: true }).click();
  assert.match(await alert.innerText(), /^Too large to fit: .*the largest: vLLM result 1, key "completed" \(200,000 requests\)/);
  // A long fit runs in the worker while the page answers; Cancel stops it.
  await box.fill(POINTS.replace('concurrency,1,8,512,128,', 'concurrency,128,4000,512,1024,'));
  await page.getByRole('button', { name: 'Fit', exact: true }).click();
  const running = fitArea(page).getByRole('status');
  await running.waitFor();
  assert.match(await running.innerText(), /^Fitting 2 benchmark points in a background worker/);
  // The page's thread is free: a click is handled at once.
  const started = Date.now();
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  assert.ok(Date.now() - started < 1000, 'the page answers while the fit runs');
  await fitArea(page).getByRole('button', { name: 'Cancel fit' }).click();
  assert.match(await alert.innerText(), /^Cancelled: the fit was stopped/);
  assert.equal(await running.count(), 0);
  assert.deepEqual(errors, []);
});

/** The bottom of the sticky toolbar, and an element's top and bottom, on
 * the screen [px]. */
const belowToolbar = (locator) =>
  locator.evaluate((el) => {
    const box = el.getBoundingClientRect();
    return {
      toolbar: document.querySelector('.toolbar').getBoundingClientRect().bottom,
      top: box.top,
      bottom: box.bottom,
      screen: window.innerHeight,
    };
  });

for (const width of [1280, 390]) {
  // Issue 40: scrolled to, the fit's summary sat under the sticky toolbar
  // (the suite scrolled back by the toolbar's height to see it), and the
  // record of an applied fit stayed out of sight.
  test(`the fit's summary and the record of an applied fit are scrolled to below the sticky toolbar (${width} px)`, async () => {
    const { page, errors } = await site.openPage(linkQuery(quickScenario()), { viewport: { width, height: 900 } });
    await waitForResults(page);
    const box = await openFitArea(page);
    await box.fill(POINTS);
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    const summary = fitArea(page).getByText(/^Fitted \d of 8 parameters/);
    await waitFor(page, 'the fit', () => summary.isVisible());
    // Shown, it is on the screen below the toolbar.
    let at = await waitFor(page, 'the summary in view', async () => {
      const b = await belowToolbar(summary);
      return b.top >= b.toolbar - 1 && b.bottom <= b.screen && b;
    });
    // A jump to it (as a link or a screen reader's "scroll to") too.
    await summary.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    at = await belowToolbar(summary);
    assert.ok(at.top >= at.toolbar - 1, `the summary's top at ${at.top} px, the toolbar's bottom at ${at.toolbar} px`);
    await screenshot(page, `calibration-summary-below-toolbar-${width}`, { fullPage: false });
    await fitArea(page).getByRole('button', { name: 'Apply' }).click();
    const record = fitArea(page).getByText(/^This model was fitted to 6 benchmark points/);
    await waitFor(page, 'the record of the fit', () => record.isVisible());
    at = await waitFor(page, 'the record in view', async () => {
      const b = await belowToolbar(record);
      return b.top >= b.toolbar - 1 && b.bottom <= b.screen && b;
    }, { limitMs: 5000 }).catch(() => belowToolbar(record));
    assert.ok(
      at.top >= at.toolbar - 1 && at.bottom <= at.screen,
      `the record from ${at.top} to ${at.bottom} px, the toolbar's bottom at ${at.toolbar} px, the screen ${at.screen} px`,
    );
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}

// Issue 40: a fit of benchmark points (seconds to a minute) showed no
// progress, only that it ran. It shows a progress bar with the replays
// made of the most it may make, beside Cancel.
test('a running fit shows its progress, replays made of the most, and keeps Cancel', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const box = await openFitArea(page);
  await box.fill(POINTS.replace('concurrency,1,8,512,128,', 'concurrency,128,4000,512,1024,'));
  await page.getByRole('button', { name: 'Fit', exact: true }).click();
  const running = fitArea(page).getByRole('status');
  await running.waitFor();
  const bar = fitArea(page).getByRole('progressbar', { name: 'Fit progress' });
  assert.equal(await bar.count(), 1, 'a progress bar from the start');
  // The progress once a replay is done, with Cancel beside it, or the
  // fit's end without any (read in one go: the fit may end at any time).
  const seen = await waitFor(page, 'the fit\'s progress or its end', () =>
    page.evaluate(() => {
      const area = document.querySelector('.fit-area');
      if (!area.querySelector('[role="status"]')) return { ended: true };
      const bar = area.querySelector('progress[aria-label="Fit progress"]');
      const told = bar?.getAttribute('aria-valuetext') ?? '';
      if (!/^\d+ of at most \d+ replays of the points$/.test(told)) return null;
      return {
        told,
        value: Number(bar.getAttribute('value')),
        words: area.querySelector('.fit-progress').innerText,
        cancel: Array.from(area.querySelectorAll('button')).some((b) => b.innerText.trim() === 'Cancel fit'),
      };
    }),
  );
  assert.ok(!seen.ended, 'the fit showed its progress before it ended');
  assert.ok(seen.value > 0 && seen.value <= 1, JSON.stringify(seen));
  assert.match(seen.words, /\d+ of at most 80 replays of the points/);
  assert.ok(seen.cancel, 'Cancel beside the progress');
  await screenshot(page, 'calibration-fit-progress', { fullPage: false });
  // Cancel stops it, unless it has just ended (a fit of a few seconds).
  const cancel = fitArea(page).getByRole('button', { name: 'Cancel fit' });
  if ((await running.count()) > 0) await cancel.click({ timeout: 5000 }).catch(() => {});
  const after = await waitFor(page, 'the fit cancelled or done', async () => {
    const text = await fitArea(page).innerText();
    return (/Cancelled: the fit was stopped/.test(text) || /Fitted \d of 8 parameters/.test(text)) && text;
  });
  assert.ok(after, 'cancelled or done');
  assert.equal(await bar.count(), 0, 'no progress once it stops');
  assert.deepEqual(errors, []);
  await page.context().close();
});
