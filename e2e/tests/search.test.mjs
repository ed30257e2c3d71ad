// What the plan compares, set in the page: the disciplines as checkboxes,
// the engine settings as lists under "Advanced". A search that leaves out
// the scenario's own settings still plans and says what it left out; the
// link carries the search; a list that does not read, or values that make
// no valid engine, are refused under their box and block Run.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import {
  runButton,
  runStatus,
  tableRows,
  verdict,
  waitFor,
  waitForResults,
} from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

const searchSpace = (page) => page.getByRole('group', { name: 'What the plan compares' });
const discipline = (page, name) => searchSpace(page).getByRole('checkbox', { name, exact: true });

/** Waits for the plan of the inputs as they stand. */
async function planOfTheseInputs(page) {
  await waitFor(
    page,
    'the plan of the edited inputs',
    async () =>
        (await runStatus(page).innerText()) === 'Done.' &&
        (await page.locator('#plan-statement').count()) > 0 &&
        !(await page.getByRole('region', { name: 'Headline figures' }).innerText()).includes('for earlier inputs'),
    { plan: true },
  );
}

test('the plan compares only the disciplines ticked, says what it left out, and the link keeps them', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  for (const name of ['First come, first served', 'Priority', 'Shortest input first', 'Earliest deadline first']) {
    assert.ok(await discipline(page, name).isChecked(), `${name} is compared by default`);
  }
  const linkBefore = page.url();
  await discipline(page, 'First come, first served').uncheck();
  await discipline(page, 'Priority').uncheck();
  await waitFor(page, 'the link to follow', async () => page.url() !== linkBefore);
  await planOfTheseInputs(page);

  const plan = page.getByRole('region', { name: 'Capacity plan' });
  const fleet = await plan.locator('.plan-fleet').innerText();
  assert.match(fleet, /, (SIF|EDF)\b/, fleet);
  const why = await plan.locator('.plan-why').innerText();
  assert.match(
    why,
    /meet every target\. The search leaves out the scenario's own discipline \(first come, first served\), so no fleet with its own settings was searched to compare with\./,
    why,
  );
  assert.match(
    await verdict(page).locator('#table-verdict > summary').innerText(),
    /^Targets: the configured fleet \(2 replicas, one simulation: the plan's search leaves out its own engine or cluster settings\)/,
  );
  await searchSpace(page).scrollIntoViewIfNeeded();
  await screenshot(page, 'search-space-pinned', { fullPage: false });

  // The link holds the search: a fresh page opens with the same boxes.
  const fresh = await site.openPage(page.url().slice(page.url().indexOf('?')));
  await waitForResults(fresh.page);
  assert.equal(await discipline(fresh.page, 'First come, first served').isChecked(), false);
  assert.equal(await discipline(fresh.page, 'Priority').isChecked(), false);
  assert.equal(await discipline(fresh.page, 'Shortest input first').isChecked(), true);
  assert.deepEqual(fresh.errors, []);
  await fresh.page.context().close();

  // Ticking them again leaves the search out of the link: the old link.
  await discipline(page, 'First come, first served').check();
  await discipline(page, 'Priority').check();
  await waitFor(page, 'the link to return', async () => page.url() === linkBefore);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('engine settings compared are typed as lists, and a list that cannot run is refused by name', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  await searchSpace(page).getByText('Advanced: engine and cluster settings compared').click();
  const seqs = page.getByLabel('Sequence limits compared');
  const box = page.locator('.field', { has: seqs });

  // "1,024" could be 1024 or 1 and 24: refused, never guessed.
  const linkBefore = page.url();
  await seqs.fill('1,024');
  await waitFor(page, 'the message', async () => /a comma between digits is ambiguous/.test(await box.innerText()));
  assert.equal(await seqs.getAttribute('aria-invalid'), 'true');
  assert.ok(await runButton(page).isDisabled(), 'Run is disabled');
  await page.waitForTimeout(600);
  assert.equal(page.url(), linkBefore, 'nothing was written');

  // More sequences than the token budget lets decode: the engine's reason,
  // naming the value and the pair, under the box.
  await seqs.fill('64, 100000');
  await waitFor(
    page,
    'the engine message',
    async () =>
      /100000 sequences with a token budget of 8192 is not a valid engine: engine\.max_num_batched_tokens: must be at least max_num_seqs/.test(
        await box.innerText(),
      ),
  );
  assert.ok(await runButton(page).isDisabled(), 'Run is disabled');
  assert.match(await page.locator('#run-reason').innerText(), /What the plan compares, sequence limits compared, entry 2: /);
  await searchSpace(page).scrollIntoViewIfNeeded();
  await screenshot(page, 'search-space-refused', { fullPage: false });

  // Two values that run: the plan compares them.
  await seqs.fill('64, 256');
  await waitFor(page, 'Run to be enabled', () => runButton(page).isEnabled());
  await planOfTheseInputs(page);
  const configurations = await page.locator('#table-configurations').innerText();
  assert.match(configurations, /max_num_seqs 64/, configurations);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('the sensitivity analysis varies only the inputs ticked', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const cases = page.getByRole('region', { name: 'Best and worst cases' });
  await cases.getByText('Advanced: search, replications, sensitivity, service curve').click();
  // The quick scenario varies arrival rate, output tokens and price.
  const box = (input) => cases.getByRole('checkbox', { name: input, exact: true });
  assert.ok(await box('price').isChecked());
  assert.equal(await box('step time').isChecked(), false);
  await box('price').uncheck();
  await box('step time').check();
  await planOfTheseInputs(page);
  const table = page.locator('#table-sensitivity');
  await table.locator('summary').click();
  const inputs = (await tableRows(table.locator('table'))).map((r) => r.input);
  assert.deepEqual([...inputs].sort(), ['arrival rate', 'output tokens', 'step time']);
  assert.deepEqual(errors, []);
  await page.context().close();
});
