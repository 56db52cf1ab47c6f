// kfa web view: the one script. Every page works without it; where it
// runs, a vote keeps the reader's place. A vote is a form that posts and
// comes back to the page; without this script the browser comes back to
// the voted reply's anchor, with it to the same scroll position.
(function () {
  "use strict";
  var key = "kfa-scroll";
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.classList || !form.classList.contains("vote")) {
      return;
    }
    var keep = form.querySelector("input[name=keep]");
    if (keep) {
      keep.value = "1";
    }
    try {
      sessionStorage.setItem(key, JSON.stringify({ path: location.pathname, y: window.scrollY }));
    } catch (err) {
      // No storage (a private window): the anchor still brings the reader back.
    }
  });
  var saved = null;
  try {
    saved = JSON.parse(sessionStorage.getItem(key) || "null");
    sessionStorage.removeItem(key);
  } catch (err) {
    saved = null;
  }
  if (saved && saved.path === location.pathname && typeof saved.y === "number") {
    window.scrollTo(0, saved.y);
    window.addEventListener("load", function () { window.scrollTo(0, saved.y); });
  }
})();
