// Drives the GraphQL playground in Chromium as a user would, and prints what
// it observed as JSON for graph/playground/browser_test.go, which asserts.
//
// Environment: PLAYGROUND_URL (the page, http://127.0.0.1:port/graphql),
// PLAYGROUND_TOKEN (an API token of a user with an organization and a site),
// PLAYGROUND_TOKEN_NO_ORG (one of a user of no organization),
// CHROMIUM (the browser's executable).
import { chromium } from 'playwright-core';

const pageURL = process.env.PLAYGROUND_URL;
const token = process.env.PLAYGROUND_TOKEN;
const origin = new URL(pageURL).origin;
const report = {
  requests: [], blocked: [], violations: [], consoleErrors: [],
  variablesBefore: [], variablesAfter: [], runs: [],
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  headless: true,
  // As root (CI containers) Chromium's sandbox cannot start.
  args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [],
});
try {
  const context = await browser.newContext();
  // Every request: recorded; any not to the server: blocked, so none leaves
  // the machine even if the page asked for one.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) {
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
  // CSP violations, as the page sees them.
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
  // refusing: the page gives a bad token on purpose, and Chromium logs its 401.
  const watch = (page, refusing = false) => {
    page.on('websocket', (ws) => report.requests.push(ws.url()));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !(refusing && msg.text().includes('status of 401'))) {
        (msg.text().startsWith('CSP violation') ? report.violations : report.consoleErrors).push(msg.text());
      }
    });
    page.on('pageerror', (err) => report.consoleErrors.push(String(err)));
  };

  const tokenInDOM = (p) => p.evaluate((t) => document.documentElement.outerHTML.includes(t) ||
    Array.from(document.querySelectorAll('input, textarea')).some((i) => i.value.includes(t)), token);

  const page = await context.newPage();
  watch(page);
  await page.goto(pageURL);
  await page.locator('.graphiql-container').waitFor();
  const tabs = page.locator('.graphiql-tab');
  const tabCount = await tabs.count();

  // The value of a CodeMirror editor of the active tab.
  const editorValue = (p, selector) => p.locator(selector).first().evaluate((el) => el.CodeMirror.getValue());
  const variables = (p) => editorValue(p, '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror');
  // Selects a tab, and waits until GraphiQL has read its query (it does so
  // a moment after a switch): a run would name the previous tab's operation.
  const selectTab = async (p, i) => {
    const tab = p.locator('.graphiql-tab').nth(i);
    await tab.locator('.graphiql-tab-button').click();
    await tab.and(p.locator('.graphiql-tab-active')).waitFor();
    const title = (await tab.locator('.graphiql-tab-button').textContent()).trim();
    await p.waitForFunction((t) => {
      const cm = document.querySelector('.graphiql-query-editor .CodeMirror');
      return cm && cm.CodeMirror.operationName === t;
    }, title);
    return title;
  };
  // Runs the active tab's operation; its response once complete.
  const run = async (p) => {
    await p.locator('.graphiql-execute-button').click();
    const response = p.locator('.graphiql-response .CodeMirror');
    await p.waitForFunction(() => {
      const cm = document.querySelector('.graphiql-response .CodeMirror');
      return cm && /"(data|errors)"/.test(cm.CodeMirror.getValue()) &&
        !document.querySelector('.graphiql-response .graphiql-spinner');
    });
    return response.evaluate((el) => el.CodeMirror.getValue());
  };

  for (let i = 0; i < tabCount; i++) {
    await selectTab(page, i);
    report.variablesBefore.push(await variables(page));
  }

  // The token, once, in its field.
  await page.fill('#docsapi-token', token);
  await page.press('#docsapi-token', 'Enter');
  await page.locator('#docsapi-token-status', { hasText: 'Signed in' }).waitFor();
  report.status = await page.locator('#docsapi-token-status').textContent();
  await page.locator('.graphiql-container').waitFor();

  report.tabsAfter = await tabs.allTextContents();
  for (let i = 0; i < tabCount; i++) {
    const title = await selectTab(page, i);
    report.variablesAfter.push(await variables(page));
    report.runs.push({ tab: title, response: await run(page) });
  }

  // The rest of GraphiQL's interface, under the page's policy (a violation
  // shows in report.violations): the documentation explorer, the history,
  // the settings dialog.
  await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
  await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().click();
  await page.locator('.graphiql-doc-explorer-title', { hasText: 'Query' }).waitFor();
  await page.getByRole('button', { name: 'Show History' }).click();
  await page.locator('.graphiql-history-item', { hasText: 'SiteTree' }).first().waitFor();
  await page.getByRole('button', { name: 'Open settings dialog' }).click();
  await page.getByRole('dialog').waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });

  // The page shows the token nowhere, the field included.
  report.tokenInDOM = await tokenInDOM(page);

  // A new tab with the token in its Headers editor, as a user may still do:
  // it works, and the storage keeps it nowhere either.
  await page.locator('.graphiql-tab-add').click();
  await page.locator('.graphiql-tab').nth(tabCount).and(page.locator('.graphiql-tab-active')).waitFor();
  await page.locator('.graphiql-query-editor .CodeMirror').evaluate((el) => el.CodeMirror.setValue('query Me { viewer { id } }'));
  await page.getByRole('button', { name: 'Headers' }).click();
  await page.locator('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror')
    .evaluate((el, t) => el.CodeMirror.setValue(JSON.stringify({ Authorization: `Bearer ${t}` })), token);
  // Forget the field's token: the Headers editor's is then the only one.
  await page.click('#docsapi-token-forget');
  report.headersRun = await run(page);
  // GraphiQL writes its tab state a moment after an edit.
  await page.waitForTimeout(1000);

  // A second page of the same browser.
  const second = await context.newPage();
  watch(second);
  await second.goto(pageURL);
  await second.locator('.graphiql-container').waitFor();
  report.secondPageStatus = await second.locator('#docsapi-token-status').textContent();
  const secondTabs = second.locator('.graphiql-tab');
  const siteTab = await secondTabs.filter({ hasText: 'SiteTree' }).count();
  if (siteTab > 0) {
    await secondTabs.filter({ hasText: 'SiteTree' }).first().locator('.graphiql-tab-button').click();
    report.secondPageVariables = await variables(second);
  }

  // Another browser, another user: a refused token is not kept; a user of
  // no organization keeps the placeholders, and is told why.
  const other = await browser.newContext();
  const third = await other.newPage();
  watch(third, true);
  await third.goto(pageURL);
  await third.locator('.graphiql-container').waitFor();
  await third.fill('#docsapi-token', 'not-a-token-at-all');
  await third.press('#docsapi-token', 'Enter');
  await third.locator('#docsapi-token-status', { hasText: 'refused' }).waitFor();
  report.refusedStatus = await third.locator('#docsapi-token-status').textContent();
  await third.fill('#docsapi-token', process.env.PLAYGROUND_TOKEN_NO_ORG);
  await third.press('#docsapi-token', 'Enter');
  await third.locator('#docsapi-token-status', { hasText: 'Signed in' }).waitFor();
  report.noOrgStatus = await third.locator('#docsapi-token-status').textContent();
  report.noOrgVariables = [];
  const thirdTabs = await third.locator('.graphiql-tab').count();
  for (let i = 0; i < thirdTabs; i++) {
    await selectTab(third, i);
    report.noOrgVariables.push(await variables(third));
  }
  await other.close();

  // Everything kept for the origin: cookies, localStorage and IndexedDB
  // (Playwright's storage state), and each page's sessionStorage.
  const state = await context.storageState({ indexedDB: true });
  const session = [];
  for (const p of [page, second]) {
    session.push(await p.evaluate(() => Object.fromEntries(Object.entries(sessionStorage))));
  }
  const cookies = await page.evaluate(() => document.cookie);
  const everything = { state, session, cookies };
  report.storage = JSON.stringify(everything);
  report.tokenInStorage = [];
  const look = (where, value) => {
    if (JSON.stringify(value).includes(token)) {
      report.tokenInStorage.push(where);
    }
  };
  look('cookies', state.cookies);
  look('document.cookie', cookies);
  for (const o of state.origins) {
    look(`localStorage of ${o.origin}`, o.localStorage);
    look(`IndexedDB of ${o.origin}`, o.indexedDB || []);
  }
  look('sessionStorage', session);
  const ls = (state.origins.find((o) => o.origin === origin) || { localStorage: [] }).localStorage;
  report.history = (ls.find((e) => e.name === 'graphiql:queries') || { value: '' }).value;
  report.tokenInDOM = report.tokenInDOM || await tokenInDOM(second);
} catch (err) {
  // What was seen so far helps to tell why.
  process.stderr.write(`${JSON.stringify(report, null, 1)}\n`);
  throw err;
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(report));
