/* A filter box for long drop-downs (select[data-searchable]): typing a screen name or the start of an id hides
   the options that do not match, and picks the option when only one is left. Without JavaScript the plain
   drop-down works as before. */
(function () {
  "use strict";
  document.querySelectorAll("select[data-searchable]").forEach(function (select) {
    var box = document.createElement("input");
    box.type = "search";
    box.className = "picker-filter";
    box.placeholder = "Filter: screen name or id";
    box.setAttribute("aria-label", "Filter the " + (select.dataset.searchable || "options") + " by screen name or id");
    box.setAttribute("aria-controls", select.id);
    var status = document.createElement("small");
    status.className = "muted picker-status";
    status.setAttribute("aria-live", "polite");
    select.parentNode.insertBefore(box, select);
    select.parentNode.insertBefore(status, select.nextSibling);
    function norm(s) { return s.toLowerCase().replace(/^@/, "").trim(); }
    box.addEventListener("input", function () {
      var q = norm(box.value);
      var shown = [];
      Array.prototype.forEach.call(select.options, function (opt) {
        // the empty choice ("Any publisher") always stays
        var text = norm(opt.textContent);
        var match = !opt.value || !q || text.indexOf(q) === 0 || opt.value.indexOf(q) === 0 ||
          text.indexOf("(" + q) >= 0;
        opt.hidden = !match;
        if (match && opt.value) shown.push(opt);
      });
      if (q && shown.length === 1) select.value = shown[0].value;
      status.textContent = q ? shown.length + " match" + (shown.length === 1 ? "" : "es") : "";
    });
  });
})();
