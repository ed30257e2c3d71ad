// Issue 40's done-when: the page as its two readers see it, saved and
// looked at. A platform engineer plans the 70B link at 1280 x 900: the
// verdict and what sets the fleet, the frontier, the plan's cost item by
// item. A finance partner opens the same shared link on a phone (390 x
// 844): the verdict, the cost per success, the cost breakdown. Each tour
// also checks the basics: the verdict is on screen, no table is cut and
// the page logs no error.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { figure, headline, openTables, tableTrouble, verdict, waitForDone } from '../lib/page.mjs';
import { chat70bScenario, linkQuery } from '../lib/scenario.mjs';

const site = siteForFile();

/** Scrolls `locator` to the top of the screen, below the sticky toolbar. */
const toTop = (locator) => locator.evaluate((el) => el.scrollIntoView({ block: 'start' }));

/** Whether the element's top is on the screen, below the toolbar. */
const topOnScreen = (locator) =>
  locator.evaluate((el) => {
    const top = el.getBoundingClientRect().top;
    const toolbar = document.querySelector('.toolbar').getBoundingClientRect().bottom;
    return top >= toolbar - 1 && top < window.innerHeight;
  });

/** Opens every table and says what is cut, after the screenshots (the
 * tables open change the page). */
async function noTableCut(page) {
  await openTables(page);
  const trouble = await tableTrouble(page);
  assert.deepEqual(trouble, [], JSON.stringify(trouble, null, 1));
}

test('a platform engineer plans the 70B link at 1280 x 900: verdict, what sets the fleet, frontier, cost', async () => {
  const viewport = { width: 1280, height: 900 };
  const { page, errors } = await site.openPage(linkQuery(chat70bScenario()), { viewport });
  await waitForDone(page, { limitMs: 20 * 60_000 });
  const shown = verdict(page);
  assert.ok(await topOnScreen(shown), 'the verdict starts on the first screen');
  assert.match(await shown.innerText(), /What sets the fleet: chat: p99 (TTFT|TPOT) <= /);
  await screenshot(page, 'tour-engineer-1-verdict', { fullPage: false });
  const frontier = page.locator('#pareto-figure');
  await toTop(frontier);
  assert.match(await frontier.locator('[role="img"]').getAttribute('aria-label'), /chosen: /);
  await screenshot(page, 'tour-engineer-2-frontier', { fullPage: false });
  const cost = page.getByRole('region', { name: 'Cost of the plan' });
  await toTop(cost);
  assert.match(await cost.innerText(), /Cost of the plan: \d+ \+ \d+ replicas of /);
  assert.ok(await topOnScreen(cost), 'the cost breakdown shows below the toolbar');
  await screenshot(page, 'tour-engineer-3-cost', { fullPage: false });
  await noTableCut(page);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a finance partner opens the shared 70B link on a phone: verdict, cost per success, cost breakdown', async () => {
  const viewport = { width: 390, height: 844 };
  const { page, errors } = await site.openPage(linkQuery(chat70bScenario()), { viewport });
  await waitForDone(page, { limitMs: 20 * 60_000 });
  assert.ok(await topOnScreen(verdict(page)), 'the verdict starts on the first screen');
  await screenshot(page, 'tour-finance-1-verdict', { fullPage: false });
  const perSuccess = await figure(page, 'Planned cost per success');
  assert.match(perSuccess, /^\$[\d.,]+/, perSuccess);
  assert.match(await figure(page, 'Cost per successful request'), /^\$[\d.,]+/);
  // The configured fleet's figures, then the plan's (one screen each).
  await toTop(headline(page));
  await screenshot(page, 'tour-finance-2-cost-per-success', { fullPage: false });
  await toTop(page.locator('dl.plan-metrics'));
  assert.ok(await topOnScreen(page.locator('dl.plan-metrics')), 'the plan\'s figures show below the toolbar');
  await screenshot(page, 'tour-finance-2b-planned-cost-per-success', { fullPage: false });
  const cost = page.getByRole('region', { name: 'Cost of the plan' });
  await toTop(cost);
  assert.ok(await topOnScreen(cost), 'the cost breakdown shows below the toolbar');
  await screenshot(page, 'tour-finance-3-cost', { fullPage: false });
  await noTableCut(page);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(wide <= 0, `the page scrolls sideways by ${wide} px`);
  assert.deepEqual(errors, []);
  await page.context().close();
});
