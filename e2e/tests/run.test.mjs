// The page loads cleanly, and the Run button runs the engine and shows the result.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startSite } from '../lib/harness.mjs';

// Generous: the default scenario simulates a whole day, on a 2-core machine.
const RESULT_TIMEOUT_MS = 30_000;

let site;
before(async () => {
  site = await startSite();
});
after(async () => {
  await site?.close();
});

test('the page loads with a title, a Run button and no console errors', async () => {
  const { page, errors } = await site.openPage();
  await page.getByRole('heading', { level: 1, name: 'Sojourn' }).waitFor();
  assert.equal(await page.title(), 'Sojourn');
  assert.ok(await page.getByRole('button', { name: 'Run' }).isEnabled());
  await screenshot(page, 'loaded');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('pressing Run shows the requests, P(miss) and p99 sojourn', async () => {
  const { page, errors } = await site.openPage();
  await page.getByRole('button', { name: 'Run' }).click();

  const result = page.getByRole('region', { name: 'Result' });
  await result.waitFor({ timeout: RESULT_TIMEOUT_MS });
  const text = await result.innerText();
  assert.match(text, /Requests arrived\s+\d[\d,]*/);
  assert.match(text, /P\(miss\)\s+(< )?\d+\.\d\d %/);
  assert.match(text, /p99 sojourn\s+\d+(\.\d)? (ms|s|min|h)/);
  assert.equal(await page.getByRole('alert').count(), 0, 'no error is shown');
  assert.equal(await page.getByRole('status').innerText(), 'Done.');

  await screenshot(page, 'result');
  assert.deepEqual(errors, []);
  await page.context().close();
});
