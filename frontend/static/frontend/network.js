/* The Network pages: the log-log charts of a run (vendored Chart.js, data island "network-charts") and the
   force-directed drawing of a subgraph (vendored cytoscape, 'cose' layout, data island "network-graph"):
   nodes {id, tid, name, centre, ...numbers}, edges [source index, target index, weight?], hidden {nodes, edges}.
   The numbers are in the tables of the same page, so the page reads the same without this script. */
(function () {
  "use strict";

  function fmt(x) {
    if (x === null || x === undefined) return "–";
    var a = Math.abs(x);
    if (a >= 100) return Math.round(x).toLocaleString("en");
    if (a >= 10) return x.toFixed(1);
    if (a >= 1) return x.toFixed(2);
    if (a === 0) return "0";
    return x.toPrecision(2);
  }

  // --- charts ------------------------------------------------------------------------------------------------
  var island = document.getElementById("network-charts");
  if (island && window.Chart) {
    var charts = JSON.parse(island.textContent);
    var css = getComputedStyle(document.documentElement);
    var text = css.getPropertyValue("--pico-muted-color").trim() || "#646b79";
    var grid = css.getPropertyValue("--pico-muted-border-color").trim() || "#e7eaf0";
    Chart.defaults.color = text;
    Chart.defaults.font.family = window.Spreadwatch.chartFont();
    var still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    var logAxis = function (title, values) {
      // a decade of room around the points, so a point never sits on the frame
      var lo = Math.min.apply(null, values.concat([1])), hi = Math.max.apply(null, values.concat([1]));
      return { type: "logarithmic", title: { display: true, text: title }, grid: { color: grid },
        min: Math.pow(10, Math.floor(Math.log10(lo) - 0.3)), max: Math.pow(10, Math.ceil(Math.log10(hi) + 0.3)),
        ticks: { callback: function (v) { return /^(1|10*)$/.test(String(v)) ? Number(v).toLocaleString("en") : ""; } } };
    };
    var scatter = function (canvas, datasets, xTitle, yTitle, unit) {
      if (!canvas) return null;
      var figure = canvas.closest("figure");
      var title = figure.getAttribute("data-export-title") || "";
      var build = function (exporting) { return {
        type: "scatter",
        data: { datasets: datasets },
        options: {
          responsive: true, maintainAspectRatio: false, animation: still ? false : { duration: 300 },
          scales: {
            x: logAxis(xTitle, [].concat.apply([], datasets.map(function (d) { return d.data.map(function (p) { return p.x; }); }))),
            y: logAxis(yTitle, [].concat.apply([], datasets.map(function (d) { return d.data.map(function (p) { return p.y; }); }))),
          },
          plugins: {
            legend: { position: "bottom", labels: { boxWidth: 12, boxHeight: 12 } },
            title: { display: !!exporting, text: title, font: { size: 14, weight: "bold" } },
            tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + ": " + unit(ctx.raw); } } },
          },
        },
      }; };
      var chart = new Chart(canvas, build(false));
      if (window.Spreadwatch.chartDownloads) {
        window.Spreadwatch.chartDownloads({ into: figure, name: figure.getAttribute("data-export-name"),
          label: "the " + canvas.getAttribute("aria-label").split(",")[0].toLowerCase() + " chart", title: title,
          canvas: canvas, build: build, minWidth: 720, minHeight: 420 });
      }
      return chart;
    };
    var points = function (pairs) {
      return pairs.filter(function (p) { return p[0] > 0 && p[1] > 0; }).map(function (p) { return { x: p[0], y: p[1] }; });
    };
    var c1 = scatter(document.getElementById("components-chart"), [
      { label: "weak components", data: points(charts.components), backgroundColor: "#4e79a7", pointRadius: 4 },
      { label: "strongly connected", data: points(charts.strong), backgroundColor: "#f28e2b", pointRadius: 3, pointStyle: "rect" },
    ], "Component size (accounts)", "Components", function (r) {
      return r.y.toLocaleString("en") + " of size " + r.x.toLocaleString("en");
    });
    // log2 bins [lo, hi, accounts]: plotted as accounts per degree value at the bin's start
    var bins = function (rows) {
      return rows.filter(function (b) { return b[0] > 0 && b[2] > 0; }).map(function (b) {
        return { x: b[0], y: b[2] / (b[1] - b[0] + 1), n: b[2], hi: b[1] };
      });
    };
    var c2 = scatter(document.getElementById("degrees-chart"), [
      { label: "in-degree", data: bins(charts["in"]), backgroundColor: "#59a14f", pointRadius: 4 },
      { label: "out-degree", data: bins(charts.out), backgroundColor: "#b07aa1", pointRadius: 3, pointStyle: "rect" },
    ], "Degree", "Accounts per degree", function (r) {
      return r.n.toLocaleString("en") + " accounts of degree " + r.x + (r.hi > r.x ? "–" + r.hi : "");
    });
    window.spreadwatchNetworkCharts = [c1, c2];
  }

  // --- the drawing -------------------------------------------------------------------------------------------
  var el = document.getElementById("network-graph");
  var box = document.getElementById("net-cy");
  if (!el || !box || !window.cytoscape) return;
  var data = JSON.parse(el.textContent);
  var mode = (box.closest("[data-colour]") || box).getAttribute("data-colour") || "conversation";
  var palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
    "#bab0ac"];
  var hops = ["#c0392b", "#e67e22", "#2e86c1", "#95a5a6"];
  var sizeKey = mode === "distance" ? "degree" : "betweenness";
  var maxCore = 1, maxSize = 0;
  data.nodes.forEach(function (n) {
    n.degree = (n.in_degree || 0) + (n.out_degree || 0) + (n.partners || 0);
    maxCore = Math.max(maxCore, n.core || 0);
    maxSize = Math.max(maxSize, n[sizeKey] || 0);
  });
  function colourOf(n) {
    if (mode === "distance") return hops[Math.min(n.distance || 0, hops.length - 1)];
    if (mode === "core") {
      var f = (n.core || 0) / maxCore;  // light (outer shells) to dark (the deepest core)
      return "rgb(" + [200 - 170 * f, 215 - 150 * f, 235 - 95 * f].map(Math.round).join(",") + ")";
    }
    return palette[(n.conversation || 0) % palette.length];
  }
  var elements = data.nodes.map(function (n) {
    return { data: { id: "n" + n.id, tid: n.tid, label: n.name ? "@" + n.name : n.tid, node: n, centre: !!n.centre,
      colour: colourOf(n),
      size: 12 + 34 * Math.sqrt(maxSize > 0 ? (n[sizeKey] || 0) / maxSize : 0) } };
  });
  data.edges.forEach(function (e, i) {
    elements.push({ data: { id: "e" + i, source: "n" + e[0], target: "n" + e[1], w: e.length > 2 ? e[2] : 1 } });
  });
  var cy = window.cytoscape({
    container: box,
    elements: elements,
    style: [
      { selector: "node", style: { "background-color": "data(colour)", width: "data(size)", height: "data(size)",
        label: "data(label)", "font-size": 9, "text-valign": "bottom", "text-margin-y": 3, color: "#555",
        "min-zoomed-font-size": 7 } },
      { selector: "node[?centre]", style: { "border-width": 3, "border-color": "#222" } },
      // a conversation goes both ways: its edges carry no arrow
      { selector: "edge", style: { width: "mapData(w, 1, 10, 1, 4)", "line-color": "#b8c2cc", "target-arrow-color": "#b8c2cc",
        "target-arrow-shape": mode === "conversation" ? "none" : "triangle", "arrow-scale": 0.6, "curve-style": "bezier",
        opacity: 0.8 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#222" } },
      { selector: ".faded", style: { opacity: 0.15 } },
    ],
    layout: { name: "cose", animate: false, randomize: false, nodeRepulsion: function () { return 6000; },
      idealEdgeLength: function () { return 50; }, numIter: 1000, fit: true, padding: 20 },
  });
  if (cy.zoom() > 1.5) { cy.zoom(1.5); cy.center(); }  // a few nodes fitted to the box would be drawn huge
  var tip = document.getElementById("net-tip");
  var names = { betweenness: "betweenness", core: "core", in_degree: "in-degree", out_degree: "out-degree",
    clustering: "clustering", distance: "hops", partners: "conversation partners", conversation: "conversation" };
  function show(node) {
    var n = node.data("node");
    tip.innerHTML = "";
    var title = document.createElement("strong");
    title.textContent = node.data("label") + (n.centre ? " (centre)" : "");
    tip.appendChild(title);
    Object.keys(names).forEach(function (k) {
      if (n[k] === undefined) return;
      var line = document.createElement("div");
      line.textContent = names[k] + " " + fmt(n[k]);
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
    // highlight the account and its direct neighbours
    var n = e.target;
    cy.elements().addClass("faded");
    n.closedNeighborhood().removeClass("faded");
    show(n);
  });
  cy.on("tap", function (e) { if (e.target === cy) { cy.elements().removeClass("faded"); tip.hidden = true; } });
  cy.on("dbltap", "node", function (e) {
    var m = window.location.pathname.match(/^(.*\/w\/[^/]+\/)/);
    if (m) window.location.assign(m[1] + "accounts/" + e.target.data("tid") + "/");
  });
  // keyboard: arrows pan, +/- zoom, 0 fits (as in the cascade explorer)
  box.addEventListener("keydown", function (ev) {
    var step = 40, z = cy.zoom(), mid = { x: cy.width() / 2, y: cy.height() / 2 };
    var moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (moves[ev.key]) { cy.panBy({ x: moves[ev.key][0], y: moves[ev.key][1] }); ev.preventDefault(); }
    else if (ev.key === "+" || ev.key === "=") { cy.zoom({ level: z * 1.2, renderedPosition: mid }); }
    else if (ev.key === "-") { cy.zoom({ level: z / 1.2, renderedPosition: mid }); }
    else if (ev.key === "0") { cy.fit(undefined, 20); }
  });
  window.spreadwatchNetwork = cy;  // for the browser tests
})();
