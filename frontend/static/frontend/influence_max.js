/* The counter-campaign planner's chart (vendored Chart.js, data island "im-chart"): the method's estimate of the
   reach of the first K chosen accounts, {curve: [[K, reach], ...]}, and the evaluated reach of the whole plan and
   of the top spreaders by influence with their 95 % intervals, {comparison: {chosen, baseline}}. The numbers are
   in the page's tables and cards, so it reads the same without this script. */
(function () {
  "use strict";
  var island = document.getElementById("im-chart");
  var canvas = document.getElementById("im-curve");
  if (!island || !canvas || !window.Chart) return;
  var data = JSON.parse(island.textContent);
  var css = getComputedStyle(document.documentElement);
  var grid = css.getPropertyValue("--pico-muted-border-color").trim() || "#e7eaf0";
  Chart.defaults.color = css.getPropertyValue("--pico-muted-color").trim() || "#646b79";
  Chart.defaults.font.family = window.Spreadwatch.chartFont();
  var still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  var k = data.curve.length;
  var curve = data.curve.map(function (p) { return { x: p[0], y: p[1] }; });
  // an interval drawn as a vertical segment at K, its mean as a point on it
  var interval = function (c, x) {
    return c ? [{ x: x, y: c.ci_low }, { x: x, y: c.ci_high }] : [];
  };
  var cmp = data.comparison;
  var datasets = [
    { label: "estimate, first K accounts", data: curve, borderColor: "#4e79a7", backgroundColor: "#4e79a7",
      showLine: true, pointRadius: k > 60 ? 0 : 2, borderWidth: 2 },
    { label: "plan, evaluated (95 % CI)", data: [{ x: k, y: cmp.chosen.spread }], backgroundColor: "#e15759",
      pointRadius: 5, pointStyle: "rectRot" },
    { label: "", data: interval(cmp.chosen, k), borderColor: "#e15759", showLine: true, pointRadius: 0, borderWidth: 2 },
  ];
  if (cmp.baseline) {
    datasets.push(
      { label: "top spreaders by influence (95 % CI)", data: [{ x: k, y: cmp.baseline.spread }],
        backgroundColor: "#f28e2b", pointRadius: 5, pointStyle: "triangle" },
      { label: "", data: interval(cmp.baseline, k), borderColor: "#f28e2b", showLine: true, pointRadius: 0,
        borderWidth: 2, borderDash: [4, 3] }
    );
  }
  var figure = canvas.closest("figure");
  var title = figure.getAttribute("data-export-title") || "";
  var build = function (exporting) { return {
    type: "scatter",
    data: { datasets: datasets },
    options: {
      responsive: true, maintainAspectRatio: false, animation: still ? false : { duration: 300 },
      scales: {
        x: { title: { display: true, text: "K (accounts reached by the correction)" }, grid: { color: grid },
          min: 0, ticks: { precision: 0 } },
        y: { title: { display: true, text: "expected reach (" + data.unit + ")" }, grid: { color: grid }, min: 0 },
      },
      plugins: {
        legend: { position: "bottom", labels: { boxWidth: 12, boxHeight: 12,
          filter: function (item) { return item.text !== ""; } } },
        title: { display: !!exporting, text: title, font: { size: 14, weight: "bold" } },
        tooltip: { callbacks: { label: function (ctx) {
          return (ctx.dataset.label || "interval") + ": " + ctx.raw.y.toFixed(1) + " at K = " + ctx.raw.x;
        } } },
      },
    },
  }; };
  new Chart(canvas, build(false));
  if (window.Spreadwatch.chartDownloads) {
    window.Spreadwatch.chartDownloads({ into: figure, name: figure.getAttribute("data-export-name"),
      label: "the reach-against-K chart", title: title, canvas: canvas, build: build, minWidth: 720, minHeight: 420 });
  }
})();
