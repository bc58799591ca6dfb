// Reads a published site in Chromium as a reader would: follows the
// sidebar to a nested page, switches tabs, sections and variants, turns
// dark mode on, then reads it again on a phone's screen and with
// JavaScript off. Saves screenshots, and prints what it saw as JSON for
// published/browser_test.go, which asserts.
//
// Environment: READER_PAGES (JSON: the absolute addresses front, blocks,
// nested of the site's first variant), SCREENSHOTS (a directory),
// CHROMIUM (the browser's executable).
import { join } from 'node:path';
import { fail, launch, watch } from './browser.mjs';

const pages = JSON.parse(process.env.READER_PAGES);
const shots = process.env.SCREENSHOTS;
const origin = new URL(pages.front).origin;
const report = { screenshots: [] };
const desktop = { width: 1280, height: 800 };
const phone = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

// describe is what a reader sees of the page: its title, heading, the
// page, section and variant marked current, the breadcrumbs, the text.
const describe = (page) => page.evaluate(() => {
  const text = (sel) => {
    const el = document.querySelector(sel);
    return el ? el.textContent.replace(/\s+/g, ' ').trim() : '';
  };
  return {
    url: location.href,
    title: document.title,
    h1: text('main h1'),
    currentPage: text('.sidebar a[aria-current="page"]'),
    openPages: Array.from(document.querySelectorAll('.sidebar li.open > a')).map((a) => a.textContent.trim()),
    currentSection: text('.sections a[aria-current]'),
    variant: text('.variants > summary'),
    currentVariant: text('.variants a[aria-current]'),
    breadcrumbs: Array.from(document.querySelectorAll('.breadcrumbs li')).map((li) => li.textContent.trim()),
    content: text('main .content'),
    theme: document.documentElement.getAttribute('data-theme') || '',
    background: getComputedStyle(document.body).backgroundColor,
  };
});

// click follows a link and waits for the page it leads to.
async function follow(page, locator) {
  await Promise.all([page.waitForNavigation(), locator.click()]);
}

// screenshot keeps the whole page as published-{name}.png, its images
// loaded (those below the fold are lazy).
async function screenshot(page, name) {
  const path = join(shots, `published-${name}.png`);
  await page.evaluate(() => Promise.all(Array.from(document.images, (img) => {
    img.loading = 'eager';
    return img.complete ? null : new Promise((done) => { img.onload = img.onerror = done; });
  })));
  await page.screenshot({ path, fullPage: true });
  report.screenshots.push(path);
}

const browser = await launch();
try {
  // A desktop reader, with JavaScript.
  const context = await browser.newContext({ viewport: desktop, colorScheme: 'light' });
  await watch(context, origin, report);
  const page = await context.newPage();
  await page.goto(pages.front);
  report.front = await describe(page);

  // The sidebar, to a page, then to the page under it.
  const sidebar = page.getByRole('navigation', { name: 'Pages' });
  await follow(page, sidebar.getByRole('link', { name: 'Blocks', exact: true }));
  report.blocks = await describe(page);
  await follow(page, sidebar.getByRole('link', { name: 'Nested page', exact: true }));
  report.nested = await describe(page);

  // Back by the breadcrumbs; the tabs of the page of blocks.
  await follow(page, page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Blocks' }));
  const tabs = page.getByRole('tab');
  const visiblePanels = () => page.locator('.gb-tab-panel:visible').allTextContents().then((t) => t.map((s) => s.trim()));
  report.tabs = {
    names: await tabs.allTextContents(),
    selected: await page.getByRole('tab', { selected: true }).allTextContents(),
    panels: await visiblePanels(),
  };
  await page.getByRole('tab', { name: 'Linux' }).click();
  report.tabs.selectedAfterClick = await page.getByRole('tab', { selected: true }).allTextContents();
  report.tabs.panelsAfterClick = await visiblePanels();

  // The search box, from a page of v1: a query, its page of results (v1
  // and the other sections' defaults), a result followed.
  await page.getByRole('searchbox', { name: 'Search this site' }).fill('hint');
  await Promise.all([page.waitForLoadState('load'), page.getByRole('searchbox', { name: 'Search this site' }).press('Enter')]);
  report.search = {
    heading: (await page.locator('main h1').textContent() || '').trim(),
    results: (await page.locator('.search-results .results > li h2').allTextContents()).map((s) => s.trim()),
  };
  await follow(page, page.locator('.search-results .results > li h2 a').first());
  report.searchFollowed = await describe(page);

  // Another section, and back.
  const sections = page.getByRole('navigation', { name: 'Sections' });
  await follow(page, sections.getByRole('link', { name: 'API' }));
  report.section = await describe(page);
  await follow(page, page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Guides' }));

  // The other variant, from the switcher.
  await page.locator('details.variants > summary').click();
  await follow(page, page.locator('details.variants').getByRole('link', { name: 'v2' }));
  report.variant = await describe(page);

  // Dark mode, kept across pages.
  const toggle = page.getByRole('button', { name: 'Dark mode' });
  report.toggleBefore = await toggle.getAttribute('aria-pressed');
  await toggle.click();
  report.toggleAfter = await toggle.getAttribute('aria-pressed');
  report.dark = await describe(page);
  await page.goto(pages.blocks);
  report.darkAfterNavigation = await describe(page);
  await screenshot(page, 'desktop-dark');
  await page.getByRole('button', { name: 'Dark mode' }).click();
  report.light = await describe(page);
  await screenshot(page, 'desktop-light');
  await context.close();

  // A phone: the page tree folded above the page.
  const mobile = await browser.newContext({ ...phone, colorScheme: 'light' });
  await watch(mobile, origin, report);
  const mpage = await mobile.newPage();
  await mpage.goto(pages.blocks);
  const layout = () => mpage.evaluate(() => {
    const toc = document.querySelector('.sidebar .toc');
    const main = document.querySelector('main');
    return {
      tocOpen: toc.open,
      tocAboveMain: toc.getBoundingClientRect().bottom <= main.getBoundingClientRect().top,
      scrollWidth: document.documentElement.scrollWidth,
      width: window.innerWidth,
    };
  });
  report.mobile = await layout();
  await screenshot(mpage, 'mobile-light');
  await mpage.locator('.sidebar .toc > summary').click();
  report.mobile.tocOpenAfterClick = (await layout()).tocOpen;
  await follow(mpage, mpage.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Nested page', exact: true }));
  report.mobile.followed = await describe(mpage);
  await mpage.goto(pages.blocks);
  await mpage.getByRole('button', { name: 'Dark mode' }).click();
  report.mobile.dark = await describe(mpage);
  await screenshot(mpage, 'mobile-dark');
  await mobile.close();

  // JavaScript off: every tab under its title, plain links and details.
  const nojs = await browser.newContext({ viewport: desktop, javaScriptEnabled: false, colorScheme: 'light' });
  await watch(nojs, origin, report);
  const npage = await nojs.newPage();
  await npage.goto(pages.blocks);
  report.noScript = {
    tablists: await npage.locator('[role="tablist"]').count(),
    tabTitles: await npage.locator('.gb-tab-title:visible').allTextContents(),
    panels: (await npage.locator('.gb-tab-panel:visible').allTextContents()).map((s) => s.trim()),
    toggleVisible: await npage.locator('.theme-toggle').isVisible(),
  };
  await screenshot(npage, 'desktop-no-script');
  await follow(npage, npage.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Nested page', exact: true }));
  report.noScript.nested = await describe(npage);
  await npage.locator('details.variants > summary').click();
  await follow(npage, npage.locator('details.variants').getByRole('link', { name: 'v2' }));
  report.noScript.variant = await describe(npage);
  await follow(npage, npage.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'API' }));
  report.noScript.section = await describe(npage);
  await nojs.close();

  const nojsPhone = await browser.newContext({ ...phone, javaScriptEnabled: false });
  await watch(nojsPhone, origin, report);
  const npp = await nojsPhone.newPage();
  await npp.goto(pages.blocks);
  report.noScript.mobile = await npp.evaluate(() => ({ tocOpen: document.querySelector('.sidebar .toc').open }));
  report.noScript.mobile.linkVisible = await npp.getByRole('navigation', { name: 'Pages' })
    .getByRole('link', { name: 'Nested page', exact: true }).isVisible();
  await screenshot(npp, 'mobile-no-script');
  await nojsPhone.close();
} catch (err) {
  await browser.close();
  fail(err);
}
await browser.close();
process.stdout.write(JSON.stringify(report, null, 1));
