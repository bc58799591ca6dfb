// Runs axe-core (@axe-core/playwright) in Chromium on pages of a published
// site: every rule of WCAG 2.0 and 2.1, levels A and AA, and axe's best
// practices. Prints, per page, the violations found (and how many checks
// passed or need a person to review them) as JSON for
// published/browser_test.go, which asserts.
//
// Environment: AXE_CASES (JSON: [{name, url, width, height, mobile, theme
// "light" or "dark", script (the page's script runs), expand (open every
// <details>)}]), CHROMIUM (the browser's executable).
import { AxeBuilder } from '@axe-core/playwright';
import { fail, launch, watch } from './browser.mjs';

export const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

const cases = JSON.parse(process.env.AXE_CASES);
const report = { pages: [] };
const browser = await launch();
try {
  for (const c of cases) {
    console.error(`axe: ${c.name} ${c.url}`);
    const context = await browser.newContext({
      viewport: { width: c.width, height: c.height },
      isMobile: !!c.mobile,
      hasTouch: !!c.mobile,
      colorScheme: c.theme === 'dark' ? 'dark' : 'light',
    });
    await watch(context, new URL(c.url).origin, report);
    if (!c.script) {
      // The page without its script, as a reader with JavaScript off sees
      // it: axe itself needs JavaScript, so the page's script is refused
      // rather than JavaScript turned off. (Routes added last match first.)
      await context.route('**/~gitbook/static/*.js', (route) => route.abort('blockedbyclient'));
    }
    if (c.theme === 'dark') {
      // The reader's choice, as the page's toggle keeps it.
      // (axe also opens a blank page, where storage is refused.)
      await context.addInitScript(() => {
        try { localStorage.setItem('docsapi-theme', 'dark'); } catch (e) { /* about:blank */ }
      });
    }
    const page = await context.newPage();
    const res = await page.goto(c.url);
    if (c.expand) {
      await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
    }
    const theme = await page.evaluate(() => document.documentElement.getAttribute('data-theme') || '');
    const result = await new AxeBuilder({ page }).withTags(tags).analyze();
    report.pages.push({
      name: c.name,
      url: c.url,
      status: res.status(),
      theme,
      passes: result.passes.length,
      incomplete: result.incomplete.map((r) => ({ id: r.id, nodes: r.nodes.map((n) => n.target.join(' ')) })),
      violations: result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(' '), html: n.html.slice(0, 300), summary: n.failureSummary })),
      })),
      axe: result.testEngine.version,
    });
    await context.close();
  }
} catch (err) {
  await browser.close();
  fail(err);
}
await browser.close();
process.stdout.write(JSON.stringify(report, null, 1));
