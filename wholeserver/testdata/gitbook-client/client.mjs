// Calls docsapi's routes through GitBook's own API client, @gitbook/api
// (pinned by package-lock.json), as a program using it does: each call is
// made with the client's method of the operation, its arguments in the
// order the method takes them; the client builds the path, serializes the
// query and the body, and reads the answer.
//
// A method's name is the reference's operationId as the client's generator
// cases it (getOrganizationSAMLProviderById is
// api.orgs.getOrganizationSamlProviderById): found by the operationId in
// any case.
//
// The plan, a JSON file named by the first argument:
//   {"endpoint", "authToken",
//    "calls": [{"operation", "params": {<path parameter>: <value>}, "query"?, "body"?}]}
// The report, on stdout, one entry per call, in order:
//   {"operation", "method": "api.<group>.<name>",
//    "sent": {"method", "url", "contentType", "body"}: the request the client made,
//    "status", "json": the answer as the client decoded it (an operation
//    answering JSON), or "text": the answer's body (one answering none),
//    "error": what the client threw, or why the call could not be made}
// Exit status 3: this node cannot run the client (no fetch: node < 18).
import { readFileSync } from 'node:fs';
import { GitBookAPI, GitBookAPIError } from '@gitbook/api';

if (typeof fetch !== 'function') {
  console.error(`node ${process.version} has no fetch; @gitbook/api needs node 18 or later`);
  process.exit(3);
}
const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));

let sent;
const api = new GitBookAPI({
  endpoint: plan.endpoint,
  authToken: plan.authToken,
  // The client's own hook for the fetch it calls: the request is noted,
  // and sent as the client made it.
  serviceBinding: {
    fetch: (input, init) => {
      sent = {
        method: init.method,
        url: String(input),
        contentType: new Headers(init.headers).get('content-type'),
        body: typeof init.body === 'string' ? init.body : null,
      };
      return fetch(input, init);
    },
  },
});

// The client's methods, by name in lower case, with their arguments' names.
const methods = new Map();
for (const [group, members] of Object.entries(api)) {
  if (members === null || typeof members !== 'object') continue;
  for (const [name, fn] of Object.entries(members)) {
    const source = typeof fn === 'function' ? fn.toString() : '';
    if (!source.includes('this.request(')) continue;
    const args = source
      .slice(source.indexOf('(') + 1, source.indexOf(')'))
      .split(',')
      .map((arg) => arg.split('=')[0].trim())
      .filter(Boolean);
    methods.set(name.toLowerCase(), { label: `api.${group}.${name}`, fn, args });
  }
}

// args are a call's arguments for method: path parameters by name, then
// the body (data) and the query where the method takes them.
function args(method, call) {
  const out = [];
  for (const name of method.args) {
    if (name === 'params') break;
    if (name === 'data') out.push(call.body);
    else if (name === 'query') out.push(call.query);
    else if (name in call.params) out.push(call.params[name]);
    else throw new Error(`the plan has no value for the client's argument ${name}`);
  }
  if (call.body !== undefined && !method.args.includes('data')) throw new Error('the client takes no body');
  if (call.query !== undefined && !method.args.includes('query')) throw new Error('the client takes no query');
  return out;
}

const report = [];
for (const call of plan.calls) {
  const entry = { operation: call.operation };
  report.push(entry);
  const method = methods.get(call.operation.toLowerCase());
  if (!method) {
    entry.error = 'the client has no method for this operationId';
    continue;
  }
  entry.method = method.label;
  sent = undefined;
  try {
    const res = await method.fn(...args(method, call));
    entry.status = res.status;
    if (res.bodyUsed) entry.json = res.data;
    else entry.text = await res.text();
  } catch (err) {
    if (err instanceof GitBookAPIError) entry.status = err.code;
    entry.error = String(err && err.message ? err.message : err);
  }
  entry.sent = sent;
}
process.stdout.write(JSON.stringify(report));
