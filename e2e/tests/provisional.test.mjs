// The plan's search decides before the rest of the plan has run: the page
// shows its choice, marked provisional, while the demand cases, the
// service curve and sensitivity still run, and the complete plan then
// takes its place.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import {
  VERDICTS,
  cdfShown,
  inPageWhen,
  pageTimeWhen,
  planShown,
  tableRows,
  verdictTable,
  waitFor,
  waitForDone,
} from '../lib/page.mjs';

const site = siteForFile();

/**
 * The page's clock when the verdict first shows a provisional plan, with
 * the verdict's plan block as it read then.
 */
function whenProvisional(page) {
  return inPageWhen(
    page,
    () => {
      const verdict = document.getElementById('verdict-plan')?.innerText ?? '';
      return verdict.includes("Provisional: the search's choice") && { ms: Math.round(performance.now()), verdict };
    },
    { plan: true },
  );
}

/** The plan's headline figures: label, value and detail of each. */
function planFigures(page) {
  return page.locator('.plan-metrics .metric').evaluateAll((cards) =>
    cards.map((card) => ({
      label: card.querySelector('dt').innerText.trim(),
      value: card.querySelector('.metric-value').innerText.trim(),
      detail: card.querySelector('.metric-detail').innerText.trim(),
    })),
  );
}

/** The plan's headline heading as shown (a hidden label is not). */
function headlineHeading(page) {
  return page.locator('h3', { hasText: 'Cheapest configuration meeting the targets' }).innerText();
}

/** The height of the plan's headline figures [px]. */
function figuresHeight(page) {
  return page.locator('.plan-metrics').evaluate((el) => el.getBoundingClientRect().height);
}

/** The height of the verdict's plan block [px]. */
function verdictPlanHeight(page) {
  return page.locator('#verdict-plan').evaluate((el) => el.getBoundingClientRect().height);
}

/** The value of the figure whose label starts with `label`. */
const value = (figures, label) => figures.find((f) => f.label.startsWith(label)).value;

// (Prints when the search's choice and the whole plan appear.)
test("the search's choice shows, marked provisional, before the plan is complete", async () => {
  const { page, errors } = await site.openPage();
  const firstResults = await pageTimeWhen(page, cdfShown);
  const early = await whenProvisional(page);
  // The plan runs on for seconds after its search, so these read the
  // provisional figures.
  early.figures = await planFigures(page);
  early.heading = await headlineHeading(page);
  early.figuresHeight = await figuresHeight(page);
  early.verdictHeight = await verdictPlanHeight(page);
  await screenshot(page, 'plan-provisional', { fullPage: false });
  const planned = await pageTimeWhen(page, planShown, { plan: true });
  console.log(
    `default scenario: the search's choice ${early.ms - firstResults} ms and the whole plan ` +
      `${planned - firstResults} ms after the first results (${early.ms} and ${planned} ms after navigation)`,
  );
  assert.ok(early.ms < planned, 'the choice comes before the complete plan');
  // The provisional headline names a configuration and a fleet, and its
  // heading says it is provisional.
  assert.match(value(early.figures, 'Planned configuration'), /, priority$/);
  assert.match(value(early.figures, 'Planned replicas'), /^\d+ \+ \d+$/);
  assert.equal(early.figures.length, 3);
  assert.match(early.heading, /provisional: the search's choice$/);
  assert.match(early.verdict, /^The plan: \d+ \+ \d+ replicas of .+, priority/);
  assert.match(early.verdict, /Provisional: the search's choice; the service curve can still add replicas\.$/);
  // The figures keep their size, so nothing below moves when the complete
  // plan comes.
  assert.ok(Math.abs(early.figuresHeight - (await figuresHeight(page))) < 1);

  // The complete plan takes its place: the same configuration, no longer
  // provisional.
  const final = await planFigures(page);
  assert.equal(value(final, 'Planned configuration'), value(early.figures, 'Planned configuration'));
  assert.equal(await headlineHeading(page), 'Cheapest configuration meeting the targets');
  const verdictText = await page.locator('#verdict-plan').innerText();
  assert.doesNotMatch(verdictText, /Provisional/);
  // The line saying what sets the fleet (one replica here: no target)
  // takes the provisional note's place, so the verdict keeps its height.
  assert.match(verdictText, /What sets the fleet: no target; one replica meets them all/);
  assert.ok(Math.abs(early.verdictHeight - (await verdictPlanHeight(page))) < 1);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('while changed inputs are re-planned, the earlier plan says so and the new choice shows, provisional', async () => {
  const { page, errors } = await site.openPage();
  await waitForDone(page);
  const staleMark = page.locator('#plan-heading .stale.shown');
  assert.equal(await staleMark.count(), 0);
  const deadline = page.getByLabel('Deadline (SLA)').first();
  await deadline.fill('23 h');
  await deadline.press('Tab');
  // The complete plan of the earlier inputs stays, marked, while the new
  // one runs; the headline and the verdict take the new search's choice.
  await waitFor(page, 'the earlier plan to be marked', async () => (await staleMark.count()) === 1);
  assert.match(await staleMark.innerText(), /^for earlier inputs/);
  const early = await whenProvisional(page);
  assert.match(early.verdict, /^The plan: \d+ \+ \d+ replicas of /);
  // The verdict table's plan's fleet is the new choice's, judged on the
  // new targets (the earlier plan knew no 23 h deadline).
  for (const row of await tableRows(verdictTable(page))) {
    assert.ok(VERDICTS.includes(row["plan's fleet: verdict"]), JSON.stringify(row));
  }
  await screenshot(page, 'plan-provisional-replan', { fullPage: false });
  await waitFor(page, 'the new plan', async () => (await staleMark.count()) === 0, { plan: true });
  await waitForDone(page);
  assert.doesNotMatch(await page.locator('#verdict-plan').innerText(), /Provisional/);
  assert.deepEqual(errors, []);
  await page.context().close();
});
