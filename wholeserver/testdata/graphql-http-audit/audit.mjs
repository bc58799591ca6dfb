// Runs graphql-http's audit of the GraphQL over HTTP specification against
// the GraphQL endpoint given as the first argument, and prints its results
// as one JSON object: {"counts": {"ok", "warn", "error"}, "results": [...]}.
// Exit status 3: this node cannot run the audit (no fetch: node < 18).
import { auditServer } from 'graphql-http';

if (typeof fetch !== 'function') {
  console.error(`node ${process.version} has no fetch; the audit needs node 18 or later`);
  process.exit(3);
}
const url = process.argv[2];
const results = await auditServer({ url });
const counts = { ok: 0, warn: 0, error: 0 };
for (const r of results) counts[r.status]++;
console.log(JSON.stringify({
  counts,
  results: results.map((r) => ({ id: r.id, name: r.name, status: r.status, reason: r.reason })),
}));
