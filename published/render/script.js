/*
 * Progressive enhancement for pages rendered by docsapi's published/render
 * package. Everything works without it: tabs are then shown one after the
 * other, each under its title. With it:
 *   - .gb-tabs become ARIA tabs (tablist/tab/tabpanel, arrow keys, Home, End),
 *     and a link to something inside a hidden tab opens that tab;
 *   - .gb-code blocks get a copy button.
 * Plain ES2017, no dependencies, no inline handlers, no eval: it runs under
 * a Content-Security-Policy of script-src 'self'. Running it twice, or on a
 * page without these blocks, does nothing more.
 */
(function () {
  "use strict";

  var counter = 0;

  function uniqueId(prefix) {
    var id;
    do {
      counter += 1;
      id = prefix + "-" + counter;
    } while (document.getElementById(id));
    return id;
  }

  function childrenWithClass(el, cls) {
    return Array.prototype.filter.call(el.children, function (c) {
      return c.classList.contains(cls);
    });
  }

  function enhanceTabs(group) {
    if (group.dataset.gbReady) {
      return;
    }
    var tabs = childrenWithClass(group, "gb-tab");
    if (tabs.length === 0) {
      return;
    }
    group.dataset.gbReady = "1";

    var list = document.createElement("div");
    list.className = "gb-tablist";
    list.setAttribute("role", "tablist");

    var buttons = tabs.map(function (tab, i) {
      var title = childrenWithClass(tab, "gb-tab-title")[0];
      var panel = childrenWithClass(tab, "gb-tab-panel")[0];
      var button = document.createElement("button");
      button.type = "button";
      button.className = "gb-tab-button";
      button.id = uniqueId("gb-tab");
      button.setAttribute("role", "tab");
      button.textContent = title ? title.textContent : "Tab " + (i + 1);
      if (panel) {
        if (!panel.id) {
          panel.id = uniqueId("gb-tabpanel");
        }
        panel.setAttribute("role", "tabpanel");
        panel.setAttribute("aria-labelledby", button.id);
        panel.tabIndex = 0;
        button.setAttribute("aria-controls", panel.id);
      }
      list.appendChild(button);
      return button;
    });

    function select(index, focus) {
      tabs.forEach(function (tab, j) {
        var on = j === index;
        buttons[j].setAttribute("aria-selected", on ? "true" : "false");
        buttons[j].tabIndex = on ? 0 : -1;
        tab.hidden = !on;
      });
      if (focus) {
        buttons[index].focus();
      }
    }

    list.addEventListener("click", function (event) {
      var i = buttons.indexOf(event.target.closest(".gb-tab-button"));
      if (i >= 0) {
        select(i, false);
      }
    });
    list.addEventListener("keydown", function (event) {
      var i = buttons.indexOf(document.activeElement);
      if (i < 0) {
        return;
      }
      var next = -1;
      switch (event.key) {
        case "ArrowRight":
          next = (i + 1) % buttons.length;
          break;
        case "ArrowLeft":
          next = (i - 1 + buttons.length) % buttons.length;
          break;
        case "Home":
          next = 0;
          break;
        case "End":
          next = buttons.length - 1;
          break;
        default:
          return;
      }
      event.preventDefault();
      select(next, true);
    });

    group.insertBefore(list, group.firstChild);
    group.classList.add("gb-tabs-js");
    select(0, false);
  }

  function enhanceCode(block) {
    if (block.dataset.gbReady) {
      return;
    }
    block.dataset.gbReady = "1";
    var pre = block.querySelector("pre");
    if (!pre || !navigator.clipboard || !window.isSecureContext) {
      return;
    }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "gb-copy";
    button.textContent = "Copy";
    var timer = 0;
    function show(text) {
      button.textContent = text;
      clearTimeout(timer);
      timer = setTimeout(function () {
        button.textContent = "Copy";
      }, 2000);
    }
    button.addEventListener("click", function () {
      var code = pre.querySelector("code") || pre;
      navigator.clipboard.writeText(code.textContent).then(
        function () {
          show("Copied");
        },
        function () {
          show("Copy failed");
        }
      );
    });
    block.appendChild(button);
  }

  // Opens the tabs that hide the target of the page's address, so that a
  // link (from the outline, say) to a heading inside a tab lands on it.
  function revealTarget() {
    var id = "";
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (e) {
      return;
    }
    var target = id ? document.getElementById(id) : null;
    if (!target) {
      return;
    }
    var revealed = false;
    for (var el = target; el && el !== document.body; el = el.parentElement) {
      if (el.classList.contains("gb-tab") && el.hidden && el.parentElement) {
        // Through the DOM rather than a closure: the tabs may have been
        // enhanced by another run of this script.
        var group = el.parentElement;
        var list = childrenWithClass(group, "gb-tablist")[0];
        var index = childrenWithClass(group, "gb-tab").indexOf(el);
        if (list && index >= 0 && list.children[index]) {
          list.children[index].click();
          revealed = true;
        }
      }
    }
    if (revealed) {
      target.scrollIntoView();
    }
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll(".content .gb-tabs"), enhanceTabs);
    Array.prototype.forEach.call(document.querySelectorAll(".content .gb-code"), enhanceCode);
    revealTarget();
    var root = document.documentElement;
    if (!root.dataset.gbRenderJs) {
      root.dataset.gbRenderJs = "1";
      window.addEventListener("hashchange", revealTarget);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
