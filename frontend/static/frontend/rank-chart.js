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
  var font = cssVar("--pico-font-family-sans-serif", "system-ui, sans-serif");
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
  var labels = data.periods.map(function (p) { return data.bucket === "month" ? p.slice(0, 7) : p; });

  var fmt = window.Spreadwatch.readable;  // numbers.js: the pages' one number format

  Chart.defaults.font.family = font;
  Chart.defaults.color = text;
  var chart = new Chart(canvas, {
    type: "line",
    data: {
      labels: labels,
      datasets: data.series.map(function (s, i) {
        var c = palette[i % palette.length];
        return {
          label: s.rank + ". " + s.name,
          data: s.ranks,
          scores: s.scores,
          borderColor: c,
          backgroundColor: c,
          borderWidth: 2.5,
          pointRadius: data.periods.length > 60 ? 1.5 : 4,
          pointHoverRadius: 7,
          spanGaps: false,
          tension: 0,
        };
      }),
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      layout: { padding: { top: 8, right: 4 } },
      clip: false,
      animation: window.matchMedia("(prefers-reduced-motion: reduce)").matches ? false : { duration: 300 },
      interaction: { mode: "nearest", intersect: false, axis: "xy" },
      scales: {
        x: {
          title: { display: true, text: periodName },
          grid: { color: grid },
          ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 12 },
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
        legend: {
          position: window.innerWidth < 700 ? "bottom" : "right",
          labels: { boxWidth: 12, boxHeight: 12, padding: 8 },
        },
        tooltip: {
          callbacks: {
            title: function (items) { return items.length ? periodName + ": " + data.periods[items[0].dataIndex] : ""; },
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
  });
  canvas.chart = chart;
})();
