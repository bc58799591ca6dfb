// A front end's check of docsapi's GraphQL API, run as a user would, with
// Apollo Client's normalized cache:
//
//   1. the spaces of an organization, paginated as a Relay connection
//      (`first`/`after`, merged by Apollo's relayStylePagination), agree
//      item for item with the same list read by `limit` in one page;
//   2. a space fetched through `node(id:)` is the same cache entry
//      (`Space:<id>`) as the one in the list;
//   3. a mutation returning `{id title}` updates the list without a refetch.
//
// Usage (against a running server; see examples/README.md):
//   DOCSAPI_URL=http://127.0.0.1:8080/graphql DOCSAPI_TOKEN=dev-token-change-me npm run check
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { relayStylePagination } from "@apollo/client/utilities";

const url = process.env.DOCSAPI_URL ?? "http://127.0.0.1:8080/graphql";
const token = process.env.DOCSAPI_TOKEN ?? "dev-token-change-me";
const headers = { authorization: `Bearer ${token}` };
const pageSize = 10;
const wantSpaces = 25;

function check(ok, message) {
  if (!ok) {
    console.error(`FAIL: ${message}`);
    process.exit(1);
  }
  console.log(`ok: ${message}`);
}

// Apollo needs the implementations of interfaces (Node) to match fragments
// on them: read them from the schema, as codegen tools do.
async function possibleTypes() {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({
      query: "{ __schema { types { kind name possibleTypes { name } } } }",
    }),
  });
  const { data, errors } = await res.json();
  if (errors) throw new Error(JSON.stringify(errors));
  const out = {};
  for (const t of data.__schema.types) {
    if (t.possibleTypes) out[t.name] = t.possibleTypes.map((p) => p.name);
  }
  return out;
}

const client = new ApolloClient({
  link: new HttpLink({ uri: url, headers }),
  cache: new InMemoryCache({
    possibleTypes: await possibleTypes(),
    typePolicies: { Organization: { fields: { spaces: relayStylePagination() } } },
  }),
});

const ORGANIZATIONS = gql`
  query Organizations {
    organizations(first: 1) { edges { node { id title } } }
  }
`;
const CREATE_SPACE = gql`
  mutation CreateSpace($org: ID!, $title: String!) {
    createSpace(organizationId: $org, input: { title: $title }) { id title }
  }
`;
const SPACES = gql`
  query Spaces($org: ID!, $first: Int!, $after: String) {
    organization(id: $org) {
      id
      spaces(first: $first, after: $after) {
        edges { cursor node { id title } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
`;
const SPACES_BY_LIMIT = gql`
  query SpacesByLimit($org: ID!) {
    organization(id: $org) { id spaces(limit: 1000) { items { id } } }
  }
`;
const NODE = gql`
  query Node($id: ID!) {
    node(id: $id) { id ... on Space { title } }
  }
`;
const RENAME = gql`
  mutation Rename($id: ID!, $title: String!) {
    updateSpace(id: $id, input: { title: $title }) { id title }
  }
`;

const orgs = await client.query({ query: ORGANIZATIONS });
const org = orgs.data.organizations.edges[0]?.node;
check(org, `the token's organization is ${org?.title} (${org?.id})`);

// Enough spaces for several pages.
const all = await client.query({ query: SPACES_BY_LIMIT, variables: { org: org.id }, fetchPolicy: "no-cache" });
for (let i = all.data.organization.spaces.items.length; i < wantSpaces; i++) {
  await client.mutate({ mutation: CREATE_SPACE, variables: { org: org.id, title: `Example ${i + 1}` } });
}
const byLimit = (await client.query({ query: SPACES_BY_LIMIT, variables: { org: org.id }, fetchPolicy: "no-cache" }))
  .data.organization.spaces.items.map((s) => s.id);

// 1. Walk the connection page by page; relayStylePagination merges the
// pages into one list in the cache (whose read answers every `after` from
// the merged list: the next pages are asked of the network, as fetchMore
// does).
let result = await client.query({ query: SPACES, variables: { org: org.id, first: pageSize } });
let pages = 1;
while (result.data.organization.spaces.pageInfo.hasNextPage) {
  result = await client.query({
    query: SPACES,
    variables: { org: org.id, first: pageSize, after: result.data.organization.spaces.pageInfo.endCursor },
    fetchPolicy: "network-only",
  });
  pages++;
}
const merged = client.readQuery({ query: SPACES, variables: { org: org.id, first: pageSize } });
const walked = merged.organization.spaces.edges.map((e) => e.node.id);
check(pages === Math.ceil(byLimit.length / pageSize), `${pages} pages of ${pageSize} for ${byLimit.length} spaces`);
check(
  walked.length === byLimit.length && walked.every((id, i) => id === byLimit[i]),
  `the connection walked with first/after agrees item for item with limit (${walked.length} spaces)`,
);

// 2. The same space through node(id:) is the same normalized entry.
const first = merged.organization.spaces.edges[0].node;
const viaNode = await client.query({ query: NODE, variables: { id: first.id } });
check(viaNode.data.node.__typename === "Space" && viaNode.data.node.id === first.id, `node(id:) answers Space ${first.id}`);
const key = client.cache.identify({ __typename: "Space", id: first.id });
const entries = Object.keys(client.cache.extract()).filter((k) => k === key);
check(entries.length === 1, `one cache entry ${key} for the list's item and node's answer`);

// 3. A mutation answering {id title} updates the list in the cache.
const title = `${first.title.slice(0, 40)} (renamed)`;
await client.mutate({ mutation: RENAME, variables: { id: first.id, title } });
const after = client.readQuery({ query: SPACES, variables: { org: org.id, first: pageSize } });
check(after.organization.spaces.edges[0].node.title === title, "the list shows the new title without a refetch");
await client.mutate({ mutation: RENAME, variables: { id: first.id, title: first.title } });

console.log("all checks passed");
