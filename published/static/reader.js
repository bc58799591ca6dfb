// The reader's enhancements: pages work without them. The light or dark
// choice of a reader is kept in their browser; the page tree folds away on
// small screens and the current page is scrolled into view.
(function () {
  "use strict";
  var root = document.documentElement;
  var key = "docsapi-theme";
  var saved = null;
  try { saved = localStorage.getItem(key); } catch (e) { /* storage may be off */ }
  if (saved === "light" || saved === "dark") { root.setAttribute("data-theme", saved); }

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
    var toc = document.querySelector(".sidebar .toc");
    if (toc && window.matchMedia && window.matchMedia("(max-width: 48rem)").matches) {
      toc.open = false;
    }
    var here = document.querySelector('.sidebar a[aria-current="page"]');
    if (here && here.scrollIntoView && !(toc && !toc.open)) {
      here.scrollIntoView({ block: "nearest" });
    }
  });
})();
