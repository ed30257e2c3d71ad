// Page helpers shared by the end-to-end suites: the page's landmarks by role
// and name, waiting for conditions, and reading figures and tables.

// Generous: a 2-core machine shared with compilers.
export const RESULT_TIMEOUT_MS = 30_000;
export const PLAN_TIMEOUT_MS = 120_000;

export const cdf = (page) => page.getByRole('img', { name: /Sojourn-time CDF; deadlines/ });
export const headline = (page) => page.getByRole('region', { name: 'Headline figures' });
export const runStatus = (page) => page.getByRole('status', { name: 'Run status' });
export const runButton = (page) => page.getByRole('button', { name: 'Run', exact: true });
export const verdict = (page) => page.getByRole('region', { name: 'Verdict against the targets' });
export const verdictTable = (page) => verdict(page).locator('#table-verdict table');
/** What a target's verdict cell may read. */
export const VERDICTS = ['met', 'not met', 'uncertain'];

/** Polls `condition` (async) until it returns a truthy value. */
export async function waitFor(what, condition, timeout = RESULT_TIMEOUT_MS) {
  const started = Date.now();
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() - started > timeout) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Opens every data table and waits for their rows: a table shown closed
 * builds them only when first opened.
 */
export async function openTables(page) {
  await page.evaluate(() => document.querySelectorAll('details.data-table').forEach((d) => (d.open = true)));
  await waitFor('every table built', () =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll('details.data-table')).every((d) => d.querySelector('.table-scroll')),
    ),
  );
}

/** The headline figure `label` (e.g. "P(miss)") as shown. */
export async function figure(page, label) {
  const card = headline(page).locator('.metric', { has: page.locator('dt', { hasText: label }) });
  return (await card.locator('.metric-value').first().innerText()).trim();
}

export async function waitForDone(page, timeout = PLAN_TIMEOUT_MS) {
  await waitFor('the run and the plan to finish', async () => (await runStatus(page).innerText()) === 'Done.', timeout);
}

/**
 * The page's clock (ms since navigation started) when `condition`, run in
 * the page, first holds: measured there, so polling adds no delay.
 */
export async function pageTimeWhen(page, condition, timeout) {
  const handle = await page.waitForFunction(
    (source) => (new Function(`return (${source})()`)() ? performance.now() : 0),
    condition.toString(),
    { timeout, polling: 20 },
  );
  return Math.round(await handle.jsonValue());
}

export const cdfShown = () => document.querySelector('[role="img"][aria-label^="Sojourn-time CDF; deadlines"]') !== null;
export const planShown = () => document.getElementById('plan-statement') !== null;

/**
 * A table's body as rows of cell texts, by column header (each cell's
 * `data-column`: grouped columns sit under one header of their group with a
 * short name, and a column of sentences shows as a line under its row,
 * "details: ...", which belongs to that row).
 */
export async function tableRows(table) {
  return table.locator('tbody').evaluate((tbody) => {
    const rows = [];
    for (const tr of tbody.querySelectorAll('tr')) {
      const cells = Array.from(tr.querySelectorAll('td'), (td) => [td.dataset.column, td.innerText.trim()]);
      if (tr.classList.contains('row-line')) {
        for (const [column, text] of cells) rows.at(-1)[column] = text.replace(`${column}: `, '');
      } else {
        rows.push(Object.fromEntries(cells));
      }
    }
    return rows;
  });
}
