// Issue 40, items 1 and 2: a verdict that matches its numbers (a gross
// miss reads "not met", with the share of requests over the bound that
// decided it) and one figure per quantity (where the headline, the verdict
// and the plan's tables show different figures for what sounds like one
// quantity, their labels say why: all classes against one class, one
// simulation against the plan's replications, busy time against offered
// work, a bound over one seed against one over the plan's replications).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { figure, headline, openTables, tableRows, verdict, verdictTable, waitForDone } from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

/** The quick default scenario with api's p99 TTFT held to 2 s: under FCFS
 * the nightly batch's hundreds of requests arrive together and queue
 * ahead of api's, so the configured fleet's p99 TTFT is minutes. */
function ttftScenario() {
  const s = quickScenario();
  s.name = 'A hundredfold TTFT miss';
  s.plan.targets = [{ metric: 'ttft_percentile', class: 'api', percentile: 0.99, bound_s: 2 }];
  // The default rule (the golden link's scenario predates it).
  s.plan.decision = 'upper95';
  return s;
}

/** Seconds of a duration as the page writes it ("3.7 min", "850 ms", "12 s";
 * "never" for a percentile beyond every request that reached the event). */
function seconds(text) {
  if (text.startsWith('never')) return Infinity;
  const m = text.match(/^([\d,.]+) (ms|s|min|h)\b/);
  assert.ok(m, `a duration: ${text}`);
  const unit = { ms: 0.001, s: 1, min: 60, h: 3600 }[m[2]];
  return Number(m[1].replace(/,/g, '')) * unit;
}

test('a fleet with a hundredfold TTFT miss reads "not met", with the share of requests over the bound', async () => {
  const { page, errors } = await site.openPage(linkQuery(ttftScenario()));
  await waitForDone(page);
  await verdict(page).scrollIntoViewIfNeeded();
  await page.setViewportSize({ width: 1280, height: 900 });
  await screenshot(page, 'verdict-hundredfold-1280', { fullPage: false });
  const rows = await tableRows(verdictTable(page));
  const row = rows.find((r) => r.target.startsWith('api: p99 TTFT <= 2 s'));
  assert.ok(row, rows.map((r) => r.target).join(' | '));
  const value = row['configured fleet: value (bound)'];
  // A gross miss: at least 50 times the bound, judged over the plan's
  // replications (not the one simulation, where the value is its own
  // bound and was "not met" before issue 40 too).
  assert.ok(seconds(value) >= 100, value);
  assert.match(await verdict(page).innerText(), /Targets: the configured fleet \(2 replicas, \d+ replications\)/);
  assert.equal(row['configured fleet: verdict'], 'not met', JSON.stringify(row));
  // Said with the data that decided it, or with an interval wholly beyond;
  // the bound as the target wrote it, "2 s" (the verdict wrote "2.0 s").
  assert.match(value, /^[\d.,]+ (s|min|h) \(([\d.]+ % over 2 s|up to [\d.,]+ (s|min|h))\)$|^[\d.,]+ (s|min|h)$/, value);
  // The decision rule beside it names the share test.
  assert.match(
    await verdict(page).locator('.verdict-rule').innerText(),
    /not met when the lower end is beyond it, or when the share of requests over the bound, pooled over every replication's requests, is beyond the share the target allows/,
  );
  // The count sentence agrees with the row.
  assert.match(await verdict(page).innerText(), /The configured fleet, 2 replicas of [^:]+: 1 of 2 targets met, 1 not met over \d+ replications/);
  await page.setViewportSize({ width: 390, height: 844 });
  await verdict(page).scrollIntoViewIfNeeded();
  await screenshot(page, 'verdict-hundredfold-390', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('the headline, the verdict and the plan tables say which P(miss), utilization and worst check each shows', async () => {
  const s = quickScenario();
  s.plan.targets = [{ metric: 'miss_probability', class: 'api', epsilon: 0.01 }];
  s.plan.decision = 'upper95';
  const { page, errors } = await site.openPage(linkQuery(s));
  await waitForDone(page);
  const top = await headline(page).innerText();
  // The headline's P(miss) is every class together, in one simulation...
  assert.match(top, /P\(miss\), all classes/);
  assert.match(top, /one simulation, every class together \(95% CI [\d.]+[–-][\d.]+ %\); the verdict judges each class against its target/);
  const headlineMiss = await figure(page, 'P(miss), all classes');
  // ...the verdict's is api's alone, over the plan's replications: the
  // table says so in its caption and its row.
  const caption = await verdict(page).innerText();
  assert.match(caption, /Targets: the configured fleet \(2 replicas, \d+ replications\)/);
  const rows = await tableRows(verdictTable(page));
  const api = rows.find((r) => r.target.startsWith('api: P(sojourn > 60 s)'));
  assert.ok(api, rows.map((r) => r.target).join(' | '));
  // The same quantity (all classes, one simulation of the configured
  // fleet) has one value wherever it appears: the headline and the cases.
  await openTables(page);
  const cases = await tableRows(page.locator('#table-scenarios table'));
  const expected = cases.find((r) => r.case === 'expected demand');
  assert.equal(expected['P(miss), configured fleet'], headlineMiss);
  const casesTitle = await page.locator('#table-scenarios summary').innerText();
  assert.match(casesTitle, /P\(miss\) of the configured fleet: all classes, one simulation/);
  // Worst check: a bound over the plan's replications in the cases, over
  // the sensitivity's one seed there, and each title says which.
  assert.match(casesTitle, /the plan's fleet's worst check: its largest 95% bound over the plan's replications \/ its target/);
  const sensitivityTitle = await page.locator('#table-sensitivity summary').innerText();
  assert.match(sensitivityTitle, /1 seed\), .*worst check the largest bound over this one seed \/ its target \(with one seed, the value itself/);
  // Utilization is busy time; the sustainable target reads offered work,
  // and the utilization card names that figure.
  const utilization = headline(page).locator('.metric', { has: page.locator('dt', { hasText: 'Utilization' }) }).first();
  assert.match(
    await utilization.innerText(),
    /busy time: .*; not the offered work against capacity \([\d.]+ %\), which the sustainable target reads/,
  );
  assert.ok(rows.some((r) => /^sustainable: the offered work takes <= /.test(r.target)));
  assert.deepEqual(errors, []);
  await page.context().close();
});

/** The platform engineer's 70B scenario of issue 40: Llama 3.1 70B on H100
 * x4 against H200 x2, a chat class held to p99 TTFT <= 2 s and p99 TPOT <=
 * 80 ms beside a nightly batch class (built from the shipped chat
 * example). */
async function seventyB() {
  const { readFile } = await import('node:fs/promises');
  const { fileURLToPath } = await import('node:url');
  const path = await import('node:path');
  const here = path.dirname(fileURLToPath(import.meta.url));
  const s = JSON.parse(await readFile(path.join(here, '..', '..', 'scenarios', 'interactive-chat.json'), 'utf8'));
  s.name = '70B chat and nightly batch: H100 x4 against H200 x2';
  s.classes.push({
    name: 'nightly-batch',
    batches_per_hour: 1,
    batch_size: { kind: 'log_normal', median: 1500, p90: 5000, max: 20000 },
    time_of_day: [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
    input_tokens: { kind: 'log_normal', median: 2000, p90: 6000, max: 32000 },
    output_tokens: { kind: 'log_normal', median: 300, p90: 1000, max: 4000 },
    priority: 0,
    deadline_s: 8 * 3600,
  });
  s.replica.gpus_per_replica = 4;
  // One replica configured: a nightly batch of thousands of requests
  // queues ahead of chat under FCFS, so the configured fleet misses its
  // TTFT target grossly.
  s.cluster.replicas = 1;
  s.plan.targets = [
    { metric: 'ttft_percentile', class: 'chat', percentile: 0.99, bound_s: 2 },
    { metric: 'tpot_percentile', class: 'chat', percentile: 0.99, bound_s: 0.08 },
  ];
  s.plan.candidates = [
    s.plan.candidates.find((c) => c.name === 'H100 SXM x4'),
    { name: 'H200 SXM x2', hardware_preset: 'h200-sxm', gpus_per_replica: 2, usd_per_gpu_hour: 3.5 },
  ];
  return s;
}

test('on the 70B chat and batch scenario, no gross miss reads "uncertain" and the figures say what they are', async () => {
  const { page, errors } = await site.openPage(linkQuery(await seventyB()));
  // (A 70B plan: twice the usual limit.)
  await waitForDone(page, { limitMs: 20 * 60_000 });
  await verdict(page).scrollIntoViewIfNeeded();
  await screenshot(page, 'verdict-70b-agreement', { fullPage: false });
  const rows = await tableRows(verdictTable(page));
  const bounds = { 'chat: p99 TTFT <= 2 s': 2, 'chat: p99 TPOT <= 80 ms': 0.08 };
  let gross = 0;
  for (const [target, bound] of Object.entries(bounds)) {
    const row = rows.find((r) => r.target.startsWith(target));
    assert.ok(row, rows.map((r) => r.target).join(' | '));
    for (const fleet of ['configured fleet', "plan's fleet"]) {
      const value = row[`${fleet}: value (bound)`];
      // Ten times the bound or more is a gross miss: never "uncertain".
      if (value && seconds(value) >= 10 * bound) {
        assert.equal(row[`${fleet}: verdict`], 'not met', `${fleet}: ${JSON.stringify(row)}`);
        gross += 1;
      }
    }
  }
  // The one-replica configured fleet's TTFT is such a miss.
  assert.ok(gross >= 1, JSON.stringify(rows));
  assert.match(await headline(page).innerText(), /P\(miss\), all classes/);
  assert.match(await headline(page).innerText(), /not the offered work against capacity \([\d.]+ %\), which the sustainable target reads/);
  // The cases say which P(miss) and which worst check they show. (A worst
  // check is an upper bound: with 2 replications it can be many times the
  // target while the runs' requests leave the fleet near it, so a large
  // ratio beside "uncertain" is not by itself a contradiction; the share
  // over the bound decides, as in the verdict.)
  await openTables(page);
  assert.match(
    await page.locator('#table-scenarios summary').innerText(),
    /P\(miss\) of the configured fleet: all classes, one simulation; the plan's fleet's worst check: its largest 95% bound over the plan's replications/,
  );
  assert.deepEqual(errors, []);
  await page.context().close();
});
