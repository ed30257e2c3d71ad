// What a user types is never changed silently, and one click never loses
// work: a decimal comma is refused with a message, Reset can be undone, and
// an empty runtime reserve is vLLM's profile until a figure is typed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { siteForFile } from '../lib/harness.mjs';
import { waitFor, waitForResults } from '../lib/page.mjs';
import { linkQuery, quickScenario } from '../lib/scenario.mjs';

const site = siteForFile();

test('"3,5" is refused with a message and never becomes 35', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const price = page.getByLabel('Price per GPU-hour', { exact: true }).first();
  const linkBefore = page.url();
  await price.fill('3,5');
  const field = page.locator('.field', { has: price });
  await waitFor(page, 'the message', async () => /a point for decimals/.test(await field.innerText()));
  assert.equal(await price.getAttribute('aria-invalid'), 'true');
  // The scenario keeps its price: the link still holds 2.5, not 35.
  await page.waitForTimeout(600);
  assert.equal(page.url(), linkBefore, 'nothing was written');
  await price.fill('3.5');
  await waitFor(page, 'the link to follow a valid edit', async () => page.url() !== linkBefore);
  assert.equal(await price.getAttribute('aria-invalid'), 'false');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('Reset to defaults can be undone', async () => {
  const { page, errors } = await site.openPage(linkQuery(quickScenario()));
  await waitForResults(page);
  const name = page.getByLabel('Scenario name', { exact: true });
  await name.fill('My afternoon of edits');
  await page.getByRole('button', { name: 'Reset to defaults' }).click();
  await waitFor(page, 'the reset', async () => (await name.inputValue()) === 'Overnight batch jobs, 24 h SLA');
  await page.locator('.notice').getByRole('button', { name: 'Undo' }).click();
  await waitFor(page, 'the undo', async () => (await name.inputValue()) === 'My afternoon of edits');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('The runtime reserve left empty is what vLLM profiles; a typed figure replaces it', async () => {
  const scenario = quickScenario();
  // Llama 3.1 8B's shapes: the profile needs the vocabulary.
  Object.assign(scenario.model, { hidden_size: 4096, intermediate_size: 14336, vocab_size: 128256 });
  scenario.replica.runtime_reserve_gib = null;
  scenario.engine.max_num_seqs = 256;
  const { page, errors } = await site.openPage(linkQuery(scenario));
  await waitForResults(page);
  const reserve = page.getByLabel('Runtime reserve per GPU', { exact: true });
  assert.equal(await reserve.inputValue(), '');
  assert.equal(await reserve.getAttribute('placeholder'), 'as vLLM profiles');
  // 0.25 GiB outside PyTorch + 0.18 + 14 B x 256 slots x 128,256 = 0.86 GiB.
  const bar = async () => page.locator('.memory-bar').getAttribute('aria-label');
  assert.match(await bar(), /reserve 0\.9 GiB/);
  await reserve.fill('3');
  await waitFor(page, 'the typed reserve', async () => /reserve 3\.0 GiB/.test(await bar()));
  await reserve.fill('');
  await waitFor(page, 'the profile again', async () => /reserve 0\.9 GiB/.test(await bar()));
  assert.deepEqual(errors, []);
  await page.context().close();
});
