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

/** The chosen fleet's name on the frontier chart and what it must not
 * cover, in the SVG's coordinates: its two lines of text, the 1x line
 * (at the "1x" tick's height, across the plot), every polyline's
 * segments (the frontier), every dot and ring, and every other text. */
const chosenLabel = (page) =>
  page.locator('#pareto-figure svg').first().evaluate((svg) => {
    const texts = Array.from(svg.querySelectorAll('text')).map((t) => {
      const b = t.getBBox();
      return { text: t.textContent.trim(), box: [b.x, b.y, b.x + b.width, b.y + b.height] };
    });
    const at = texts.findIndex((t) => t.text.startsWith('chosen: '));
    const tick = texts.find((t) => t.text === '1x');
    const segments = Array.from(svg.querySelectorAll('polyline')).flatMap((l) => {
      const points = l.getAttribute('points').trim().split(/\s+/).map((p) => p.split(',').map(Number));
      return points.slice(1).map((p, i) => [points[i], p]);
    });
    const dots = Array.from(svg.querySelectorAll('circle')).map((c) => [
      Number(c.getAttribute('cx')),
      Number(c.getAttribute('cy')),
      Number(c.getAttribute('r')),
    ]);
    const plotLeft = Math.max(...texts.filter((t) => /x$/.test(t.text)).map((t) => t.box[2]));
    return {
      label: at < 0 ? [] : texts.slice(at, at + 2),
      others: texts.filter((_, i) => i !== at && i !== at + 1),
      bound: tick && { y: (tick.box[1] + tick.box[3]) / 2, from: plotLeft },
      segments,
      dots,
    };
  });

/** Whether boxes [left, top, right, bottom] overlap (touching counts). */
const overlap = (a, b) => a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];

for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
  // Issue 40: the chosen fleet's name sat on the 1x line.
  test(`at ${viewport.width} px the chosen fleet's name covers no line, dot or other label of the frontier chart`, async () => {
    const { page, errors } = await site.openPage(linkQuery(chat70bScenario()), { viewport });
    await waitForDone(page, { limitMs: 20 * 60_000 });
    const { label, others, bound, segments, dots } = await chosenLabel(page);
    assert.equal(label.length, 2, JSON.stringify(label));
    assert.ok(bound, 'the 1x tick');
    await page.locator('#pareto-figure').scrollIntoViewIfNeeded();
    await screenshot(page, `frontier-chosen-label-${viewport.width}`, { fullPage: false });
    for (const { text, box } of label) {
      // The 1x line: 2 px wide, across the plot.
      const line = [bound.from, bound.y - 1, Infinity, bound.y + 1];
      assert.ok(!overlap(box, line), `"${text}" ${JSON.stringify(box)} covers the 1x line at y ${bound.y}`);
      for (const [[x0, y0], [x1, y1]] of segments) {
        const segment = [Math.min(x0, x1) - 1, Math.min(y0, y1) - 1, Math.max(x0, x1) + 1, Math.max(y0, y1) + 1];
        assert.ok(!overlap(box, segment), `"${text}" ${JSON.stringify(box)} covers a line ${JSON.stringify(segment)}`);
      }
      for (const [cx, cy, r] of dots) {
        assert.ok(!overlap(box, [cx - r, cy - r, cx + r, cy + r]), `"${text}" ${JSON.stringify(box)} covers a dot at ${cx},${cy}`);
      }
      for (const other of others) {
        assert.ok(!overlap(box, other.box), `"${text}" ${JSON.stringify(box)} covers "${other.text}" ${JSON.stringify(other.box)}`);
      }
    }
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}
