// The reader's enhancements: pages work without them. The light or dark
// choice of a reader is kept in their browser; the page tree folds away on
// small screens and the current page is scrolled into view in the sidebar.
(function () {
  "use strict";
  var root = document.documentElement;
  var key = "docsapi-theme";
  var saved = null;
  try { saved = localStorage.getItem(key); } catch (e) { /* storage may be off */ }
  // The choice is the reader's where the site lets readers choose (the
  // page has the toggle: this script is deferred, the page is parsed).
  if ((saved === "light" || saved === "dark") && document.querySelector(".theme-toggle")) {
    root.setAttribute("data-theme", saved);
  }

  function current() {
    var t = root.getAttribute("data-theme");
    if (t === "light" || t === "dark") { return t; }
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.querySelector(".theme-toggle");
    if (toggle) {
      var show = function () {
        var dark = current() === "dark";
        toggle.setAttribute("aria-pressed", dark ? "true" : "false");
      };
      toggle.hidden = false;
      show();
      toggle.addEventListener("click", function () {
        var next = current() === "dark" ? "light" : "dark";
        root.setAttribute("data-theme", next);
        try { localStorage.setItem(key, next); } catch (e) { /* not kept */ }
        show();
      });
    }
    // The page tree: folded on a phone (it comes above the page there),
    // open on a wider screen, where its summary is not shown; it follows
    // the screen when it is turned or resized.
    var toc = document.querySelector(".sidebar .toc");
    var narrow = window.matchMedia ? window.matchMedia("(max-width: 48rem)") : null;
    if (toc && narrow) {
      toc.open = !narrow.matches;
      var follow = function (e) { toc.open = !e.matches; };
      if (narrow.addEventListener) {
        narrow.addEventListener("change", follow);
      } else if (narrow.addListener) {
        narrow.addListener(follow);
      }
    }
    // The current page, in view in the sidebar: the sidebar scrolls, not
    // the page.
    var sidebar = document.querySelector(".sidebar");
    var here = document.querySelector('.sidebar a[aria-current="page"]');
    if (sidebar && here && toc && toc.open && sidebar.scrollHeight > sidebar.clientHeight) {
      var top = here.getBoundingClientRect().top - sidebar.getBoundingClientRect().top + sidebar.scrollTop;
      if (top + here.offsetHeight > sidebar.scrollTop + sidebar.clientHeight) {
        sidebar.scrollTop = top - sidebar.clientHeight / 3;
      }
    }
  });
})();
