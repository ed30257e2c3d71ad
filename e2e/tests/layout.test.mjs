// The page's layout and what stays current: a phone sees the results first
// with Run and Copy link always at hand; a finance reader at 1280 px sees the
// money columns of every wide table; a price edit re-costs the last
// simulations instead of running them again, and the status says what the
// results are for; a duration box says what it read; downloads say where
// they come from; the built site carries precompressed copies.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { distDir, screenshot, siteForFile } from '../lib/harness.mjs';
import { figure, headline, openTables, runButton, runStatus, waitFor, waitForDone, waitForShown } from '../lib/page.mjs';
import { chat70bScenario, linkQuery } from '../lib/scenario.mjs';

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 800 };

const site = siteForFile();

/** The element's box on the screen: { top, bottom, left, right }. */
const box = (locator) =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
  });

/** Whether the whole element is on the screen of height `height`. */
async function onScreen(locator, height) {
  const b = await box(locator);
  return b.top >= 0 && b.bottom <= height && b.bottom > b.top;
}

/** A money figure as shown ("$0.0123", "$1,234/month") as a number. */
const dollars = (text) => Number(text.replace(/[^0-9.]/g, ''));

test('on a phone the results come first and Run and Copy link stay on screen', async () => {
  const { page, errors } = await site.openPage('', { viewport: PHONE });
  await waitForShown(headline(page).locator('.metric-value').first(), 'the headline figures');
  await waitForDone(page);
  // The results open on the verdict against the targets, then the
  // headline figures: the verdict starts on the first screen.
  const verdict = await box(page.locator('section.verdict'));
  assert.ok(verdict.top < PHONE.height - 100, `the verdict starts on the first screen (at ${verdict.top} px)`);
  await screenshot(page, 'layout-phone', { fullPage: false });
  // Down among the inputs, far below the first screen.
  await page.getByLabel('Horizon', { exact: true }).scrollIntoViewIfNeeded();
  assert.ok((await page.evaluate(() => window.scrollY)) > 2 * PHONE.height, 'the page has scrolled');
  assert.ok(await onScreen(runButton(page), PHONE.height), 'Run stays on screen');
  const copy = page.getByRole('button', { name: 'Copy link' });
  assert.ok(await onScreen(copy, PHONE.height), 'Copy link stays on screen');
  await screenshot(page, 'layout-phone-scrolled', { fullPage: false });
  // The toolbar's jumps go back to the results: their first panel, the
  // verdict, starts on screen again (the headline figures follow it).
  await page.getByRole('link', { name: 'Results', exact: true }).click();
  await waitFor(page, 'the results back on screen', async () => {
    const { top } = await box(page.locator('section.verdict'));
    return top >= 0 && top < PHONE.height;
  });
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('at 1280 px the money columns of the wide tables show without scrolling sideways', async () => {
  const { page, errors } = await site.openPage('', { viewport: LAPTOP });
  await waitForDone(page);
  await openTables(page);
  const tables = await page.locator('.table-scroll').evaluateAll((scrolls) =>
    scrolls.map((scroll) => {
      const right = scroll.getBoundingClientRect().right;
      const money = Array.from(scroll.querySelectorAll('thead th'))
        .filter((th) => /USD|^cost/.test(th.innerText))
        .map((th) => ({ name: th.innerText.replace(/\s+/g, ' '), hidden: th.getBoundingClientRect().right - right }));
      return { wide: scroll.scrollWidth > scroll.clientWidth, money };
    }),
  );
  const wide = tables.filter((t) => t.wide && t.money.length > 0);
  // (The demand cases' and the configurations' tables now fit, below.)
  assert.ok(wide.length >= 2, `wide tables with money columns (${wide.length})`);
  for (const { money } of wide) {
    for (const column of money) {
      assert.ok(column.hidden <= 1, `"${column.name}" shows without scrolling (${column.hidden} px past the edge)`);
    }
  }
  // The plan's budget per demand case and its search per configuration fit
  // without scrolling: "own plan: ..." columns sit under one "own plan"
  // header, and the search's sentences run under their rows (at 1280 px
  // the plan's fleet's verdict and the details were out of sight).
  for (const id of ['table-cases', 'table-configurations']) {
    const fit = await page
      .locator(`#${id} .table-scroll`)
      .evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    assert.ok(fit.scroll <= fit.client + 1, `${id} fits at 1280 px (${fit.scroll} px in ${fit.client})`);
  }
  assert.deepEqual(
    await page.locator('#table-cases thead th.group').allInnerTexts(),
    ['own plan', "plan's fleet"],
  );
  const details = await page.locator('#table-configurations tr.row-line').allInnerTexts();
  assert.ok(details.length >= 1 && details.every((d) => d.startsWith('details: ')), JSON.stringify(details));
  // Scrolled sideways, a wide table keeps its first column in place.
  const scroll = page.locator('#table-sensitivity .table-scroll');
  const first = scroll.locator('thead th').first();
  const before = await box(first);
  await scroll.evaluate((el) => (el.scrollLeft = el.scrollWidth));
  assert.ok((await scroll.evaluate((el) => el.scrollLeft)) > 100, 'the table scrolled');
  assert.equal((await box(first)).left, before.left, 'the first column stays');
  await scroll.evaluate((el) => (el.scrollLeft = 0));
  await page.locator('details.data-table', { hasText: 'Expected, low and high demand' }).first().scrollIntoViewIfNeeded();
  await screenshot(page, 'layout-1280-tables', { fullPage: false });
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('at 1280 px the run status has a column of its own, and its whole line on hover', async () => {
  const { page, errors } = await site.openPage('', { viewport: LAPTOP });
  const status = runStatus(page);
  await waitFor(page, 'the plan to run', async () => (await status.innerText()).startsWith('Planning:'));
  const { width, rem, title, text } = await status.evaluate((el) => ({
    width: el.getBoundingClientRect().width,
    rem: parseFloat(getComputedStyle(document.documentElement).fontSize),
    title: el.title,
    text: el.textContent,
  }));
  // The toolbar's middle column keeps at least 16rem: "Planning: service
  // curve (23 of about 100 simulations)" was cut after 150 px.
  assert.ok(width >= 16 * rem - 1, `status ${width} px wide`);
  assert.equal(title, text);
  await waitForDone(page);
  assert.equal(await status.getAttribute('title'), 'Done.');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a price edit re-costs the last simulations without running them again', async () => {
  const { page, errors } = await site.openPage('', { viewport: LAPTOP });
  await waitForDone(page);
  await screenshot(page, 'layout-1280', { fullPage: false });
  const plan = page.getByRole('region', { name: 'Capacity plan' });
  await waitForShown(plan, 'the capacity plan');
  const digest = await page.locator('.run-meta', { hasText: 'digest' }).innerText();
  const cost = dollars(await figure(page, 'Cost per successful request'));
  const planned = dollars(await figure(page, 'Planned cost per success'));
  assert.ok(cost > 0 && planned > 0, 'the default scenario has a price');
  // Every text the run status shows from here on.
  await runStatus(page).evaluate((el) => {
    window.statusTexts = [];
    new MutationObserver(() => window.statusTexts.push(el.innerText)).observe(el, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  });
  // The default price is $3 per GPU-hour, with no fixed cost: doubling it
  // doubles every cost.
  await page.getByLabel('Price per GPU-hour').first().fill('6');
  const note = page.getByRole('status', { name: 'What the results are for' });
  await waitFor(page, 'the re-costed note', async () => /Costs re-computed at the new prices/.test(await note.innerText()));
  await waitForDone(page);
  await screenshot(page, 'layout-1280-recosted', { fullPage: false });
  const shown = await page.evaluate(() => window.statusTexts);
  assert.ok(
    shown.every((text) => !/Simulat|Planning/.test(text)),
    `nothing simulated again: ${JSON.stringify(shown)}`,
  );
  assert.equal(await page.locator('.run-meta', { hasText: 'digest' }).innerText(), digest, 'the same simulation');
  const ratio = dollars(await figure(page, 'Cost per successful request')) / cost;
  assert.ok(Math.abs(ratio - 2) < 0.02, `the cost per success doubles (x${ratio})`);
  const planRatio = dollars(await figure(page, 'Planned cost per success')) / planned;
  assert.ok(Math.abs(planRatio - 2) < 0.02, `the planned cost per success doubles (x${planRatio})`);
  // With runs left to Run, an edit that needs a simulation says so.
  await page.getByLabel('Run on every change').uncheck();
  await page.getByRole('textbox', { name: 'Seed' }).fill('5');
  await waitFor(page, 'the press-Run note', async () => (await note.innerText()) === 'Results are for earlier inputs: press Run.');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a duration box echoes what it read', async () => {
  const { page, errors } = await site.openPage('', { viewport: LAPTOP });
  const horizon = page.getByLabel('Horizon', { exact: true });
  const echoId = (await horizon.getAttribute('aria-describedby')).split(' ').find((id) => id.endsWith('-echo'));
  assert.ok(echoId, 'the echo describes the box');
  const echo = page.locator(`[id="${echoId}"]`);
  await horizon.fill('1440 min');
  await waitFor(page, 'the echo', async () => (await echo.innerText()) === '1440 min = 24 h');
  await horizon.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await screenshot(page, 'layout-1280-echo', { fullPage: false });
  await horizon.fill('90');
  await waitFor(page, 'the echo of seconds', async () => (await echo.innerText()) === '90 s = 1 min 30 s');
  await horizon.fill('24 h');
  await waitFor(page, 'no echo for plain text', async () => (await echo.innerText()) === '');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a downloaded table and the results file say where they come from', async () => {
  const { page, errors } = await site.openPage('', { viewport: LAPTOP });
  await waitForDone(page);
  const today = new Date().toISOString().slice(0, 10);
  await page.locator('#table-per-class').evaluate((details) => (details.open = true));
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: /Download Per class .* as CSV/ }).click(),
  ]);
  const lines = (await readFile(await download.path(), 'utf8')).split('\r\n');
  assert.match(lines[0], /^# table: Per class/);
  assert.equal(lines[1], '# scenario: Overnight batch jobs, 24 h SLA');
  assert.equal(lines[2], `# link: ${page.url()}`, 'the link of the numbers shown');
  assert.match(lines[3], new RegExp(`^# exported: ${today}T`));
  assert.match(lines[4], /^# generator: Sojourn \d+\.\d+\.\d+/);
  assert.match(lines[5], /^class,/, 'then the table');
  const [results] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download all results (JSON)' }).click(),
  ]);
  const document = JSON.parse(await readFile(await results.path(), 'utf8'));
  assert.equal(document.provenance.scenario, 'Overnight batch jobs, 24 h SLA');
  assert.equal(document.provenance.link, page.url());
  assert.match(document.provenance.exported, new RegExp(`^${today}T`));
  // The scenario file too, and it imports as it is.
  const [exported] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export JSON' }).click(),
  ]);
  const text = await readFile(await exported.path(), 'utf8');
  const scenario = JSON.parse(text);
  assert.equal(scenario.provenance.scenario, 'Overnight batch jobs, 24 h SLA');
  assert.match(scenario.provenance.generator, /^Sojourn \d+\.\d+\.\d+/);
  await page.getByLabel('Scenario name', { exact: true }).fill('Renamed');
  await page.getByLabel('Import JSON').setInputFiles({
    name: 'exported.json',
    mimeType: 'application/json',
    buffer: Buffer.from(text),
  });
  await waitFor(page, 'the imported scenario', async () =>
    (await page.getByLabel('Scenario name', { exact: true }).inputValue()) === 'Overnight batch jobs, 24 h SLA');
  assert.equal(await page.getByRole('alert').count(), 0, 'no error on import');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a downloaded chart carries its title and the scenario above it', async () => {
  const { page, errors } = await site.openPage('', { viewport: LAPTOP });
  await waitForDone(page);
  const figure = page.locator('#cdf-figure');
  const caption = (await figure.locator('.caption-text').innerText()).trim();
  const shown = Number(await figure.locator('.chart svg').first().getAttribute('height'));
  const [svgFile] = await Promise.all([page.waitForEvent('download'), figure.getByRole('button', { name: 'SVG' }).click()]);
  const svg = await readFile(await svgFile.path(), 'utf8');
  // Drawn text (not only the <title> a screen reader reads), above the chart.
  const texts = Array.from(svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g), (m) => m[1]);
  assert.equal(texts[0], caption, `the first line drawn is the caption: ${texts.slice(0, 3)}`);
  assert.match(texts[1], /^Scenario: Overnight batch jobs, 24 h SLA; Sojourn \d+\.\d+\.\d+$/);
  const height = Number(svg.match(/^<svg[^>]* height="(\d+)"/)[1]);
  assert.ok(height > shown + 20, `the file is taller than the chart shown (${height} against ${shown})`);
  // The PNG: twice the SVG's size, headings included.
  const [pngFile] = await Promise.all([page.waitForEvent('download'), figure.getByRole('button', { name: 'PNG' }).click()]);
  const png = await readFile(await pngFile.path());
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.equal(png.readUInt32BE(20), 2 * height, 'the PNG has the headings too');
  assert.deepEqual(errors, []);
  await page.context().close();
});

/**
 * The vertical stretches of the results [px] with nothing in them (no
 * text, table row, chart or control), over `least` px: { at, gap, before,
 * after }, in page coordinates.
 */
const blankGaps = (page, least) =>
  page.evaluate((least) => {
    const selector = ['p', 'li', 'tr', 'dt', 'dd', 'h2', 'h3', 'h4', 'summary', 'figcaption', 'svg', 'button', 'label']
      .map((tag) => `#results ${tag}`)
      .join(',');
    const boxes = Array.from(document.querySelectorAll(selector))
      .map((el) => ({ el, r: el.getBoundingClientRect() }))
      .filter(({ r }) => r.height > 0 && r.width > 0)
      .map(({ el, r }) => ({ el, top: r.top + scrollY, bottom: r.bottom + scrollY }))
      .sort((a, b) => a.top - b.top);
    const name = (el) => `${el.tagName.toLowerCase()} "${(el.innerText ?? el.getAttribute('aria-label') ?? '').slice(0, 50)}"`;
    const gaps = [];
    let last = boxes[0];
    for (const box of boxes) {
      if (box.top - last.bottom > least) {
        gaps.push({ at: Math.round(last.bottom), gap: Math.round(box.top - last.bottom), before: name(last.el), after: name(box.el) });
      }
      if (box.bottom > last.bottom) last = box;
    }
    return gaps;
  }, least);

/** The 70B link of the issue, its configured fleet one replica short: its
 * verdict table has "not met" beside long values. */
function short70b() {
  const s = chat70bScenario();
  s.cluster.replicas = 1;
  return s;
}

for (const viewport of [PHONE, LAPTOP]) {
  test(`on the 70B link at ${viewport.width} px the verdict table fits its box, no verdict is cut and the results have no large blank gaps`, async () => {
    const { page, errors } = await site.openPage(linkQuery(short70b()), { viewport });
    // (A 70B plan: twice the usual limit.)
    await waitForDone(page, { limitMs: 20 * 60_000 });
    const table = page.locator('#table-verdict');
    await table.scrollIntoViewIfNeeded();
    const cells = await table.locator('.table-scroll').evaluate((scroll) => {
      const edge = scroll.getBoundingClientRect();
      return {
        overflow: scroll.scrollWidth - scroll.clientWidth,
        cells: Array.from(scroll.querySelectorAll('td')).map((td) => {
          const r = td.getBoundingClientRect();
          return {
            column: td.dataset.column,
            text: td.innerText.trim(),
            // Past the box's right edge (hidden there), or cut in the cell.
            hidden: Math.max(0, r.right - Math.min(edge.right, window.innerWidth)),
            cut: td.scrollWidth - td.clientWidth,
          };
        }),
      };
    });
    assert.ok(cells.overflow <= 1, `the verdict table scrolls sideways by ${cells.overflow} px`);
    const verdicts = cells.cells.filter((c) => /: verdict$/.test(c.column));
    assert.ok(verdicts.some((c) => c.column.startsWith("plan's fleet")), 'the plan\'s column is there');
    assert.ok(verdicts.some((c) => c.text === 'not met'), `a target is not met: ${JSON.stringify(verdicts)}`);
    for (const c of cells.cells) {
      assert.ok(c.hidden <= 1 && c.cut <= 1, `"${c.text}" (${c.column}) is cut: ${JSON.stringify(c)}`);
    }
    await screenshot(page, `layout-verdict-70b-${viewport.width}`, { fullPage: false });
    const gaps = await blankGaps(page, 100);
    assert.deepEqual(gaps, [], 'no blank stretch over 100 px in the results');
    await page.locator('#pareto-figure').scrollIntoViewIfNeeded();
    await screenshot(page, `layout-frontier-70b-${viewport.width}`, { fullPage: false });
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}

test('the built site carries gzip copies of its files', async () => {
  const files = (await readdir(distDir)).filter((name) => /\.(wasm|js|css|html)$/.test(name));
  assert.ok(files.some((name) => name.endsWith('.wasm')), 'the site has its WebAssembly');
  for (const name of files) {
    const original = await readFile(path.join(distDir, name));
    const gzipped = await readFile(path.join(distDir, `${name}.gz`));
    assert.ok(gunzipSync(gzipped).equals(original), `${name}.gz holds ${name}`);
    if (name.endsWith('.wasm')) {
      assert.ok(gzipped.length < original.length / 2, `${name} compresses`);
    }
  }
});
