// What the scripts of published/browser_test.go share: Debian's Chromium,
// launched as the tests want it (headless, no sandbox for root in CI, no
// GPU, nothing of its own on the network, a fresh profile), and pages that
// reach the test server alone.
//
// Environment: CHROMIUM (the browser's executable).
import { chromium } from 'playwright-core';

// The flags every launch adds: no network of the browser's own (the
// machine's network is closed), no first-run pages, no sync. Playwright
// gives each browser it launches a fresh --user-data-dir of its own;
// chrome-launcher (Lighthouse) is given one by lighthouse.mjs.
export const chromeFlags = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launch() {
  return chromium.launch({ executablePath: process.env.CHROMIUM, headless: true, args: chromeFlags });
}

// watch records what the pages of context do: every request (and blocks
// those that leave origin), Content-Security-Policy violations, console
// errors and uncaught exceptions, into report.
export async function watch(context, origin, report) {
  report.requests ??= [];
  report.blocked ??= [];
  report.violations ??= [];
  report.consoleErrors ??= [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || new URL(url).origin === origin) {
      return route.continue();
    }
    report.blocked.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('request', (req) => {
    if (!req.url().startsWith('data:')) {
      report.requests.push(req.url());
    }
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  context.on('page', (page) => {
    page.on('console', (msg) => {
      if (msg.type() !== 'error') {
        return;
      }
      // The not-found page answers 404 on purpose, and requests blocked
      // here are in report.blocked: Chromium logs both.
      if (msg.text().includes('status of 404') || msg.text().includes('ERR_BLOCKED_BY_CLIENT')) {
        return;
      }
      (msg.text().startsWith('CSP violation') ? report.violations : report.consoleErrors).push(msg.text());
    });
    page.on('pageerror', (err) => report.consoleErrors.push(String(err)));
  });
}

// A failure inside a script: printed, and the script exits 1.
export function fail(err) {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
}
