// A published site's MCP server, as an AI assistant's client meets it, with
// the official TypeScript SDK: its tools and resources, a search, a page,
// a page the visitor may not read. Prints a JSON report for
// published/mcp_test.go.
//
// MCP_URL: the server's address; MCP_BEARER: a visitor token sent as a
// bearer header (optional); MCP_QUERY: a search; MCP_PAGE: a page's path;
// MCP_HIDDEN: the path of a page the visitor may not read.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = process.env;
const report = {};
const text = (result) => (result.content || []).map((c) => c.text || '').join('\n');

try {
  const headers = env.MCP_BEARER ? { Authorization: `Bearer ${env.MCP_BEARER}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(env.MCP_URL), { requestInit: { headers } });
  const client = new Client({ name: 'docsapi-published-test', version: '1.0.0' });
  await client.connect(transport);
  report.server = client.getServerVersion();
  report.tools = (await client.listTools()).tools.map((t) => t.name);

  const search = await client.callTool({ name: 'search', arguments: { query: env.MCP_QUERY } });
  report.search = { text: text(search), results: (search.structuredContent || {}).results || [], isError: !!search.isError };

  const page = await client.callTool({ name: 'get_page', arguments: { path: env.MCP_PAGE } });
  report.page = { text: text(page), isError: !!page.isError };

  if (env.MCP_HIDDEN) {
    const hidden = await client.callTool({ name: 'get_page', arguments: { path: env.MCP_HIDDEN } });
    report.hidden = { text: text(hidden), isError: !!hidden.isError };
    try {
      const r = await client.readResource({ uri: `docs://site/pages/${env.MCP_HIDDEN}` });
      report.hiddenResource = r.contents.map((c) => c.text).join('\n');
    } catch (e) {
      report.hiddenResourceError = String((e && e.message) || e);
    }
  }

  report.resources = (await client.listResources()).resources.map((r) => r.uri);
  report.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  report.tree = (await client.readResource({ uri: 'docs://site/pages' })).contents.map((c) => c.text).join('\n');
  report.pageResource = (await client.readResource({ uri: `docs://site/pages/${env.MCP_PAGE}` })).contents.map((c) => c.text).join('\n');
  await client.close();
} catch (e) {
  report.error = String((e && e.message) || e);
}
console.log(JSON.stringify(report));
