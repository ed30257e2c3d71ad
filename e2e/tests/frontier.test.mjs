// The cost chart when a latency target binds (issue 40, item 5): on the
// 70B chat scenario every fleet misses next to nothing, so cost against
// P(miss) showed one cheap "uncertain" fleet as the whole frontier and
// left the chosen fleet off it. The chart plots cost against the worst
// target's margin (value over bound, every target counted), and the chosen
// fleet is on the frontier, ringed and named.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { openTables, tableRows, verdict, waitForDone } from '../lib/page.mjs';
import { chat70bScenario, linkQuery } from '../lib/scenario.mjs';

const site = siteForFile();

/** The frontier chart's ring (the chosen fleet) and the corners of its
 * staircase, in the SVG's coordinates. */
const drawn = (page) =>
  page.locator('#pareto-figure svg').first().evaluate((svg) => {
    const rings = Array.from(svg.querySelectorAll('circle'))
      .filter((c) => c.getAttribute('fill') === 'none' && c.getAttribute('r') === '10')
      .map((c) => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]);
    const lines = Array.from(svg.querySelectorAll('polyline')).map((l) =>
      l
        .getAttribute('points')
        .trim()
        .split(/\s+/)
        .map((p) => p.split(',').map(Number)),
    );
    return { rings, lines };
  });

test('when a latency target binds, the chosen fleet is on the frontier chart, ringed and named', async () => {
  const { page, errors } = await site.openPage(linkQuery(chat70bScenario()), { viewport: { width: 1280, height: 900 } });
  // (A 70B plan: twice the usual limit.)
  await waitForDone(page, { limitMs: 20 * 60_000 });
  const fleet = await verdict(page).locator('#verdict-plan .verdict-fleet').innerText();
  const [, replicas, reserve, configuration] = fleet.trim().match(/^The plan: (\d+) \+ (\d+) replicas? of (.+?)(?: \(.*)?$/) ?? [];
  assert.ok(configuration, fleet);
  // The chart names the chosen fleet, and the target nearest its bound.
  const chart = page.locator('#pareto-figure [role="img"]');
  const label = await chart.getAttribute('aria-label');
  assert.ok(label.includes(`chosen: ${configuration}, `) || label.includes(`chosen: ${configuration}: `), label);
  assert.ok(label.includes(`: ${replicas} + ${reserve} replicas`), label);
  assert.match(label, /nearest its bound: chat: p99 (TTFT|TPOT) <= /, label);
  // Its ring lies on the frontier's staircase.
  const { rings, lines } = await drawn(page);
  assert.equal(rings.length, 1, JSON.stringify(rings));
  const [ring] = rings;
  const onFrontier = lines.some((line) => line.some(([x, y]) => Math.abs(x - ring[0]) < 1 && Math.abs(y - ring[1]) < 1));
  assert.ok(onFrontier, `the ring ${ring} is a corner of the frontier: ${JSON.stringify(lines)}`);
  // And the table behind it says so.
  await openTables(page);
  const explored = await tableRows(page.locator('#table-explored table'));
  const chosen = explored.filter((r) => r.configuration.startsWith(configuration) && r.replicas === replicas);
  assert.equal(chosen.length, 1, JSON.stringify(explored));
  assert.equal(chosen[0]['on the frontier'], 'yes', JSON.stringify(chosen[0]));
  assert.match(chosen[0]['worst check'], /^[\d.]+x$/, JSON.stringify(chosen[0]));
  // Every fleet cheaper than the chosen one fails a target.
  const usd = (r) => Number(r['USD per month'].replace(/[$,]/g, ''));
  for (const r of explored.filter((r) => usd(r) < usd(chosen[0]))) {
    assert.match(r['worst check'], /\(fails\)$/, JSON.stringify(r));
  }
  await page.locator('#pareto-figure').scrollIntoViewIfNeeded();
  await screenshot(page, 'frontier-70b-1280', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});
