/* The ranking page's bump chart: the rank of the window's top N accounts in each period (1 on top), drawn
   with the vendored Chart.js from the page's JSON data island (#rank-data). The same numbers are in the table
   under the chart, so the page reads the same without this script. */
(function () {
  "use strict";
  var island = document.getElementById("rank-data");
  var canvas = document.getElementById("rank-chart");
  if (!island || !canvas || !window.Chart) return;
  var data = JSON.parse(island.textContent);

  var css = getComputedStyle(document.documentElement);
  function cssVar(name, fallback) {
    var v = css.getPropertyValue(name).trim();
    return v || fallback;
  }
  var text = cssVar("--pico-muted-color", "#646b79");
  var grid = cssVar("--pico-muted-border-color", "#e7eaf0");
  var font = window.Spreadwatch.chartFont();
  // 20 colours that stay apart on light and dark backgrounds (Tableau 10 and its lighter half)
  var palette = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#1f4e79", "#b35806", "#8c1d1d", "#2a7f7a", "#2e6b2b", "#a08400", "#6b3f65", "#c2185b", "#5d4037", "#6c757d",
  ];

  var maxRank = 1;
  data.series.forEach(function (s) {
    s.ranks.forEach(function (r) { if (r !== null && r > maxRank) maxRank = r; });
  });
  // a linear axis while the ranks stay near the top N; beyond that a log axis keeps the top readable
  var logAxis = maxRank > Math.max(3 * data.series.length, 25);
  var periodName = { day: "Day", week: "Week starting (Monday)", month: "Month" }[data.bucket] || "Period";
  // the periods on a time axis: the gap between two months with influence is drawn as long as it was
  var unit = { day: "day", week: "week", month: "month" }[data.bucket] || "day";
  var tooltipFormat = { day: "d MMM yyyy", week: "'week of' d MMM yyyy", month: "MMMM yyyy" }[unit];

  var fmt = window.Spreadwatch.readable;  // numbers.js: the pages' one number format
  var hidden = {};  // series index -> hidden, from the HTML legend

  Chart.defaults.font.family = font;
  Chart.defaults.color = text;

  // the chart's configuration; exporting: for a file (chart-export.js), with the legend drawn under the plot
  function build(exporting) {
    return {
      type: "line",
      data: {
        datasets: data.series.map(function (s, i) {
          var c = palette[i % palette.length];
          return {
            label: s.rank + ". " + s.name,
            data: data.periods.map(function (p, j) { return { x: p, y: s.ranks[j] }; }),
            scores: s.scores,
            borderColor: c,
            backgroundColor: c,
            borderWidth: 2.5,
            pointRadius: data.periods.length > 60 ? 1.5 : 4,
            pointHoverRadius: 7,
            spanGaps: false,
            tension: 0,
            hidden: !!hidden[i],
          };
        }),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        layout: { padding: { top: 8, right: 12, left: 4, bottom: exporting ? 4 : 0 } },
        clip: false,  // a point on rank 1 or on the last period is drawn whole
        animation: window.matchMedia("(prefers-reduced-motion: reduce)").matches ? false : { duration: 300 },
        interaction: { mode: "nearest", intersect: false, axis: "xy" },
        scales: {
          x: {
            type: "time",
            offset: data.periods.length < 3,  // one or two periods: not on the frame's edges
            time: {
              minUnit: unit,
              isoWeekday: true,  // weeks start on Monday, as the buckets do
              tooltipFormat: tooltipFormat,
              displayFormats: { day: "d MMM", week: "d MMM", month: "MMM yyyy", quarter: "MMM yyyy", year: "yyyy" },
            },
            title: { display: true, text: periodName },
            grid: { color: grid },
            ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 16, major: { enabled: true },
              font: function (ctx) { return ctx.tick && ctx.tick.major ? { weight: "bold" } : {}; } },
          },
          y: {
            type: logAxis ? "logarithmic" : "linear",
            reverse: true,
            min: 1,
            max: logAxis ? undefined : Math.max(maxRank, 2),
            title: { display: true, text: "Rank (1 = top)" },
            grid: { color: grid },
            ticks: {
              precision: 0,
              autoSkip: true,
              callback: function (v) {
                if (!logAxis) return Number.isInteger(v) ? v : "";
                var s = String(v);
                return /^(1|2|5)0*$/.test(s) ? v.toLocaleString("en") : "";
              },
            },
          },
        },
        plugins: {
          // on the page the legend is the list under the chart (it wraps, it never covers the plot); in a file
          // it is drawn under the plot
          legend: { display: !!exporting, position: "bottom", labels: { boxWidth: 12, boxHeight: 12, padding: 10 } },
          title: { display: !!exporting, text: exportTitle, font: { size: 14, weight: "bold" }, padding: { bottom: 8 } },
          tooltip: {
            callbacks: {
              label: function (ctx) {
                var i = ctx.dataIndex;
                var score = ctx.dataset.scores[i];
                return ctx.dataset.label.replace(/^\d+\. /, "") + ": rank " + ctx.parsed.y + " of " +
                  data.ranked[i].toLocaleString("en") + " — " + data.aggregate + " " + fmt(score) + " " + data.unit;
              },
            },
          },
        },
      },
    };
  }

  var figure = canvas.closest("figure") || canvas.parentNode;
  var exportTitle = figure.getAttribute("data-export-title") || "Rank over time";
  var chart = new Chart(canvas, build(false));
  canvas.chart = chart;

  // the legend: one button per series, in rank order; pressing one hides or shows its line
  var legend = document.createElement("ul");
  legend.className = "chart-legend";
  legend.setAttribute("aria-label", "Accounts in the chart (press one to hide or show its line)");
  data.series.forEach(function (s, i) {
    var li = document.createElement("li");
    var b = document.createElement("button");
    b.type = "button";
    b.setAttribute("aria-pressed", "true");
    var swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = palette[i % palette.length];
    swatch.setAttribute("aria-hidden", "true");
    b.appendChild(swatch);
    b.appendChild(document.createTextNode(s.rank + ". " + s.name));
    b.addEventListener("click", function () {
      hidden[i] = !hidden[i];
      chart.setDatasetVisibility(i, !hidden[i]);
      chart.update();
      b.setAttribute("aria-pressed", hidden[i] ? "false" : "true");
    });
    li.appendChild(b);
    legend.appendChild(li);
  });
  canvas.parentNode.insertAdjacentElement("afterend", legend);

  if (window.Spreadwatch.chartDownloads) {
    window.Spreadwatch.chartDownloads({
      into: figure,
      name: figure.getAttribute("data-export-name") || "rank-over-time",
      label: "the rank chart",
      title: exportTitle,
      canvas: canvas,
      build: build,
      minHeight: 420,
      // room for the legend drawn under the plot: about four entries a row
      extraHeight: function () { return 24 * Math.ceil(data.series.length / 4) + 30; },
    });
  }
})();
