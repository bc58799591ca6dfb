// Runs Lighthouse (12.2.3, its desktop preset) in Debian's Chromium on
// pages of a published site, categories performance, accessibility, best
// practices and SEO. Prints, per page, the four scores and every audit
// that counts toward them and did not pass, as JSON for
// published/browser_test.go, which asserts.
//
// Environment: LIGHTHOUSE_URLS (JSON: a list of absolute addresses),
// LIGHTHOUSE_REPORTS (a directory where each page's HTML report is kept,
// as published-lighthouse-{n}.html), CHROMIUM (the browser's executable).
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse, { desktopConfig } from 'lighthouse';
import { chromeFlags, fail } from './browser.mjs';

const categories = ['performance', 'accessibility', 'best-practices', 'seo'];
const urls = JSON.parse(process.env.LIGHTHOUSE_URLS);
const summary = { pages: [] };
// The browsers' profiles, removed whatever the exit (an interrupt:
// chrome-launcher then stops the browser and exits).
const profiles = new Set();
process.on('exit', () => profiles.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

for (const [n, url] of urls.entries()) {
  const userDataDir = await mkdtemp(join(tmpdir(), 'docsapi-lighthouse-'));
  profiles.add(userDataDir);
  let chrome;
  try {
    chrome = await chromeLauncher.launch({
      chromePath: process.env.CHROMIUM,
      chromeFlags: ['--headless=new', ...chromeFlags],
      userDataDir,
      logLevel: 'silent',
    });
    const result = await lighthouse(url, { port: chrome.port, output: 'html', logLevel: 'error', onlyCategories: categories },
      desktopConfig);
    const lhr = result.lhr;
    let report = '';
    if (process.env.LIGHTHOUSE_REPORTS) {
      report = join(process.env.LIGHTHOUSE_REPORTS, `published-lighthouse-${n + 1}.html`);
      await writeFile(report, result.report);
    }
    const page = { url, report, finalUrl: lhr.finalDisplayedUrl, version: lhr.lighthouseVersion, userAgent: lhr.environment.hostUserAgent,
      runtimeError: lhr.runtimeError ? lhr.runtimeError.message : '', warnings: lhr.runWarnings, scores: {}, failing: [], metrics: {} };
    for (const id of categories) {
      const cat = lhr.categories[id];
      page.scores[id] = cat.score === null ? -1 : Math.round(cat.score * 100);
      for (const ref of cat.auditRefs) {
        const audit = lhr.audits[ref.id];
        if (ref.weight > 0 && audit.score !== null && audit.score < 1) {
          const items = audit.details && Array.isArray(audit.details.items) ? audit.details.items.slice(0, 5) : [];
          page.failing.push({ category: id, id: ref.id, weight: ref.weight, score: audit.score, title: audit.title,
            displayValue: audit.displayValue || '', explanation: audit.explanation || '', items: JSON.stringify(items).slice(0, 1500) });
        }
      }
    }
    for (const id of ['first-contentful-paint', 'largest-contentful-paint', 'total-blocking-time', 'cumulative-layout-shift', 'speed-index']) {
      page.metrics[id] = lhr.audits[id] ? lhr.audits[id].displayValue : '';
    }
    summary.pages.push(page);
  } catch (err) {
    if (chrome) {
      chrome.kill();
    }
    fail(err);
  }
  chrome.kill();
  await rm(userDataDir, { recursive: true, force: true }).catch(() => {});
}
process.stdout.write(JSON.stringify(summary, null, 1));
