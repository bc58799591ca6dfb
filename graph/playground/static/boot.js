// Starts GraphiQL. Everything it needs is local: React, ReactDOM and GraphiQL
// come from the scripts before this one, and the endpoint, the default
// headers and the example tabs from the page's #graphiql-config JSON (built
// by the server from static/examples/), so the page works with no internet
// and under a strict Content-Security-Policy (no inline script).
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('graphiql-config').textContent);
  // Subscriptions run over a websocket at the same address: ws:// beside
  // http://, wss:// beside https://. The bundled graphql-ws client speaks
  // graphql-transport-ws and sends the Headers editor's JSON as the
  // connection_init payload, where the server reads the Authorization
  // member.
  var wsURL = new URL(config.endpoint, window.location.href);
  wsURL.protocol = wsURL.protocol === 'https:' ? 'wss:' : 'ws:';
  var props = {
    // A relative URL: the endpoint is the page's own address, whatever
    // public URL or path prefix the server is reached through.
    fetcher: GraphiQL.createFetcher({ url: config.endpoint, subscriptionUrl: wsURL.href }),
    defaultHeaders: config.defaultHeaders,
    defaultTabs: config.tabs,
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: 'headers',
    // The Authorization header holds an API token: keep it out of localStorage.
    shouldPersistHeaders: false,
  };
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, props)
  );
})();
