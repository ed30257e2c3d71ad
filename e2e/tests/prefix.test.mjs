// Engine settings under the serving panel's Advanced, as a user meets
// them. Prefix caching: an old link (written before the setting) runs
// without it; turning it on re-runs the scenario with fewer requests
// preempted, and the link carries the setting to whoever opens it next.
// CUDA graphs: the per-operation step model pads small steps as vLLM V1
// does unless told otherwise, and the choice travels in the link.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { runStatus, waitFor, waitForResults, waitForShown } from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

/** The run's "N% of requests were preempted at least once" warning, as a number. */
async function preemptedShare(page) {
  const text = await page.locator('body').innerText();
  const match = /([\d.]+)% of requests were preempted at least once/.exec(text);
  return match ? Number(match[1]) : null;
}

/** The menu called `label` under the serving panel's Advanced, opened. */
async function advancedMenu(page, label) {
  await page.getByText('Advanced: KV blocks, sequence length, step-time model').click();
  const menu = page.getByLabel(label, { exact: true });
  await waitForShown(menu, `the ${label} menu`);
  return menu;
}

test('prefix caching: off in an old link, on at a click, fewer requests preempted, and the link keeps it', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const without = await waitFor(page, 'the preemption warning', () => preemptedShare(page));
  const menu = await advancedMenu(page, 'Prefix caching');
  assert.equal(await menu.inputValue(), 'off', 'a link written before the setting runs without it');

  const linkBefore = page.url();
  await menu.selectOption('on');
  await waitFor(page, 'the link to follow the edit', async () => page.url() !== linkBefore);
  const withIt = await waitFor(page, 'the re-run', async () => {
    if (/Simulating/.test(await runStatus(page).innerText())) return null;
    const share = await preemptedShare(page);
    return share !== null && share !== without ? share : null;
  });
  assert.ok(withIt < without, `preempted at least once: ${withIt}% with prefix caching, ${without}% without`);
  await screenshot(page, 'prefix-caching-on');

  // Whoever opens the link gets the setting and the same numbers.
  const shared = page.url();
  const next = await site.openPage(shared.slice(shared.indexOf('?')));
  await waitForResults(next.page);
  assert.equal(await waitFor(next.page, 'the shared run', () => preemptedShare(next.page)), withIt);
  assert.equal(await (await advancedMenu(next.page, 'Prefix caching')).inputValue(), 'on');
  assert.deepEqual(errors, []);
  assert.deepEqual(next.errors, []);
  await next.page.context().close();
  await page.context().close();
});

test('CUDA graphs: vLLM V1 padding by default, turned off at a click, and the link keeps it', async () => {
  // The per-operation step model (the page's own default; the golden
  // scenario predates it).
  const scenario = quickScenario();
  scenario.step_time = { kind: 'operations' };
  const { page, errors } = await site.openPage(linkQuery(scenario));
  await waitForResults(page);
  const menu = await advancedMenu(page, 'CUDA graphs');
  assert.equal(await menu.inputValue(), 'piecewise', 'vLLM V1 pads unless told otherwise');

  const linkBefore = page.url();
  await menu.selectOption('off');
  await waitFor(page, 'the link to follow the edit', async () => page.url() !== linkBefore);
  await waitFor(page, 'the re-run', async () => !/Simulating/.test(await runStatus(page).innerText()));
  await waitForResults(page);
  await menu.scrollIntoViewIfNeeded();
  await screenshot(page, 'cuda-graphs-off');

  const shared = page.url();
  const next = await site.openPage(shared.slice(shared.indexOf('?')));
  await waitForResults(next.page);
  assert.equal(await (await advancedMenu(next.page, 'CUDA graphs')).inputValue(), 'off');
  assert.deepEqual(errors, []);
  assert.deepEqual(next.errors, []);
  await next.page.context().close();
  await page.context().close();
});
