// Starts GraphiQL. Everything it needs is local: React, ReactDOM and GraphiQL
// come from the scripts before this one, and the endpoint, the example tabs
// and the query that checks a token from the page's #graphiql-config JSON
// (built by the server from static/examples/), so the page works with no
// internet and under a strict Content-Security-Policy (no inline script).
//
// The API token. It is typed once into the field above GraphiQL and kept in
// the variable `token` below, nowhere else: not in an editor (so not in
// GraphiQL's history, favorites or tab state), not in localStorage,
// sessionStorage, IndexedDB or a cookie, and not in the field once used. The
// fetcher adds it to every request of every tab; reloading the page forgets
// it. GraphiQL's own storage goes through storageFor below, which keeps
// everything in memory and persists to localStorage only what holds no
// secret.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('graphiql-config').textContent);
  var token = '';

  // Subscriptions run over a websocket at the same address: ws:// beside
  // http://, wss:// beside https://. The bundled graphql-ws client speaks
  // graphql-transport-ws and sends the request's headers (the token's
  // Authorization included, see fetcher) as the connection_init payload,
  // where the server reads the Authorization member.
  var wsURL = new URL(config.endpoint, window.location.href);
  wsURL.protocol = wsURL.protocol === 'https:' ? 'wss:' : 'ws:';
  var baseFetcher = GraphiQL.createFetcher({ url: config.endpoint, subscriptionUrl: wsURL.href });

  function hasAuthorization(headers) {
    return Object.keys(headers).some(function (k) { return k.toLowerCase() === 'authorization'; });
  }

  // Every tab's requests carry the token, unless the tab's Headers editor
  // names an Authorization of its own (say, to try another user's token).
  function fetcher(params, opts) {
    var headers = Object.assign({}, opts && opts.headers);
    if (token && !hasAuthorization(headers)) {
      headers.Authorization = 'Bearer ' + token;
    }
    return baseFetcher(params, Object.assign({}, opts, { headers: headers }));
  }

  // GraphiQL's storage (keys "graphiql:queries", "graphiql:favorites",
  // "graphiql:tabState", "graphiql:theme"...). Reads and writes go to memory;
  // what survives a reload is a sanitized copy in localStorage: no headers
  // (a Headers editor may hold a token), no responses (a response may hold a
  // secret, such as a token a mutation created), a tab's `hash` (GraphiQL
  // makes it of query, variables and headers verbatim) recomputed without
  // headers, and nothing at all that contains the current token.
  var persistent = null;
  try {
    persistent = window.localStorage;
  } catch (e) {
    // Storage disabled: everything stays in memory.
  }
  var memory = new Map();
  if (persistent) {
    for (var i = 0; i < persistent.length; i++) {
      var key = persistent.key(i);
      if (key.indexOf('graphiql:') === 0) {
        memory.set(key, persistent.getItem(key));
      }
    }
  }

  function sanitize(key, value) {
    if (key === 'graphiql:headers') {
      return null;
    }
    var parsed;
    try {
      parsed = JSON.parse(value);
    } catch (e) {
      return value; // not JSON: a theme, a size
    }
    if (parsed === null || typeof parsed !== 'object') {
      return value;
    }
    var clean = JSON.stringify(parsed, function (k, v) {
      if (k === 'headers') {
        return '';
      }
      if (k === 'response') {
        return null; // GraphiQL wants the member, a string or null
      }
      if (k === 'hash' && this && typeof this.query === 'string') {
        return [this.query, this.variables || '', ''].join('|');
      }
      return v;
    });
    return clean;
  }

  function persist(key, value) {
    if (!persistent) {
      return;
    }
    var clean = sanitize(key, value);
    try {
      if (clean === null || (token && clean.indexOf(token) >= 0)) {
        persistent.removeItem(key);
      } else {
        persistent.setItem(key, clean);
      }
    } catch (e) {
      // Quota exceeded or storage refused: memory still has it.
    }
  }

  function setItem(key, value) {
    value = String(value);
    memory.set(key, value);
    persist(key, value);
  }
  function removeItem(key) {
    memory.delete(key);
    if (persistent) {
      persistent.removeItem(key);
    }
  }

  // The storage of one GraphiQL instance (see render): once a newer one has
  // started, the writes GraphiQL still had pending (it stores an edit up to
  // 500 ms later) would overwrite the newer state, and are dropped.
  var generation = 0;
  function storageFor(gen) {
    var live = function () { return gen === generation; };
    return {
      getItem: function (key) { return memory.has(key) ? memory.get(key) : null; },
      setItem: function (key, value) { if (live()) { setItem(key, value); } },
      removeItem: function (key) { if (live()) { removeItem(key); } },
      clear: function () {
        if (live()) {
          Array.from(memory.keys()).forEach(removeItem);
        }
      },
      get length() { return memory.size; },
    };
  }

  // The example tabs. Their variables hold placeholders until a token is
  // given; then fillIds replaces them, in the first tabs of a first visit as
  // in the tabs a previous visit left, and GraphiQL starts again on them
  // (it reads its tabs once, when it starts).
  var tabs = config.tabs.map(function (t) {
    return { query: t.query, variables: t.variables || '', headers: '' };
  });
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  function render() {
    root.render(React.createElement(GraphiQL, {
      key: 'graphiql-' + generation,
      fetcher: fetcher,
      storage: storageFor(generation),
      defaultTabs: tabs,
      defaultHeaders: '',
      isHeadersEditorEnabled: true,
      defaultEditorToolsVisibility: 'variables',
      shouldPersistHeaders: false,
    }));
  }

  function replacePlaceholders(text, ids) {
    if (typeof text !== 'string') {
      return text;
    }
    Object.keys(ids).forEach(function (placeholder) {
      // An id is inserted as the inside of a JSON string.
      text = text.split(placeholder).join(JSON.stringify(ids[placeholder]).slice(1, -1));
    });
    return text;
  }

  // Fills the placeholders of every tab and starts GraphiQL again on them.
  // GraphiQL stores an edit up to 500 ms after it: the filling waits for
  // those writes, then retires the running instance's storage.
  function fillIds(ids, done) {
    if (Object.keys(ids).length === 0) {
      done();
      return;
    }
    setTimeout(function () {
      generation++;
      tabs.forEach(function (t) { t.variables = replacePlaceholders(t.variables, ids); });
      var stored = memory.get('graphiql:tabState');
      if (stored) {
        try {
          var state = JSON.parse(stored);
          state.tabs.forEach(function (t) { t.variables = replacePlaceholders(t.variables, ids); });
          setItem('graphiql:tabState', JSON.stringify(state));
          // GraphiQL also keeps the active tab's query and variables apart
          // and, when it starts, opens a new tab unless they match a tab's.
          var active = state.tabs[state.activeTabIndex];
          if (active) {
            setItem('graphiql:query', active.query || '');
            setItem('graphiql:variables', active.variables || '');
          }
        } catch (e) {
          // Not GraphiQL's shape: it will start from the example tabs.
        }
      }
      render();
      setTimeout(done, 0);
    }, 600);
  }

  // The token field.
  var input = document.getElementById('docsapi-token');
  var useButton = document.getElementById('docsapi-token-use');
  var forgetButton = document.getElementById('docsapi-token-forget');
  var status = document.getElementById('docsapi-token-status');

  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? 'error' : '';
  }

  function graphql(query, withToken) {
    return fetch(config.endpoint, {
      method: 'POST',
      credentials: 'omit',
      cache: 'no-store',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: 'Bearer ' + withToken },
      body: JSON.stringify({ query: query }),
    }).then(function (res) {
      return res.json().then(function (body) { return { status: res.status, body: body }; });
    });
  }

  // The ids of the caller's first organization with a site (or first
  // organization) and of that site; a message when there are none.
  function pickIds(data) {
    var orgs = (data.organizations && data.organizations.items) || [];
    var org = orgs.find(function (o) { return o.sites && o.sites.items.length > 0; }) || orgs[0];
    var ids = {};
    var notes = [];
    if (!org) {
      notes.push('you belong to no organization: the example tabs keep their placeholders ' +
        config.placeholders.organization + ' and ' + config.placeholders.site +
        ' (create one with the createOrganization mutation, then give the token again)');
      return { ids: ids, notes: notes };
    }
    ids[config.placeholders.organization] = org.id;
    var site = org.sites && org.sites.items[0];
    if (site) {
      ids[config.placeholders.site] = site.id;
      notes.push('example tabs use organization “' + org.title + '” and site “' + site.title + '”');
    } else {
      notes.push('example tabs use organization “' + org.title + '”; it has no site, so ' +
        config.placeholders.site + ' stays a placeholder');
    }
    return { ids: ids, notes: notes };
  }

  function useToken() {
    var value = input.value.trim().replace(/^bearer\s+/i, '');
    if (!value) {
      say('Paste an API token first.', true);
      return;
    }
    say('Checking the token…');
    graphql(config.idsQuery, value).then(function (res) {
      var errors = (res.body && res.body.errors) || [];
      var refused = res.status === 401 || errors.some(function (e) {
        return e.extensions && e.extensions.code === 'UNAUTHENTICATED';
      });
      if (refused || !res.body || !res.body.data) {
        say('This token is refused' + (errors[0] ? ': ' + errors[0].message : ' (HTTP ' + res.status + ')'), true);
        return;
      }
      token = value;
      input.value = '';
      input.placeholder = 'a token is in use; paste another to replace it';
      forgetButton.hidden = false;
      var viewer = res.body.data.viewer || {};
      var picked = pickIds(res.body.data);
      say('Token accepted; filling the example tabs…');
      fillIds(picked.ids, function () {
        say('Signed in as ' + (viewer.displayName || viewer.id) + (viewer.email ? ' <' + viewer.email + '>' : '') +
          ' in every tab; ' + picked.notes.join('; ') + '.');
      });
    }, function (err) {
      say('Could not reach the server: ' + err.message, true);
    });
  }

  useButton.addEventListener('click', useToken);
  input.addEventListener('keydown', function (event) {
    if (event.key === 'Enter') {
      useToken();
    }
  });
  forgetButton.addEventListener('click', function () {
    token = '';
    input.placeholder = 'paste your API token here once, then Enter';
    forgetButton.hidden = true;
    say('Token forgotten: requests go without one.');
  });

  render();
})();
