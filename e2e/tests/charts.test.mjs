// The plan's charts as a reader meets them (the service curve follows the
// target that binds, the tornado's rows in the order of their bars) and the
// page's accessibility: axe-core finds nothing serious with every table
// open, Escape closes a help tip, a skip link leads to the results.

import assert from 'node:assert/strict';
import path from 'node:path';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { screenshotDir, siteForFile } from '../lib/harness.mjs';
import { waitFor, waitForDone, waitForResults } from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const require = createRequire(import.meta.url);
/** axe-core's browser bundle, from e2e's devDependencies. */
const axePath = require.resolve('axe-core/axe.min.js');

const site = siteForFile();

/**
 * The quick scenario with a TPOT target on the api class tight enough to
 * bind: the service curve must follow it rather than P(miss).
 */
function tpotScenario() {
  const s = quickScenario();
  s.name = 'Quick e2e scenario with a TPOT target';
  s.plan.targets = [
    { metric: 'miss_probability', epsilon: 0.01 },
    { metric: 'tpot_percentile', class: 'api', percentile: 0.9, bound_s: TPOT_BOUND_S },
  ];
  s.plan.service_curve.load_multipliers = [0.5, 1, 1.5, 2];
  return s;
}
const TPOT_BOUND_S = 0.03;

/** Opens `scenario` and waits for its plan. */
async function planned(scenario, options = {}) {
  const opened = await site.openPage(linkQuery(scenario), options);
  await waitForResults(opened.page);
  await waitForDone(opened.page);
  return opened;
}

/** Saves a screenshot of one element as `screenshots/<name>.png`. */
async function shoot(locator, name) {
  await locator.scrollIntoViewIfNeeded();
  await locator.screenshot({ path: path.join(screenshotDir, `${name}.png`) });
}

const curveChart = (page) => page.locator('#curve-figure [role="img"]');
const tornadoChart = (page) => page.locator('#tornado-figure [role="img"]');

test('the service curve follows the binding TPOT target and marks today and the limit', async () => {
  const { page, errors } = await planned(tpotScenario());
  const label = await curveChart(page).getAttribute('aria-label');
  assert.match(label, /^Service curve: p90 TPOT of api and goodput against offered load/, label);
  assert.match(label, /today 1x/, 'today\'s load is marked');
  assert.match(label, /SLA limit \d[\d.]*x|stays within 30 ms at every load tried/, 'the limit, or that none was reached');
  assert.match(label, /(Traffic can grow \d+%|traffic can grow at least \d+%)/, 'the headroom in words');
  const texts = await curveChart(page).evaluate((svg) =>
    Array.from(svg.querySelectorAll('text'), (t) => t.textContent.trim()),
  );
  assert.ok(texts.includes('p90 TPOT of api (mean)'), `the legend names the metric: ${texts.join(' | ')}`);
  assert.ok(texts.includes('bound 30 ms'), 'the bound is drawn');
  assert.ok(texts.includes('today 1x'), 'today\'s load is marked');
  await shoot(page.locator('#curve-figure'), 'charts-service-curve-desktop');
  assert.deepEqual(errors, []);
  await page.context().close();
});

/**
 * The tornado as drawn: for each row, top to bottom, the width its bars
 * cover together, and the top of the legend's samples (opaque squares,
 * where the bars are drawn a little transparent: plotters writes an
 * opacity on every element, 0.85 on the bars).
 */
async function tornadoGeometry(page) {
  return tornadoChart(page).evaluate((svg) => {
    const box = (r) => {
      const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((a) => Number(r.getAttribute(a)));
      return { left: x, right: x + w, top: y, bottom: y + h };
    };
    const rects = Array.from(svg.querySelectorAll('rect')).filter((r) => r.getAttribute('width') !== '100%');
    const opacity = (r) => Number(r.getAttribute('opacity') ?? 1);
    const bars = rects.filter((r) => opacity(r) < 0.9).map(box);
    const samples = rects
      .filter((r) => opacity(r) === 1 && r.getAttribute('fill') !== 'none' && Number(r.getAttribute('width')) <= 16)
      .map(box);
    // Each row holds two bars half its height, one above the other; rows
    // are counted from the top bar's top.
    const barPx = Math.max(...bars.map((b) => b.bottom - b.top));
    const firstTop = Math.min(...bars.map((b) => b.top));
    const rows = new Map();
    for (const bar of bars) {
      const row = Math.floor(((bar.top + bar.bottom) / 2 - firstTop) / (2 * barPx));
      const entry = rows.get(row) ?? { row, left: Infinity, right: -Infinity };
      rows.set(row, { row, left: Math.min(entry.left, bar.left), right: Math.max(entry.right, bar.right) });
    }
    const texts = Array.from(svg.querySelectorAll('text'), (t) => t.textContent);
    return {
      rows: [...rows.values()].sort((a, b) => a.row - b.row),
      barsBottom: Math.max(...bars.map((b) => b.bottom)),
      samplesTop: Math.min(...samples.map((s) => s.top)),
      texts,
    };
  });
}

test('the tornado lists its rows by the length drawn, none under the legend', async () => {
  const { page, errors } = await planned(tpotScenario());
  const figure = page.locator('#tornado-figure');
  for (const metric of ['Cost per success', 'P(miss)']) {
    await figure.getByLabel('What the tornado shows').selectOption({ label: metric });
    await waitFor(page, `the ${metric} tornado`, async () =>
      metric === 'P(miss)'
        ? /change in P\(miss\)/.test(await tornadoChart(page).getAttribute('aria-label'))
        : true,
    );
    const { rows, barsBottom, samplesTop, texts } = await tornadoGeometry(page);
    const lengths = rows.map((r) => r.right - r.left);
    for (let i = 1; i < lengths.length; i++) {
      assert.ok(lengths[i] <= lengths[i - 1] + 0.5, `${metric}: row ${i + 1} (${lengths[i]} px) is longer than the row above (${lengths[i - 1]} px)`);
    }
    assert.ok(samplesTop > barsBottom, `${metric}: the legend (top ${samplesTop}) is under every bar (bottom ${barsBottom})`);
    for (const input of ['arrival rate', 'output tokens', 'price']) {
      assert.ok(texts.some((t) => t.trim() === input), `${metric}: the ${input} row is labelled`);
    }
    assert.ok(!texts.some((t) => /\d\.\d{6,}/.test(t)), `${metric}: ticks are rounded: ${texts.join(' | ')}`);
    if (metric === 'Cost per success') {
      await shoot(figure, 'charts-tornado-desktop');
    }
  }
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('axe finds nothing serious or critical with the plan showing and every table open', async () => {
  const { page, errors } = await planned(tpotScenario());
  await page.evaluate(() => {
    for (const details of document.querySelectorAll('details')) details.open = true;
  });
  // Tables and charts open lazily: wait until every one has content.
  // (A data table has its summary and CSV button before its rows.)
  await waitFor(page, 'every disclosure to fill', () =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll('details')).every((d) =>
        d.classList.contains('data-table') ? d.querySelector('.table-scroll') !== null : d.children.length > 1,
      ),
    ),
  );
  await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  assert.deepEqual(violations, []);
  // Every control sits in a landmark (axe's "region" rule is moderate, so
  // it is checked here by name).
  const outside = await page.evaluate(async () => {
    const result = await window.axe.run(document, { runOnly: ['region'] });
    return result.violations.flatMap((v) => v.nodes.map((n) => n.target.join(' ')));
  });
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('Escape closes a help tip, and help buttons are at least 24 px', async () => {
  const { page, errors } = await planned(quickScenario());
  const button = page.getByRole('button', { name: /^What is .*\?$/ }).first();
  const tip = page.locator(`#${await button.getAttribute('aria-describedby')}`);
  await button.focus();
  assert.ok(await tip.isVisible(), 'the tip shows on focus');
  await page.keyboard.press('Escape');
  assert.ok(!(await tip.isVisible()), 'Escape hides it while the focus stays');
  const size = await button.boundingBox();
  assert.ok(size.width >= 24 && size.height >= 24, `${size.width} x ${size.height} px`);
  // Focus moving on shows tips again.
  const field = page.getByRole('textbox', { name: 'Seed', exact: true });
  await field.focus();
  const fieldTip = page.locator(`#${(await field.getAttribute('aria-describedby')).split(' ')[0]}`);
  assert.ok(await fieldTip.isVisible(), 'the next tip shows');
  await page.keyboard.press('Escape');
  assert.ok(!(await fieldTip.isVisible()), 'and Escape closes it too');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a skip link is the first stop and moves the focus to the results', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => document.activeElement?.textContent?.trim());
  assert.equal(first, 'Skip to results');
  await page.keyboard.press('Enter');
  await waitFor(page, 'the focus on the results', () =>
    page.evaluate(() => document.activeElement?.id === 'results'),
  );
  assert.ok(await page.getByRole('heading', { name: 'Results', exact: true }).isVisible());
  assert.deepEqual(errors, []);
  await page.context().close();
});
