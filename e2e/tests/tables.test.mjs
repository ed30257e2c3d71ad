// Issue 40, "tables cut inside narrow boxes": on a phone (390 px) and at
// 1280 px, on the 70B link with the long names people give their classes
// and configurations (written without spaces, as in their own tools),
// every results table fits its box or scrolls sideways inside it, in a
// focusable, labelled region; no text runs out of its cell (a long class
// name ran out of the first column, 14rem at most, under the next cells).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { screenshot, siteForFile } from '../lib/harness.mjs';
import { openTables, tableTrouble, waitForDone } from '../lib/page.mjs';
import { linkQuery, longNames70b } from '../lib/scenario.mjs';

const site = siteForFile();

for (const viewport of [{ width: 390, height: 844 }, { width: 1280, height: 900 }]) {
  test(`at ${viewport.width} px with long names every results table fits or scrolls in its own box`, async () => {
    const { page, errors } = await site.openPage(linkQuery(longNames70b()), { viewport });
    // (A 70B plan: twice the usual limit.)
    await waitForDone(page, { limitMs: 20 * 60_000 });
    await openTables(page);
    const tables = await page.locator('#results table').count();
    assert.ok(tables >= 15, `the results' tables are open (${tables})`);
    const trouble = await tableTrouble(page);
    await page.locator('#table-verdict').scrollIntoViewIfNeeded();
    await screenshot(page, `tables-long-names-${viewport.width}`, { fullPage: false });
    assert.deepEqual(trouble, [], JSON.stringify(trouble, null, 1));
    // The page itself never scrolls sideways.
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(wide <= 0, `the page scrolls sideways by ${wide} px`);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}
