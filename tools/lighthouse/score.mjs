// Scores the signed-in dashboard with Lighthouse (mobile defaults: the
// emulated phone and simulated throttling) and prints the category scores
// and the bytes the first load transfers.
//
// Environment: CATSRV_URL (the running server, e.g. http://127.0.0.1:8080),
// CATSRV_TOKEN (an admin token), CATSRV_PAGE (the view, default
// /?cat=demo&range=30), CHROME_PATH (default /usr/bin/chromium),
// LIGHTHOUSE_JSON (a file to write the whole report to, as JSON).
// Used by `make lighthouse`, which starts the server.
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';
import puppeteer from 'puppeteer-core';
import { writeFileSync } from 'node:fs';

const base = process.env.CATSRV_URL;
const token = process.env.CATSRV_TOKEN;
const view = process.env.CATSRV_PAGE || '/?cat=demo&range=30';
if (!base || !token) {
  console.error('set CATSRV_URL and CATSRV_TOKEN');
  process.exit(2);
}
const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || '/usr/bin/chromium',
  chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu'],
});
let code = 0;
try {
  const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${chrome.port}` });
  const page = await browser.newPage();
  // Sign in as the page does: the token lives in the tab's sessionStorage,
  // which Lighthouse is told not to reset.
  // On a route of the same origin that is not the page, so that nothing
  // of the page is cached before the measured load.
  await page.goto(base + '/healthz');
  await page.evaluate((t) => sessionStorage.setItem('catsrv.token', t), token);
  const result = await lighthouse(base + view, { port: chrome.port, disableStorageReset: true, logLevel: 'error', output: 'json' }, undefined, page);
  const lhr = result.lhr;
  const score = (c) => Math.round(lhr.categories[c].score * 100);
  const audit = (a) => lhr.audits[a].numericValue;
  console.log(`view:            ${view}`);
  console.log(`performance:     ${score('performance')}`);
  console.log(`accessibility:   ${score('accessibility')}`);
  console.log(`best-practices:  ${score('best-practices')}`);
  console.log(`first load:      ${(audit('total-byte-weight') / 1024).toFixed(1)} KB transferred`);
  console.log(`LCP ${(audit('largest-contentful-paint') / 1000).toFixed(2)} s, TBT ${audit('total-blocking-time').toFixed(0)} ms, ` +
    `FCP ${(audit('first-contentful-paint') / 1000).toFixed(2)} s, CLS ${audit('cumulative-layout-shift').toFixed(3)}`);
  for (const item of lhr.audits['network-requests'].details.items) {
    console.log(`  ${String(item.transferSize).padStart(8)} B  ${item.url.replace(base, '')}`);
  }
  // The long tasks (simulated, as TBT counts them) and what ran in them:
  // what to look at when TBT is high.
  const long = lhr.audits['long-tasks'].details?.items || [];
  console.log(`long tasks:      ${long.length}`);
  for (const item of long) {
    console.log(`  ${item.duration.toFixed(0).padStart(6)} ms at ${item.startTime.toFixed(0)} ms  ${String(item.url).replace(base, '')}`);
  }
  if (process.env.LIGHTHOUSE_JSON) writeFileSync(process.env.LIGHTHOUSE_JSON, JSON.stringify(lhr));
  if (lhr.runtimeError) {
    console.error(lhr.runtimeError.message);
    code = 1;
  }
  await browser.disconnect();
} finally {
  await chrome.kill();
}
process.exit(code);
