/* Every chart of the pages as a file: "PNG" and "SVG" buttons under a chart (Spreadwatch.chartDownloads).

   A Chart.js chart is drawn again for the file, from the same configuration its page drew it with (the page
   passes a function that builds it; exporting=true may turn on what the screen shows in HTML instead, such as
   the legend), on a fixed-size surface with a white background and no animation:
   - PNG: an off-screen <canvas> at twice the size (sharp when printed or zoomed), saved with toBlob;
   - SVG: the same drawing calls into the vendored svgcanvas (a mock 2D context that writes SVG elements; loaded
     only when a SVG is asked for), so the file has real <path> and <text> elements, editable in Inkscape or
     Illustrator, rather than a bitmap wrapped in SVG.
   An inline <svg> chart (the cascade's timeline) is saved as it is, with its computed styles written into its
   elements (the page's CSS does not travel with the file), and drawn onto a canvas for the PNG.
   The file name says what the chart is and whose: "<workspace>-<chart>[-<publisher>…].png". */
(function () {
  "use strict";
  var S = (window.Spreadwatch = window.Spreadwatch || {});
  var script = document.currentScript;
  var svgcanvasUrl = script && script.getAttribute("data-svgcanvas");
  var BACKGROUND = "#ffffff";
  var INK = "#373c44";
  var GRID = "#e3e6eb";
  var AXIS = "#9aa1ad";

  function fileName(name, ext) {
    var base = String(name || "chart").toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
    return (base || "chart") + "." + ext;
  }

  function save(blob, name) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  var background = {
    id: "swExportBackground",
    beforeDraw: function (chart) {
      var c = chart.ctx;
      c.save();
      c.fillStyle = BACKGROUND;
      c.fillRect(0, 0, chart.width, chart.height);
      c.restore();
    },
  };

  function withColour(part, colour) { return Object.assign({}, part || {}, { color: colour }); }

  // the configuration for a file: fixed size, drawn at once, dark ink on the white background whatever the
  // page's theme (in the dark theme the page's axis text is light grey, which would vanish on white)
  function fileConfig(build, pixelRatio) {
    var cfg = build(true);
    cfg.platform = Chart.BasicPlatform;
    cfg.plugins = (cfg.plugins || []).concat([background]);
    var o = (cfg.options = cfg.options || {});
    o.responsive = false;
    o.animation = false;
    o.devicePixelRatio = pixelRatio;
    o.color = INK;
    Object.keys(o.scales || {}).forEach(function (k) {
      var sc = o.scales[k];
      sc.ticks = withColour(sc.ticks, INK);
      sc.title = withColour(sc.title, INK);
      sc.grid = withColour(sc.grid, GRID);
      sc.border = withColour(sc.border, AXIS);
    });
    o.plugins = o.plugins || {};
    o.plugins.title = withColour(o.plugins.title, INK);
    o.plugins.legend = Object.assign({}, o.plugins.legend);
    o.plugins.legend.labels = withColour(o.plugins.legend.labels, INK);
    return cfg;
  }

  function size(canvas, opts) {
    var w = Math.max(opts.minWidth || 900, Math.round(canvas ? canvas.clientWidth : 0));
    var h = Math.max(opts.minHeight || 420, Math.round(canvas ? canvas.clientHeight : 0)) + (opts.extraHeight ? opts.extraHeight() : 0);
    return { width: w, height: h };
  }

  function chartPng(opts) {
    var dim = size(opts.canvas, opts);
    var canvas = document.createElement("canvas");
    canvas.width = dim.width;
    canvas.height = dim.height;
    var chart = new Chart(canvas, fileConfig(opts.build, 2));
    return new Promise(function (resolve) {
      canvas.toBlob(function (blob) { chart.destroy(); resolve(blob); }, "image/png");
    });
  }

  var svgcanvas = null;
  function loadSvgcanvas() {
    if (!svgcanvas) svgcanvas = import(svgcanvasUrl);
    return svgcanvas;
  }

  function chartSvg(opts) {
    var dim = size(opts.canvas, opts);
    return loadSvgcanvas().then(function (lib) {
      var ctx = new lib.Context({ width: dim.width, height: dim.height });
      ctx.getContext = function () { return ctx; };  // Chart.js asks its "canvas" (ctx.canvas is ctx) for a context
      var cfg = fileConfig(opts.build, 1);
      // Chart.js strokes a line through a cached Path2D, which svgcanvas cannot draw; a line with segment
      // options is drawn point by point with moveTo/lineTo instead (an empty set changes no style)
      (cfg.data.datasets || []).forEach(function (d) { if (!d.segment) d.segment = {}; });
      var chart = new Chart(ctx, cfg);
      // a copy before destroy(): Chart.js clears its canvas when it goes, which empties the SVG
      var svg = ctx.getSvg().cloneNode(true);
      chart.destroy();
      svg.setAttribute("viewBox", "0 0 " + dim.width + " " + dim.height);
      return serialise(svg, opts.title);
    });
  }

  function serialise(svg, title) {
    svg.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    if (title) {
      var t = document.createElementNS("http://www.w3.org/2000/svg", "title");
      t.textContent = title;
      svg.insertBefore(t, svg.firstChild);
    }
    var text = '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(svg);
    return new Blob([text], { type: "image/svg+xml" });
  }

  // an inline <svg>: a copy with its computed styles inlined and a white background
  var STYLE = ["fill", "stroke", "stroke-width", "stroke-dasharray", "opacity", "font-size", "font-family", "font-weight"];
  function inlineSvg(source) {
    var box = source.getBoundingClientRect();
    var w = Math.round(box.width) || 800, h = Math.round(box.height) || 160;
    var copy = source.cloneNode(true);
    var from = [source].concat(Array.prototype.slice.call(source.querySelectorAll("*")));
    var to = [copy].concat(Array.prototype.slice.call(copy.querySelectorAll("*")));
    from.forEach(function (el, i) {
      var cs = getComputedStyle(el);
      var style = STYLE.map(function (p) { return p + ":" + cs.getPropertyValue(p); });
      // dark ink on the file's white background, whatever the page's theme
      if (el.tagName.toLowerCase() === "text") style.push("fill:" + INK);
      if (el.tagName.toLowerCase() === "line") style.push("stroke:" + AXIS);
      to[i].setAttribute("style", style.join(";"));
    });
    copy.removeAttribute("id");
    copy.removeAttribute("class");
    copy.setAttribute("width", w);
    copy.setAttribute("height", h);
    if (!copy.getAttribute("viewBox")) copy.setAttribute("viewBox", "0 0 " + w + " " + h);
    var bg = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    bg.setAttribute("width", "100%");
    bg.setAttribute("height", "100%");
    bg.setAttribute("fill", BACKGROUND);
    copy.insertBefore(bg, copy.firstChild);
    return { svg: copy, width: w, height: h };
  }

  function inlineSvgPng(source) {
    var c = inlineSvg(source);
    var url = URL.createObjectURL(serialise(c.svg));
    return new Promise(function (resolve, reject) {
      var img = new Image();
      img.onload = function () {
        var canvas = document.createElement("canvas");
        canvas.width = c.width * 2;
        canvas.height = c.height * 2;
        var g = canvas.getContext("2d");
        g.drawImage(img, 0, 0, canvas.width, canvas.height);
        URL.revokeObjectURL(url);
        canvas.toBlob(resolve, "image/png");
      };
      img.onerror = function () { URL.revokeObjectURL(url); reject(new Error("the chart could not be drawn as PNG")); };
      img.src = url;
    });
  }

  /* Spreadwatch.chartDownloads({into, name, label, title, canvas, build, minWidth, minHeight, extraHeight})
     or ({into, name, label, title, svg}): adds the buttons at the end of `into` (the chart's <figure>).
     name: the file name without extension; label: what the chart is, for the buttons' accessible names. */
  S.chartDownloads = function (opts) {
    var group = document.createElement("div");
    group.className = "chart-downloads";
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", "Download " + opts.label);
    var status = document.createElement("span");
    status.className = "chart-downloads-status";
    status.setAttribute("role", "status");
    ["png", "svg"].forEach(function (fmt) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "secondary outline";
      b.textContent = fmt.toUpperCase();
      b.setAttribute("aria-label", "Download " + opts.label + " as " + fmt.toUpperCase());
      b.title = "Save as " + fileName(opts.name, fmt);
      b.dataset.format = fmt;
      b.addEventListener("click", function () {
        var made;
        if (opts.svg) made = fmt === "png" ? inlineSvgPng(opts.svg) : Promise.resolve(serialise(inlineSvg(opts.svg).svg, opts.title));
        else made = fmt === "png" ? chartPng(opts) : chartSvg(opts);
        b.disabled = true;
        status.textContent = "";
        made.then(function (blob) { save(blob, fileName(opts.name, fmt)); })
          .catch(function (err) { status.textContent = "Could not make the file: " + err.message; })
          .then(function () { b.disabled = false; });
      });
      group.appendChild(b);
    });
    group.appendChild(status);
    opts.into.appendChild(group);
    return group;
  };
  S.chartFileName = fileName;

  // inline <svg> charts declare themselves: <figure data-export-svg="#id" data-export-name=… data-export-label=…>
  document.querySelectorAll("figure[data-export-svg]").forEach(function (figure) {
    var svg = figure.querySelector(figure.getAttribute("data-export-svg"));
    if (!svg) return;
    S.chartDownloads({ into: figure, name: figure.getAttribute("data-export-name"), svg: svg,
      label: figure.getAttribute("data-export-label") || "the chart", title: figure.getAttribute("data-export-title") });
  });
})();
