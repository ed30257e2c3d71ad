// A benchmark command, not a test: opens a scenario in the built page
// (headless Chromium, the page's own pool of Web Workers) and prints, on
// the page's clock (ms since navigation started), when the first results
// show, when the verdict first names the plan's fleet (the recommendation:
// the search's provisional choice or the complete plan, whichever comes
// first) and when the whole plan is done. Compare builds by running it
// alternately (docs/performance.md).
//
//   node bench-page.mjs [--dist DIR] [--runs N] [--scenario default|chat70b|FILE.json]
//
// FILE.json is a scenario file (what `sojourn plan` reads); `chat70b` is
// `chat70bScenario()` of lib/scenario.mjs. `SOJOURN_DIST` or `--dist`
// picks the build (default: dist/ at the repository root).

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    dist: { type: 'string' },
    runs: { type: 'string', default: '1' },
    scenario: { type: 'string', default: 'chat70b' },
  },
});
if (values.dist) process.env.SOJOURN_DIST = values.dist;
// The harness reads SOJOURN_DIST when loaded.
const { startSite } = await import('./lib/harness.mjs');
const { cdfShown, pageTimeWhen, inPageWhen } = await import('./lib/page.mjs');
const { chat70bScenario, linkQuery } = await import('./lib/scenario.mjs');

const scenario =
  values.scenario === 'default'
    ? null
    : values.scenario === 'chat70b'
      ? chat70bScenario()
      : JSON.parse(readFileSync(values.scenario, 'utf8'));
const query = scenario === null ? '' : linkQuery(scenario);
const limitMs = 20 * 60_000;

/** The verdict's plan fleet, once it names one (provisional or not). */
const fleetShown = () => {
  const fleet = document.querySelector('#verdict-plan .verdict-fleet')?.innerText ?? '';
  return /replica/.test(fleet);
};
const done = () => document.querySelector('[aria-label="Run status"]')?.innerText === 'Done.';

const site = await startSite();
try {
  for (let run = 0; run < Number(values.runs); run++) {
    const { page, errors } = await site.openPage(query, { viewport: { width: 1280, height: 900 } });
    const first = await pageTimeWhen(page, cdfShown, { limitMs });
    const fleet = await pageTimeWhen(page, fleetShown, { limitMs, plan: true });
    const fleetText = await page.locator('#verdict-plan .verdict-fleet').innerText();
    const end = await pageTimeWhen(page, done, { limitMs, plan: true });
    const finalText = await page.locator('#verdict-plan .verdict-fleet').innerText();
    const simulations = await inPageWhen(page, () => {
      const m = /([\d,]+) simulations/.exec(document.getElementById('plan-statement')?.innerText ?? '');
      return m ? m[1] : '?';
    });
    console.log(
      `run ${run + 1}: first results ${first} ms, plan fleet ${fleet} ms, done ${end} ms ` +
        `(${simulations} simulations); first fleet: ${fleetText.split('\n')[0]}; final: ${finalText.split('\n')[0]}` +
        (errors.length ? `; errors: ${errors.join('; ')}` : ''),
    );
    await page.context().close();
  }
} finally {
  await site.close();
}
