// Results computed for earlier inputs are marked until they are replaced
// (issue 40, item 3): the verdict at the top (the configured fleet's run
// and the plan's fleet), the headline figures and the plan's part are
// dimmed under a note that names the panels changed since and what brings
// them up to date; after an edit the run's results come back first, and
// the plan of the earlier inputs stays marked until its replacement comes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { inPageWhen, runButton, verdict, waitFor, waitForDone } from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

/** Each marked block of the results: its note, and how it is drawn. */
const marks = (page) =>
  page.evaluate(() => {
    const of = (el) => {
      const block = el?.closest('.result-block');
      const note = block?.querySelector(':scope > .stale-badge');
      return {
        marked: block?.classList.contains('is-stale') ?? false,
        note: note && getComputedStyle(note).display !== 'none' ? note.innerText.trim() : '',
        opacity: Number(getComputedStyle(el).opacity),
      };
    };
    return {
      verdict: of(document.querySelector('section.verdict')),
      plan: of(document.querySelector('section.plan-results')),
      cdf: of(document.getElementById('cdf-figure')),
      planFigures: document.querySelector('dl.plan-metrics')?.classList.contains('is-stale') ?? false,
      figures: document.querySelector('section.headline dl.metrics')?.classList.contains('is-stale') ?? false,
    };
  });

for (const width of [1280, 390]) {
  test(`a plan for earlier inputs is marked at the top during an edit, until its replacement comes (${width} px)`, async () => {
    const { page, errors } = await site.openPage(linkQuery(quickScenario()), { viewport: { width, height: 900 } });
    await waitForDone(page);
    const fresh = await marks(page);
    assert.equal(fresh.verdict.marked, false, 'current results are not marked');
    assert.equal(fresh.verdict.note, '');
    assert.equal(fresh.verdict.opacity, 1);
    // Runs wait for Run: after an edit every result is for earlier inputs.
    await page.getByLabel('Run on every change').uncheck();
    await page.getByLabel('Horizon', { exact: true }).fill('3 h');
    await waitFor(page, 'the results marked as earlier', async () => (await page.locator('.results-head .stale.shown').count()) === 1);
    const edited = await marks(page);
    // The verdict (the plan's fleet at the top, as in the 8B plan
    // under a 70B fleet), dimmed under a note naming the change.
    assert.ok(edited.verdict.marked, `the verdict is marked: ${JSON.stringify(edited)}`);
    assert.equal(edited.verdict.note, 'For earlier inputs (changed: Simulation): press Run');
    assert.ok(edited.verdict.opacity < 0.6, `the verdict is dimmed (opacity ${edited.verdict.opacity})`);
    assert.ok(edited.plan.marked && /^For earlier inputs \(changed: Simulation\)/.test(edited.plan.note), JSON.stringify(edited.plan));
    assert.ok(edited.cdf.marked, 'the run\'s charts are marked');
    assert.ok(edited.figures && edited.planFigures, 'the headline figures are dimmed');
    // The note is on screen, over the verdict's first line.
    const note = await page.locator('.result-block.is-stale > .stale-badge').first().boundingBox();
    assert.ok(note && note.width > 0 && note.x >= 0 && note.x + note.width <= width + 1, JSON.stringify(note));
    await verdict(page).scrollIntoViewIfNeeded();
    await screenshot(page, `stale-verdict-${width}`, { fullPage: false });
    // Run: the run's results come back first. Whenever they are current
    // while the plan shown is the earlier inputs' (no provisional plan of
    // these inputs in its place), the verdict stays marked, "updating".
    await runButton(page).click();
    const between = await inPageWhen(page, () => {
      if (document.querySelector('.results-head .stale.shown')) return null;
      const block = document.querySelector('section.verdict').closest('.result-block');
      const note = block.querySelector(':scope > .stale-badge');
      const status = document.querySelector('[role="status"][aria-label="Run status"]').innerText.trim();
      return {
        marked: block.classList.contains('is-stale'),
        note: getComputedStyle(note).display === 'none' ? '' : note.innerText.trim(),
        provisional: document.getElementById('verdict-plan')?.classList.contains('pending') ?? false,
        done: status === 'Done.',
      };
    });
    if (!between.done && !between.provisional) {
      assert.ok(between.marked, `the earlier plan is marked while the new one runs: ${JSON.stringify(between)}`);
      assert.equal(between.note, 'For earlier inputs (changed: Simulation): updating');
    }
    await waitForDone(page);
    const replaced = await marks(page);
    assert.equal(replaced.verdict.marked, false, JSON.stringify(replaced));
    assert.equal(replaced.plan.marked, false, JSON.stringify(replaced));
    assert.equal(replaced.verdict.opacity, 1);
    assert.equal(await page.locator('.stale-badge.shown').count(), 0, 'no note is left');
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}
