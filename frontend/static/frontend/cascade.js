/* The cascade explorer: draws the spreading graph with WebGL (sigma.js on graphology, vendored) and the retweet
   timeline. Data comes from the page (json_script "cascade-data") in columns (monitor/selectors/explorer.py): nodes
   {id, tid, name, inf, n, role, delay, x, y}, one list per field, the role an index into roles, x and y from the
   server's radial layout (compute/drawing.py: the publisher in the centre, each level a band around it); edges
   {src, dst}, positions in the node lists (src could have seen the tweet from dst); hidden counts; timeline
   {n, points}. Every node is drawn (tens of thousands stay smooth); the top accounts by influence always carry a
   label, the others show theirs when zoomed in or hovered. */
(function () {
  "use strict";
  var el = document.getElementById("cascade-data");
  var container = document.getElementById("cy");
  if (!el || !container || !window.Sigma || !window.graphology) return;
  var data = JSON.parse(el.textContent);
  // the columns as one object per node and one [src id, dst id] pair per edge, as the drawing uses them
  var cols = data.nodes, ends = data.edges;
  data.nodes = cols.id.map(function (id, i) {
    return { id: id, tid: cols.tid[i], name: cols.name[i], inf: cols.inf[i], n: cols.n[i],
      role: data.roles[cols.role[i]], delay: cols.delay[i], x: cols.x[i], y: cols.y[i] };
  });
  data.edges = ends.src.map(function (s, i) { return [cols.id[s], cols.id[ends.dst[i]]]; });
  var colours = { publisher: "#c0392b", spreader: "#e67e22", leaf: "#2e86c1", orphan: "#95a5a6" };
  var labelColours = { "false": "#c62828", "true": "#2e7d32", unverified: "#b26a00", "non-rumor": "#1769aa",
    unknown: "#6c757d" };
  var LABELLED = 25;  // accounts labelled at every zoom: the most influential
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
  function labelOf(n) { return n.name ? "@" + n.name : n.tid; }

  var byId = {};
  var topNodes = data.nodes.slice().sort(function (a, b) { return b.inf - a.inf; }).slice(0, LABELLED);
  var labelled = {};
  topNodes.forEach(function (n) { labelled[n.id] = true; });
  var graph = new window.graphology.Graph({ type: "directed", multi: false, allowSelfLoops: false });
  data.nodes.forEach(function (n) {
    byId[String(n.id)] = n;
    graph.addNode(String(n.id), {
      x: n.x, y: n.y, label: labelOf(n), size: 2.5 + 12 * Math.sqrt(Math.max(n.inf, 0) / maxInf),
      color: colours[n.role] || "#777", forceLabel: !!labelled[n.id] || n.role === "publisher",
      zIndex: n.role === "publisher" ? 2 : (labelled[n.id] ? 1 : 0)
    });
  });
  // thousands of edges into the publisher would paint a solid disc: big graphs get faint, thin lines
  var many = data.edges.length > 2000;
  var edgeStyle = many ? { size: 0.25, color: "rgba(140,152,166,0.18)" } : { size: 0.6, color: "#b8c2cc" };
  data.edges.forEach(function (e) {
    var s = String(e[0]), d = String(e[1]);
    if (graph.hasNode(s) && graph.hasNode(d) && !graph.hasEdge(s, d)) graph.addEdge(s, d, Object.assign({}, edgeStyle));
  });

  var css = getComputedStyle(document.documentElement);
  var focus = null;  // the highlighted account: its paths in and out stay lit
  var lit = null;
  var renderer;
  try {
    renderer = new window.Sigma(graph, container, {
    defaultEdgeType: many ? "line" : "arrow",
    labelFont: css.getPropertyValue("--pico-font-family-sans-serif").trim() || "system-ui, sans-serif",
    labelSize: 11,
    labelColor: { color: "#444" },
    labelRenderedSizeThreshold: 9,  // others' labels appear once zoomed in far enough
    zIndex: true,
    minCameraRatio: 0.02,
    maxCameraRatio: 4,
    nodeReducer: function (node, attrs) {
      if (!lit || lit[node]) return node === focus ? Object.assign({}, attrs, { highlighted: true, forceLabel: true }) : attrs;
      return Object.assign({}, attrs, { color: "#e3e7ec", label: "", forceLabel: false, zIndex: -1 });
    },
    edgeReducer: function (edge, attrs) {
      if (!lit) return attrs;
      var ends = graph.extremities(edge);
      return lit[ends[0]] && lit[ends[1]] ? Object.assign({}, attrs, { color: "#7b8794", size: 1 }) : Object.assign({}, attrs, { hidden: true });
    }
    });
  } catch (err) {
    // no WebGL (an old browser, or disabled): say so instead of an empty box; the tweet page lists everyone
    container.textContent = "This browser cannot draw the graph (it needs WebGL). The tweet page lists every participant with its numbers.";
    container.classList.add("no-webgl");
    return;
  }

  var tip = document.getElementById("cy-tip");
  function show(id) {
    var d = byId[id];
    tip.innerHTML = "";
    var lines = [labelOf(d), "influence " + fmt(d.inf) + " " + data.unit,
      data.unit === "retweeters" ? "followers unknown" : "own followers " + window.Spreadwatch.count(d.n),
      "role " + d.role, d.role === "publisher" ? "published the tweet" : "retweeted after " + dur(d.delay)];
    lines.forEach(function (t, i) {
      var line = document.createElement(i === 0 ? "strong" : "div");
      line.textContent = t;
      tip.appendChild(line);
    });
    var p = position(id);
    tip.hidden = false;
    // beside the node, but never past the drawing's right edge (a phone's screen is narrow)
    tip.style.left = Math.max(0, Math.min(p.x + 14, container.clientWidth - tip.offsetWidth - 2)) + "px";
    tip.style.top = (p.y + 8) + "px";
  }
  function position(id) {
    // where the node is on screen, in pixels from the drawing's top left corner
    var a = graph.getNodeAttributes(id);
    return renderer.graphToViewport({ x: a.x, y: a.y });
  }
  function paths(id) {
    // what flowed into the account (the accounts that saw it from them, transitively) and where it went
    var seen = {};
    seen[id] = true;
    [["inNeighbors"], ["outNeighbors"]].forEach(function (dir) {
      var stack = [id];
      while (stack.length) {
        var v = stack.pop();
        graph[dir[0]](v).forEach(function (w) { if (!seen[w]) { seen[w] = true; stack.push(w); } });
      }
    });
    return seen;
  }
  function highlight(id) {
    focus = id;
    lit = id === null ? null : paths(id);
    renderer.refresh({ skipIndexation: true });
  }
  function centreOn(id) {
    var d = renderer.getNodeDisplayData(id);
    if (d) renderer.getCamera().animate({ x: d.x, y: d.y, ratio: Math.min(renderer.getCamera().ratio, 0.25) }, { duration: 300 });
  }
  renderer.on("enterNode", function (e) { show(e.node); container.style.cursor = "pointer"; });
  renderer.on("leaveNode", function () { if (focus === null) tip.hidden = true; container.style.cursor = ""; });
  renderer.on("clickNode", function (e) { highlight(e.node); show(e.node); });
  renderer.on("clickStage", function () { highlight(null); tip.hidden = true; });
  renderer.on("doubleClickNode", function (e) {
    e.preventSigmaDefault();
    var path = window.location.pathname.replace(/tweets\/\d+\/explore\/?$/, "accounts/" + byId[e.node].tid + "/");
    window.location.assign(path);
  });
  // the tooltip of the lit account follows it when the camera moves or the drawing is resized
  renderer.on("afterRender", function () { if (focus !== null && !tip.hidden) show(focus); });

  window.spreadwatchGraphKeys(container, renderer);  // arrows pan, +/- zoom, 0 fits (graph-keys.js)

  // find an account: @name or id, exact first, then a prefix; centres on it and lights its paths
  var form = document.getElementById("find-account");
  if (form) {
    var input = form.querySelector("input"), said = document.getElementById("find-result");
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var q = input.value.trim().replace(/^@/, "").toLowerCase();
      if (!q) return;
      var exact = null, prefix = null;
      data.nodes.forEach(function (n) {
        var name = (n.name || "").toLowerCase();
        if (!exact && (name === q || n.tid === q)) exact = n;
        if (!prefix && (name.indexOf(q) === 0 || n.tid.indexOf(q) === 0)) prefix = n;
      });
      var hit = exact || prefix;
      if (!hit) {
        said.textContent = "No account matching “" + input.value.trim() + "” in this cascade" +
          (data.hidden.nodes ? " (" + window.Spreadwatch.count(data.hidden.nodes) + " participants are not drawn)." : ".");
        return;
      }
      said.textContent = "Found " + labelOf(hit) + ": influence " + fmt(hit.inf) + " " + data.unit + ".";
      var id = String(hit.id);
      highlight(id);
      centreOn(id);
      setTimeout(function () { show(id); }, 320);
    });
  }

  window.spreadwatchCascade = {  // for the browser tests
    sigma: renderer, graph: graph, position: position,
    nodeByLabel: function (label) { return graph.findNode(function (n, a) { return a.label === label; }); }
  };
  var modeSelect = document.getElementById("colour-mode");
  if (modeSelect) {
    modeSelect.addEventListener("change", function () {
      var mode = modeSelect.value;
      graph.forEachNode(function (id) { graph.setNodeAttribute(id, "color", colourOf(byId[id], mode)); });
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
