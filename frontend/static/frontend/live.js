/* Spreadwatch: keep the Live page current without reloading it (progressive enhancement).
   Polls the element's data-live-url every data-live-refresh ms and rewrites the numbers and the two tables;
   the server renders the same numbers, so without JavaScript the page is right as of its load. Text goes in
   through textContent only (ids, screen names and tweet texts are data, never markup). */
(function () {
  "use strict";
  var box = document.querySelector("[data-live-url]");
  if (!box || !window.fetch) return;
  var url = box.getAttribute("data-live-url");
  var every = Number(box.getAttribute("data-live-refresh")) || 5000;
  var failures = 0;
  var fmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 0 });
  var fmt1 = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 });

  function influence(x) {
    if (x === null || x === undefined) return "–";
    var a = Math.abs(x);
    var digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
    return new Intl.NumberFormat("en-US", { maximumFractionDigits: digits }).format(x);
  }

  function set(name, text) {
    var el = box.querySelector('[data-live="' + name + '"]');
    if (el) el.textContent = text;
  }

  function attention(name, on) {
    var el = box.querySelector('[data-live-card="' + name + '"]');
    if (el) el.classList.toggle("attention", !!on);
  }

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    if (text instanceof Node) td.appendChild(text); else td.textContent = text;
    tr.appendChild(td);
    return td;
  }

  function link(href, text) {
    if (!href) return document.createTextNode(text);
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function rows(name, items, empty, build) {
    var body = box.querySelector('[data-live-rows="' + name + '"]');
    if (!body) return;
    var fresh = document.createDocumentFragment();
    if (!items.length && empty) {
      var tr = document.createElement("tr");
      tr.className = "empty";
      cell(tr, empty).colSpan = 3;
      fresh.appendChild(tr);
    }
    items.forEach(function (it) {
      var tr = document.createElement("tr");
      build(tr, it);
      fresh.appendChild(tr);
    });
    body.replaceChildren(fresh);
  }

  // who applies the records (the web process, N consumers, none: records wait), as segments of text and code
  function note(applier) {
    var p = box.querySelector("[data-live-note]");
    var key = JSON.stringify(applier.note);
    if (!p || p.getAttribute("data-live-note-key") === key) return;
    p.setAttribute("data-live-note-key", key);
    p.setAttribute("data-live-note", applier.mode);
    var fresh = document.createDocumentFragment();
    applier.note.forEach(function (seg) {
      if (seg.code) {
        var code = document.createElement("code");
        code.textContent = seg.text;
        fresh.appendChild(code);
      } else {
        fresh.appendChild(document.createTextNode(seg.text));
      }
    });
    p.replaceChildren(fresh);
  }

  function show(d) {
    var s = d.state;
    set("rate_1m", fmt1.format(s.rate_1m));
    set("rate_10m", fmt1.format(s.rate_10m));
    set("lag_s", fmt1.format(s.lag_s) + " s");
    set("backlog", fmt.format(s.backlog));
    set("waiting", fmt.format(s.waiting));
    set("dead", fmt.format(s.dead));
    set("consumers", s.applier.value);
    set("consumers_label", s.applier.label);
    attention("consumers", s.applier.mode === "none");
    note(s.applier);
    attention("lag_s", s.lag_s > 10);
    attention("dead", s.dead > 0);
    rows("growing", d.growing, "No retweets arrived in the last 10 minutes.", function (tr, c) {
      var td = cell(tr, link(c.url, c.tweet_id), "text");
      if (c.author) {
        var who = document.createElement("span");
        who.className = "muted";
        who.textContent = " @" + c.author;
        td.appendChild(who);
      }
      if (c.text) {
        td.appendChild(document.createElement("br"));
        var small = document.createElement("small");
        small.textContent = c.text;
        td.appendChild(small);
      }
      cell(tr, fmt.format(c.new), "num");
      cell(tr, c.total === null ? "–" : fmt.format(c.total), "num");
    });
    rows("rising", d.rising, "No spreaders in the cascades of the last hour yet.", function (tr, a) {
      cell(tr, link(a.url, a.screen_name ? "@" + a.screen_name : a.twitter_id));
      cell(tr, influence(a.influence), "num");
      cell(tr, fmt.format(a.cascades), "num");
    });
    var dead = box.querySelector('[data-live-section="dead"]');
    if (dead) dead.hidden = !d.dead_recent.length;
    rows("dead", d.dead_recent, "", function (tr, e) {
      cell(tr, String(e.pk));
      cell(tr, e.kind);
      cell(tr, e.source, "text");
      cell(tr, e.error, "text");
    });
    var at = document.querySelector("[data-live-at]");
    if (at) at.textContent = "as of " + d.at.slice(0, 19).replace("T", " ") + " UTC";
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
        window.setTimeout(tick, every);
      })
      .catch(function () {
        failures += 1;
        var at = document.querySelector("[data-live-at]");
        if (at) at.textContent = "lost contact with the server; retrying";
        window.setTimeout(tick, Math.min(60000, every * (1 + failures)));
      });
  }

  window.setTimeout(tick, every);
})();
