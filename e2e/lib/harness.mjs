// Shared helpers for the end-to-end suites: serve the built site, launch
// Debian's Chromium through playwright-core, open a page that records every
// console error, and save screenshots.
//
// A suite typically does:
//
//   import { siteForFile } from '../lib/harness.mjs';
//   const site = siteForFile();
//   test('...', async () => {
//     const { page, errors } = await site.openPage();
//     ...
//     assert.deepEqual(errors, []);
//   });

import { createReadStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { after, before } from 'node:test';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { WAIT_LIMIT_MS } from './page.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The built site: `SOJOURN_DIST`, or `dist/` at the repository root. */
export const distDir = path.resolve(process.env.SOJOURN_DIST ?? path.join(here, '..', '..', 'dist'));

/** Where screenshots go (git-ignored). */
export const screenshotDir = path.resolve(here, '..', 'screenshots');

/** Debian's Chromium; `CHROMIUM` overrides. */
export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

// Headless Chromium as root on a machine without internet: no sandbox, no GPU,
// and none of the background connections that a closed network refuses.
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const contentTypes = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Serves `root` on 127.0.0.1 at a free port. Unknown paths fall back to
 * index.html, as a single-page app expects. Resolves to `{ url, close }`.
 */
export async function serveStatic(root = distDir) {
  await stat(path.join(root, 'index.html')).catch(() => {
    throw new Error(`${root}/index.html is missing: run \`trunk build --release\` first`);
  });
  const server = createServer(async (request, response) => {
    const { pathname } = new URL(request.url ?? '/', 'http://localhost');
    let file = path.join(root, path.normalize(decodeURIComponent(pathname)));
    if (!file.startsWith(root)) {
      response.writeHead(403).end();
      return;
    }
    const info = await stat(file).catch(() => null);
    if (info === null || info.isDirectory()) {
      file = path.join(root, 'index.html');
    }
    const type = contentTypes[path.extname(file)] ?? 'application/octet-stream';
    response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    createReadStream(file).pipe(response);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Launches headless Chromium. */
export function launchBrowser() {
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
}

/**
 * Opens `url` in a fresh context and records console errors and uncaught
 * exceptions into `errors` (as strings). Resolves to `{ page, errors }`.
 * `options` may set `viewport` ({ width, height }), `colorScheme`
 * ('light' or 'dark') and `block` (file names whose requests fail).
 */
export async function openPage(browser, url, options = {}) {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 800 },
    colorScheme: options.colorScheme ?? 'light',
    acceptDownloads: true,
  });
  // Playwright's own waits (a click, a read, a navigation) get the suites'
  // one limit too, instead of its 30 s.
  context.setDefaultTimeout(WAIT_LIMIT_MS);
  for (const file of options.block ?? []) {
    await context.route((url) => url.pathname.endsWith(`/${file}`), (route) => route.abort());
  }
  const page = await context.newPage();
  const errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') {
      errors.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) =>
    errors.push(`request failed: ${request.url()} (${request.failure()?.errorText})`),
  );
  await page.goto(url);
  return { page, errors };
}

/**
 * Saves a screenshot as `screenshots/<name>.png` (the whole page unless
 * `fullPage` is false); returns its path.
 */
export async function screenshot(page, name, { fullPage = true } = {}) {
  await mkdir(screenshotDir, { recursive: true });
  const file = path.join(screenshotDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/**
 * The built site served locally plus a browser: `openPage()` opens the site's
 * root (or `pathAndQuery` under it). `close()` stops both.
 */
export async function startSite() {
  const server = await serveStatic();
  const browser = await launchBrowser().catch(async (error) => {
    await server.close();
    throw error;
  });
  return {
    url: server.url,
    browser,
    openPage: (pathAndQuery = '', options = {}) =>
      openPage(browser, new URL(pathAndQuery, server.url).href, options),
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * The site for one test file: served, with a browser, before its first
 * test and closed after its last. Call it at the file's top level; the
 * object it returns opens pages as `startSite()`'s does.
 */
export function siteForFile() {
  let site;
  before(async () => {
    site = await startSite();
  });
  after(async () => {
    await site?.close();
  });
  return { openPage: (...args) => site.openPage(...args) };
}
