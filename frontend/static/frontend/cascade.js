/* The cascade explorer: draws the spreading graph (cytoscape + dagre, vendored) and the retweet timeline.
   Data comes from the page (json_script "cascade-data"): nodes {id, tid, name, inf, n, role, delay},
   edges [src, dst] (src could have seen the tweet from dst), hidden counts, timeline {n, points: [[delay s, retweets so far], ...]}. */
(function () {
  "use strict";
  var el = document.getElementById("cascade-data");
  if (!el || !window.cytoscape) return;
  var data = JSON.parse(el.textContent);
  var colours = { publisher: "#c0392b", spreader: "#e67e22", leaf: "#2e86c1", orphan: "#95a5a6" };
  var labelColours = { "false": "#c62828", "true": "#2e7d32", unverified: "#b26a00", "non-rumor": "#1769aa",
    unknown: "#6c757d" };
  var maxDelay = data.nodes.reduce(function (m, n) { return Math.max(m, n.delay || 0); }, 1);
  function timeColour(delay) {
    // early (dark blue) to late (light yellow): when each account joined the cascade
    var f = Math.sqrt(Math.max(delay || 0, 0) / maxDelay);
    var a = [33, 49, 140], b = [253, 231, 37];
    return "rgb(" + a.map(function (x, i) { return Math.round(x + (b[i] - x) * f); }).join(",") + ")";
  }
  function colourOf(n, mode) {
    if (mode === "time") return n.role === "publisher" ? "#c0392b" : timeColour(n.delay);
    if (mode === "label") return labelColours[data.label] || "#777";
    return colours[n.role] || "#777";
  }
  var maxInf = data.nodes.reduce(function (m, n) { return Math.max(m, n.inf); }, 1);
  var fmt = window.Spreadwatch.readable;  // numbers.js: the pages' one number format
  function dur(s) {
    if (s === null || s === undefined) return "–";
    if (s < 120) return Math.round(s) + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    if (s < 172800) return (s / 3600).toFixed(1) + " h";
    return (s / 86400).toFixed(1) + " days";
  }
  var elements = data.nodes.map(function (n) {
    return { data: { id: String(n.id), label: n.name ? "@" + n.name : n.tid, tid: n.tid, inf: n.inf, n: n.n,
      role: n.role, delay: n.delay, size: 12 + 48 * Math.sqrt(n.inf / maxInf), colour: colours[n.role] || "#777" } };
  });
  data.edges.forEach(function (e, i) {
    elements.push({ data: { id: "e" + i, source: String(e[0]), target: String(e[1]) } });
  });
  var cy = window.cytoscape({
    container: document.getElementById("cy"),
    elements: elements,
    style: [
      { selector: "node", style: { "background-color": "data(colour)", width: "data(size)", height: "data(size)",
        label: "data(label)", "font-size": 9, "text-valign": "bottom", "text-margin-y": 3, color: "#555",
        "min-zoomed-font-size": 7 } },
      { selector: "edge", style: { width: 1, "line-color": "#b8c2cc", "target-arrow-color": "#b8c2cc",
        "target-arrow-shape": "triangle", "arrow-scale": 0.7, "curve-style": "bezier", opacity: 0.8 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#222" } },
      { selector: ".faded", style: { opacity: 0.15 } }
    ],
    // top to bottom into the publisher: cascades are shallow and wide, so ranks laid out as rows fit a screen
    layout: { name: "dagre", rankDir: "TB", nodeSep: 4, rankSep: 70, edgeSep: 2, animate: false }
  });
  var tip = document.getElementById("cy-tip");
  function show(node) {
    var d = node.data();
    tip.innerHTML = "";
    var lines = [d.label, "influence " + fmt(d.inf) + " " + data.unit, data.unit === "retweeters" ? "followers unknown" : "own followers " + window.Spreadwatch.count(d.n),
      "role " + d.role, d.role === "publisher" ? "published the tweet" : "retweeted after " + dur(d.delay)];
    lines.forEach(function (t, i) {
      var line = document.createElement(i === 0 ? "strong" : "div");
      line.textContent = t;
      tip.appendChild(line);
    });
    var p = node.renderedPosition();
    tip.style.left = (p.x + 14) + "px";
    tip.style.top = (p.y + 8) + "px";
    tip.hidden = false;
  }
  cy.on("mouseover", "node", function (e) { show(e.target); });
  cy.on("mouseout", "node", function () { tip.hidden = true; });
  cy.on("tap", "node", function (e) {
    // highlight the account's paths: what flowed into it and where it went
    var n = e.target;
    cy.elements().addClass("faded");
    n.predecessors().add(n.successors()).add(n).removeClass("faded");
    show(n);
  });
  cy.on("tap", function (e) { if (e.target === cy) { cy.elements().removeClass("faded"); tip.hidden = true; } });
  cy.on("dbltap", "node", function (e) {
    var path = window.location.pathname.replace(/tweets\/\d+\/explore\/?$/, "accounts/" + e.target.data("tid") + "/");
    window.location.assign(path);
  });
  // keyboard: arrows pan, +/- zoom, 0 fits
  document.getElementById("cy").addEventListener("keydown", function (ev) {
    var step = 40, z = cy.zoom();
    var moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (moves[ev.key]) { cy.panBy({ x: moves[ev.key][0], y: moves[ev.key][1] }); ev.preventDefault(); }
    else if (ev.key === "+" || ev.key === "=") { cy.zoom({ level: z * 1.2, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }); }
    else if (ev.key === "-") { cy.zoom({ level: z / 1.2, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }); }
    else if (ev.key === "0") { cy.fit(undefined, 20); }
  });
  window.spreadwatchCascade = cy;  // for the browser tests
  var modeSelect = document.getElementById("colour-mode");
  if (modeSelect) {
    modeSelect.addEventListener("change", function () {
      var mode = modeSelect.value;
      cy.nodes().forEach(function (node) {
        var n = data.nodes.find(function (x) { return String(x.id) === node.id(); });
        node.data("colour", colourOf(n, mode));
      });
      document.querySelectorAll("[data-legend]").forEach(function (el) { el.hidden = el.dataset.legend !== mode; });
    });
  }

  // timeline: cumulative retweets against the delay, from [delay, retweets so far] points (sampled server-side)
  var svg = document.getElementById("timeline");
  var ts = data.timeline.points, total = data.timeline.n;
  if (svg && ts.length) {
    var W = svg.clientWidth || 800, H = svg.clientHeight || 160, pad = 30;
    var tmax = Math.max(ts[ts.length - 1][0], 1);
    var ns = "http://www.w3.org/2000/svg";
    var d = "M" + pad + "," + (H - pad);
    ts.forEach(function (p) {
      var x = pad + (W - 2 * pad) * (p[0] / tmax), y = (H - pad) - (H - 2 * pad) * (p[1] / total);
      d += " L" + x.toFixed(1) + "," + y.toFixed(1);
    });
    var path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
    var axis = document.createElementNS(ns, "line");
    axis.setAttribute("x1", pad); axis.setAttribute("x2", W - pad);
    axis.setAttribute("y1", H - pad); axis.setAttribute("y2", H - pad);
    svg.appendChild(axis);
    [["0", pad, "start"], [dur(tmax), W - pad, "end"]].forEach(function (l) {
      var t = document.createElementNS(ns, "text");
      t.setAttribute("x", l[1]); t.setAttribute("y", H - 10); t.setAttribute("text-anchor", l[2]);
      t.textContent = l[0];
      svg.appendChild(t);
    });
    var top = document.createElementNS(ns, "text");
    top.setAttribute("x", pad); top.setAttribute("y", pad - 10);
    top.textContent = window.Spreadwatch.count(total) + " retweets";
    svg.appendChild(top);
  }
})();
