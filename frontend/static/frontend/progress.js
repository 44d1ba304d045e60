/* Spreadwatch: follow a running import on the collection page (progressive enhancement).
   Polls the element's data-progress-url every 1.5 s, updates the <progress> bar (one bar over every phase:
   reading, storing, computing, storing results, aggregates), the phase, its step, the stage and the status
   badge, and reloads the page once the collection is no longer active (import and compute finished). The bar
   only moves forward. Without JavaScript the page refreshes itself (<noscript> meta refresh). */
(function () {
  "use strict";
  var box = document.querySelector("[data-progress-url]");
  if (!box || !window.fetch) return;
  var url = box.getAttribute("data-progress-url");
  var bar = box.querySelector("[data-progress-bar]");
  var stage = box.querySelector("[data-progress-stage]");
  var phase = box.querySelector("[data-progress-phase]");
  var step = box.querySelector("[data-progress-step]");
  var shown = bar ? Number(bar.value) || 0 : 0;
  var pct = box.querySelector("[data-progress-percent]");
  var badge = document.querySelector("[data-status-badge] .badge");
  var fact = document.querySelector("[data-status-fact]");
  var cancel = document.querySelector("[data-cancel-import]");
  var INTERVAL = 1500;
  var failures = 0;

  function capfirst(s) { return s ? s.charAt(0).toUpperCase() + s.slice(1) : s; }

  function show(d) {
    var p = Math.max(0, Math.min(100, Number(d.percent) || 0));
    // forward only: with several workers a later poll may see an earlier batch's phase
    if (d.active && p < shown) p = shown;
    shown = p;
    if (bar) { bar.value = p; bar.textContent = Math.round(p) + " %"; }
    if (phase && d.phase_label) phase.textContent = d.phase_label;
    if (step && d.step && d.steps) step.textContent = "(step " + d.step + " of " + d.steps + ")";
    if (pct) pct.textContent = Math.round(p) + " %";
    if (stage && d.stage) stage.textContent = capfirst(String(d.stage));
    if (badge && d.status) {
      badge.className = "badge s-" + d.status;
      badge.textContent = d.status_display || d.status;
    }
    if (fact && d.status) fact.textContent = d.status_display || d.status;
    // an import can be cancelled; its compute, once the import stored its data, is cancelled from the run
    if (cancel && d.status && d.status !== "queued" && d.status !== "ingesting") cancel.hidden = true;
  }

  function tick() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      })
      .then(function (d) {
        failures = 0;
        show(d);
        if (!d.active) {
          window.location.reload();
          return;
        }
        window.setTimeout(tick, INTERVAL);
      })
      .catch(function () {
        failures += 1;
        if (failures >= 20) {
          if (stage) stage.textContent = "Lost contact with the server: reload the page to see the state.";
          return;
        }
        window.setTimeout(tick, Math.min(30000, INTERVAL * Math.pow(2, Math.min(failures, 5))));
      });
  }

  window.setTimeout(tick, INTERVAL);
})();
