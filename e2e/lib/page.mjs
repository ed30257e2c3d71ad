// Page helpers shared by the end-to-end suites: the page's landmarks by role
// and name, waiting for conditions, and reading figures and tables.

/**
 * The most one wait may take [ms]. A wait follows the work: it ends as soon
 * as its condition holds, fails at once with the page's own message when
 * the page reports a failed run (or a failed plan, for a wait on the plan),
 * and otherwise lasts as long as the page takes, up to this limit. Generous: on a loaded 2-core machine what
 * takes a second on a quiet one can take minutes. (Playwright's own waits,
 * its clicks and reads, get the same limit: `harness.mjs`.)
 */
export const WAIT_LIMIT_MS = 10 * 60_000;

export const cdf = (page) => page.getByRole('img', { name: /Sojourn-time CDF; deadlines/ });
export const headline = (page) => page.getByRole('region', { name: 'Headline figures' });
export const runStatus = (page) => page.getByRole('status', { name: 'Run status' });
export const runButton = (page) => page.getByRole('button', { name: 'Run', exact: true });
export const verdict = (page) => page.getByRole('region', { name: 'Verdict against the targets' });
export const verdictTable = (page) => verdict(page).locator('#table-verdict table');
/** What a target's verdict cell may read. */
export const VERDICTS = ['met', 'not met', 'uncertain'];

/**
 * What the page says went wrong, or null: a failed run (the run status,
 * which also says when a worker could not load) or, when `plan` is true, a
 * failed plan (a plan may fail where the run does not: the planner refuses
 * classes that are not open streams). Runs in the page.
 */
export const pageTrouble = (plan) => {
  const status = document.querySelector('[role="status"][aria-label="Run status"]')?.textContent.trim() ?? '';
  if (status.startsWith('The run failed')) return status;
  const failure = document.querySelector('#verdict-plan .verdict-failure')?.textContent.trim() ?? '';
  if (plan && failure.startsWith('The plan failed')) return failure;
  return null;
};

/** The page's trouble, or null (also while a reload has no document yet). */
const troubleOf = (page, plan) => page.evaluate(pageTrouble, plan).catch(() => null);

/**
 * Polls `condition` (async) until it returns a truthy value, which it
 * returns. Fails at once when the page reports trouble (a failed run; a
 * failed plan too when `plan` is true), unless the condition, read again,
 * holds (a test may wait for the failure itself), and after `limitMs`.
 */
export async function waitFor(page, what, condition, { limitMs = WAIT_LIMIT_MS, plan = false } = {}) {
  const started = Date.now();
  for (;;) {
    const value = await condition();
    if (value) return value;
    const trouble = await troubleOf(page, plan);
    if (trouble !== null) {
      const now = await condition();
      if (now) return now;
      throw new Error(`the page reported trouble while waiting for ${what}: ${trouble}`);
    }
    if (Date.now() - started > limitMs) {
      const status = await runStatus(page).innerText({ timeout: 1000 }).catch(() => '(unread)');
      throw new Error(`timed out after ${limitMs / 1000} s waiting for ${what} (the run status: ${status})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits for `locator` to be visible (`what` names it in a failure). */
export function waitForShown(locator, what) {
  return waitFor(locator.page(), what, () => locator.isVisible());
}

/** Waits for the first results: the sojourn-time CDF. */
export function waitForResults(page) {
  return waitForShown(cdf(page), 'the first results (the CDF)');
}

/**
 * Opens every data table and waits for their rows: a table shown closed
 * builds them only when first opened.
 */
export async function openTables(page) {
  await page.evaluate(() => document.querySelectorAll('details.data-table').forEach((d) => (d.open = true)));
  await waitFor(page, 'every table built', () =>
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

/** Waits for the run and the plan to finish ("Done."). */
export async function waitForDone(page, { limitMs } = {}) {
  await waitFor(page, 'the run and the plan to finish', async () => (await runStatus(page).innerText()) === 'Done.', {
    limitMs,
    plan: true,
  });
}

/**
 * The first truthy value of `probe`, a function run in the page every
 * 20 ms: measured there, so polling adds no delay. Fails at once with the
 * page's message when it reports trouble first (as `waitFor`), and after
 * `limitMs`.
 */
export async function inPageWhen(page, probe, { limitMs = WAIT_LIMIT_MS, plan = false } = {}) {
  const handle = await page.waitForFunction(
    ([probeSource, troubleSource, withPlan]) => {
      const value = new Function(`return (${probeSource})()`)();
      if (value) return { value };
      const trouble = new Function(`return (${troubleSource})`)()(withPlan);
      return trouble !== null && { trouble };
    },
    [probe.toString(), pageTrouble.toString(), plan],
    { timeout: limitMs, polling: 20 },
  );
  const { value, trouble } = await handle.jsonValue();
  if (trouble !== undefined) throw new Error(`the page reported trouble: ${trouble}`);
  return value;
}

/**
 * The page's clock (ms since navigation started) when `condition`, run in
 * the page, first holds (`options` as `inPageWhen`'s).
 */
export function pageTimeWhen(page, condition, options) {
  return inPageWhen(page, `() => (${condition})() && Math.round(performance.now())`, options);
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
  // (A table shown closed builds its rows when first opened.)
  await waitFor(table.page(), 'the table\'s rows', async () => (await table.locator('tbody').count()) > 0);
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

/**
 * What is wrong with how the page's tables sit in their boxes, as a list
 * of { table, problem } (empty when every table fits or scrolls sideways
 * inside its own box): a table wider than its box whose box does not
 * scroll (overflow-x auto or scroll), or whose scrolling box is not a
 * focusable, labelled region; a box that runs past the screen's right
 * edge or is clipped by a box around it; a cell whose text runs out of
 * it (cut); a cell past the screen's edge with no box to scroll it into
 * view. Open tables only (`openTables` opens them all).
 */
export function tableTrouble(page) {
  return page.evaluate(() => {
    const screen = document.documentElement.clientWidth;
    const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const clips = (el) => ['hidden', 'clip'].includes(getComputedStyle(el).overflowX);
    const trouble = [];
    for (const table of document.querySelectorAll('table')) {
      if (table.getClientRects().length === 0) continue;
      const name = table.closest('[id]')?.id ?? table.className;
      const add = (problem) => trouble.push({ table: name, problem });
      // The table's own box: its parent (the `.table-scroll` wrapper).
      const own = table.parentElement;
      if (own.scrollWidth > own.clientWidth + 1) {
        if (!scrolls(own)) {
          add(`${own.scrollWidth} px wide in a box of ${own.clientWidth} px that does not scroll sideways`);
        } else if (own.tabIndex < 0 || !own.getAttribute('aria-label') || own.getAttribute('role') !== 'region') {
          add('its scrolling box is not a focusable, labelled region');
        }
      }
      const box = own.getBoundingClientRect();
      if (box.right > screen + 1) add(`its box ends at ${Math.round(box.right)} px, past the screen (${screen} px)`);
      for (let outer = own.parentElement; outer && outer !== document.body; outer = outer.parentElement) {
        const edge = outer.getBoundingClientRect().right;
        if (clips(outer) && box.right > edge + 1) add(`its box is clipped by ${outer.tagName.toLowerCase()}.${outer.className}`);
      }
      for (const cell of table.querySelectorAll('th, td')) {
        if (cell.getClientRects().length === 0) continue;
        const text = cell.innerText.trim().slice(0, 60);
        if (cell.scrollWidth > cell.clientWidth + 1) {
          add(`"${text}" runs ${cell.scrollWidth - cell.clientWidth} px out of its cell`);
        }
        const right = cell.getBoundingClientRect().right;
        if (!scrolls(own) && right > Math.min(screen, box.right) + 1) {
          add(`"${text}" ends at ${Math.round(right)} px, past its box (${Math.round(box.right)} px), with no scrolling`);
        }
      }
    }
    return trouble;
  });
}
