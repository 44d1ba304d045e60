/* The Network pages: the log-log charts of a run (vendored Chart.js, data island "network-charts") and the
   drawing of a subgraph with WebGL (vendored sigma.js on graphology, as the cascade explorer; data island
   "network-graph"): nodes {id, tid, name, centre, x, y, ...numbers}, edges [source index, target index, weight?],
   hidden {nodes, edges}. The positions come from the server (compute/drawing.py's force_layout, cached per
   graph): this script lays nothing out, it draws, so the first frame of 2,000 accounts comes within a second
   (benchmarks/drawing.md). Only the accounts that matter carry a label: the centre, the top LABELLED by the
   drawing's size measure (betweenness, or degree in a neighbourhood) spread over the drawing, and the hovered
   or tapped account with its neighbours. The numbers are in the tables of the same page, so the page reads the same without it. */
(function () {
  "use strict";

  function fmt(x) {
    if (x === null || x === undefined) return "–";
    if (Number.isInteger(x)) return x.toLocaleString("en");  // counts, hops, core numbers: no decimals
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
  if (!el || !box || !window.Sigma || !window.graphology) return;
  var data = JSON.parse(el.textContent);
  var mode = (box.closest("[data-colour]") || box).getAttribute("data-colour") || "conversation";
  // Tableau 10: a conversation (a community of accounts talking both ways) per colour, repeating after ten
  var palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
    "#bab0ac"];
  var hops = ["#c0392b", "#e67e22", "#2e86c1", "#95a5a6"];
  // a neighbourhood and a coordination graph size their nodes by edges drawn; the rest by betweenness
  var sizeKey = mode === "distance" || mode === "cluster" ? "degree" : "betweenness";
  // labels at every zoom: more than a dozen on one screen overlap again, more than six on a phone's
  var LABELLED = box.clientWidth < 600 ? 6 : 12;
  var many = data.edges.length > 3000;
  var maxCore = 1, maxSize = 0;
  // degree inside the drawing: what a neighbourhood's nodes are sized and ranked by
  var degree = data.nodes.map(function () { return 0; });
  data.edges.forEach(function (e) { degree[e[0]] += 1; degree[e[1]] += 1; });
  data.nodes.forEach(function (n, i) {
    n.degree = degree[i];
    maxCore = Math.max(maxCore, n.core || 0);
    maxSize = Math.max(maxSize, n[sizeKey] || 0);
  });
  function colourOf(n) {
    if (mode === "community") return palette[Math.max((n.community || 1) - 1, 0) % palette.length];
    if (mode === "cluster") return palette[Math.max((n.cluster || 1) - 1, 0) % palette.length];
    if (mode === "distance") return hops[Math.min(n.distance || 0, hops.length - 1)];
    if (mode === "core") {
      var f = (n.core || 0) / maxCore;  // light (outer shells) to dark (the deepest core)
      return "rgb(" + [200 - 170 * f, 215 - 150 * f, 235 - 95 * f].map(Math.round).join(",") + ")";
    }
    return palette[(n.conversation || 0) % palette.length];
  }
  function labelOf(n) { return n.name ? "@" + n.name : n.tid; }
  // who is labelled: the centre, then the top accounts by the size measure (ties: more edges drawn, then the
  // server's order), each at least a tenth of the drawing away from those already labelled. The best connected
  // accounts often sit together (one conversation, one clique): ranked alone, their labels would pile up there
  var top = {}, chosen = [];
  var xs = data.nodes.map(function (n) { return n.x; }), ys = data.nodes.map(function (n) { return n.y; });
  var extent = data.nodes.length ? Math.max(Math.max.apply(null, xs) - Math.min.apply(null, xs),
    Math.max.apply(null, ys) - Math.min.apply(null, ys)) : 0;
  var apart = extent / 10;
  data.nodes.slice().sort(function (a, b) {
    return (b.centre - a.centre) || (b[sizeKey] || 0) - (a[sizeKey] || 0) || b.degree - a.degree || a.id - b.id;
  }).forEach(function (n) {
    if (chosen.length >= LABELLED) return;
    var free = chosen.every(function (m) { return Math.hypot(m.x - n.x, m.y - n.y) >= apart; });
    if (free) { chosen.push(n); top[n.id] = true; }
  });
  var small = data.nodes.length < 60;  // few nodes: each is drawn larger
  var graph = new window.graphology.Graph({ type: "directed", multi: false, allowSelfLoops: false });
  data.nodes.forEach(function (n) {
    var share = maxSize > 0 ? Math.sqrt((n[sizeKey] || 0) / maxSize) : 0;
    graph.addNode(String(n.id), {
      x: n.x, y: n.y, label: labelOf(n), color: colourOf(n),
      size: (small ? 6 : 3) + (small ? 12 : 10) * share,
      forceLabel: !!top[n.id], zIndex: n.centre ? 2 : (top[n.id] ? 1 : 0), centre: !!n.centre,
    });
  });
  // a conversation goes both ways: its edges carry no arrow; thousands of arrows would paint a grey felt
  var edgeType = mode === "conversation" || mode === "cluster" || many ? "line" : "arrow";
  var maxW = data.edges.reduce(function (m, e) { return Math.max(m, e.length > 2 ? e[2] : 1); }, 1);
  data.edges.forEach(function (e) {
    var s = String(e[0]), d = String(e[1]);
    if (s === d || graph.hasEdge(s, d)) return;
    var w = e.length > 2 ? e[2] : 1;
    graph.addEdge(s, d, { size: (many ? 0.6 : 0.8) + 1.5 * Math.sqrt(w / maxW) * (maxW > 1 ? 1 : 0),
      color: many ? "rgba(110,122,136,0.3)" : "#b8c2cc" });
  });

  var css = getComputedStyle(document.documentElement);
  var hovered = null, focus = null;  // the account under the pointer; the tapped one (its neighbours stay lit)
  var lit = null;  // ids lit around the focus, or null
  function around(id) {
    var out = {};
    out[id] = true;
    graph.forEachNeighbor(id, function (m) { out[m] = true; });
    return out;
  }
  var near = null;  // the hovered account and its neighbours: labelled while the pointer is there
  var renderer;
  try {
    renderer = new window.Sigma(graph, box, {
      defaultEdgeType: edgeType,
      labelFont: css.getPropertyValue("--pico-font-family-sans-serif").trim() || "system-ui, sans-serif",
      labelSize: 12,
      labelWeight: "500",
      labelColor: { color: "#333" },
      // at the first zoom only the forced labels (the top accounts, the hovered one's neighbourhood): no node is
      // drawn this large (13 px at most, 18 in a drawing of a few). Zoomed in, the larger nodes gain theirs, and
      // sigma's label grid keeps them from piling up into an unreadable carpet
      labelRenderedSizeThreshold: 19,
      zIndex: true,
      minCameraRatio: 0.05,
      maxCameraRatio: 4,
      nodeReducer: function (node, attrs) {
        var out = attrs;
        if (near && near[node]) out = Object.assign({}, out, { forceLabel: true, zIndex: 3 });
        if (lit && !lit[node]) return Object.assign({}, out, { color: "#e3e7ec", label: "", forceLabel: false, zIndex: -1 });
        if (node === focus || node === hovered) out = Object.assign({}, out, { highlighted: true });
        return out;
      },
      edgeReducer: function (edge, attrs) {
        var ends = graph.extremities(edge);
        var ring = lit || near;
        if (!ring) return attrs;
        var key = focus !== null && lit ? focus : hovered;
        if (ends[0] === key || ends[1] === key) return Object.assign({}, attrs, { color: "#5c6773", size: Math.max(attrs.size, 1.2), zIndex: 1 });
        return lit ? Object.assign({}, attrs, { hidden: true }) : attrs;
      },
    });
  } catch (err) {
    // no WebGL (an old browser, or disabled): say so instead of an empty box; the tables list the accounts
    box.textContent = "This browser cannot draw the graph (it needs WebGL). The table below lists the accounts drawn.";
    box.classList.add("no-webgl");
    return;
  }
  // sigma draws its first frame inside the constructor (a synchronous render): every node and edge is on the
  // canvas now. The timing checks read this mark (benchmarks/drawing.md: navigation to the first frame).
  performance.mark("graph-first-frame");

  var tip = document.getElementById("net-tip");
  var names = { betweenness: "betweenness", core: "core", in_degree: "in-degree", out_degree: "out-degree",
    clustering: "clustering", distance: "hops", partners: "conversation partners", conversation: "conversation",
    community: "community", cluster: "cluster", degree: "edges drawn" };
  function position(id) {
    var a = graph.getNodeAttributes(id);
    return renderer.graphToViewport({ x: a.x, y: a.y });
  }
  function show(id) {
    var n = data.nodes[Number(id)];
    tip.innerHTML = "";
    var title = document.createElement("strong");
    title.textContent = labelOf(n) + (n.centre ? " (centre)" : "");
    tip.appendChild(title);
    Object.keys(names).forEach(function (k) {
      if (n[k] === undefined) return;
      var line = document.createElement("div");
      line.textContent = names[k] + " " + fmt(n[k]);
      tip.appendChild(line);
    });
    var p = position(id);
    tip.hidden = false;
    // beside the node, but never past the drawing's right edge (a phone's screen is narrow)
    tip.style.left = Math.max(0, Math.min(p.x + 14, box.clientWidth - tip.offsetWidth - 2)) + "px";
    tip.style.top = (p.y + 8) + "px";
  }
  function refresh() { renderer.refresh({ skipIndexation: true }); }
  renderer.on("enterNode", function (e) {
    hovered = e.node; near = around(e.node); show(e.node); box.style.cursor = "pointer"; refresh();
  });
  renderer.on("leaveNode", function () {
    hovered = null; near = focus !== null ? around(focus) : null; box.style.cursor = "";
    if (focus === null) tip.hidden = true; else show(focus);
    refresh();
  });
  renderer.on("clickNode", function (e) {
    // light the account and its direct neighbours, fade the rest
    focus = e.node; lit = around(e.node); near = lit; show(e.node); refresh();
  });
  renderer.on("clickStage", function () { focus = null; lit = null; near = null; tip.hidden = true; refresh(); });
  renderer.on("doubleClickNode", function (e) {
    e.preventSigmaDefault();
    var m = window.location.pathname.match(/^(.*\/w\/[^/]+\/)/);
    if (m) window.location.assign(m[1] + "accounts/" + data.nodes[Number(e.node)].tid + "/");
  });
  renderer.on("afterRender", function () { if (focus !== null && hovered === null && !tip.hidden) show(focus); });

  // "Colour by": the drawing's own grouping, or the run's modularity communities (drawn where the run found them)
  var LEGENDS = { core: "the core number (darker: deeper in the core)",
    community: "the modularity community (one colour per community, repeating after ten)",
    conversation: "the conversation it belongs to (one colour per conversation)" };
  var picker = box.closest("[data-colour]").querySelector("select[data-colour-by]");
  if (picker) {
    picker.addEventListener("change", function () {
      mode = picker.value;
      box.closest("[data-colour]").setAttribute("data-colour", mode);
      graph.forEachNode(function (id) { graph.setNodeAttribute(id, "color", colourOf(data.nodes[Number(id)])); });
      var legend = box.closest("[data-colour]").querySelector("[data-colour-legend]");
      if (legend) legend.textContent = LEGENDS[mode] || "";
      refresh();
    });
  }
  window.spreadwatchGraphKeys(box, renderer);  // arrows pan, +/- zoom, 0 fits (graph-keys.js)
  window.spreadwatchNetwork = {  // for the browser tests
    sigma: renderer, graph: graph, position: position,
    node: function (label) { return graph.findNode(function (id, a) { return a.label === label; }); },
    labels: function () { return Array.from(renderer.getNodeDisplayedLabels()).map(function (id) { return graph.getNodeAttribute(id, "label"); }); },
  };
})();
