/* The account page's influence per day: one bar per UTC day with activity on a time axis (vendored Chart.js and
   its date-fns adapter), from the data island "day-data" ([{day: "YYYY-MM-DD", total, n_cascades}, ...]). The
   same numbers are in the table under it, so the page reads the same without this script. */
(function () {
  "use strict";
  var island = document.getElementById("day-data");
  var canvas = document.getElementById("day-chart");
  if (!island || !canvas || !window.Chart) return;
  var rows = JSON.parse(island.textContent);
  var css = getComputedStyle(document.documentElement);
  var grid = css.getPropertyValue("--pico-muted-border-color").trim() || "#e7eaf0";
  var bar = css.getPropertyValue("--pico-primary").trim() || "#0172ad";
  Chart.defaults.color = css.getPropertyValue("--pico-muted-color").trim() || "#646b79";
  Chart.defaults.font.family = window.Spreadwatch.chartFont();
  var fmt = window.Spreadwatch.readable;
  var figure = canvas.closest("figure");
  var title = figure.getAttribute("data-export-title") || "Influence per day";

  function build(exporting) {
    return {
      type: "bar",
      data: {
        datasets: [{
          label: "influence",
          data: rows.map(function (r) { return { x: r.day, y: Number(r.total), n: r.n_cascades }; }),
          backgroundColor: bar,
          // a bar never thinner than a hairline, however many days the axis spans
          minBarLength: 1, barPercentage: 0.9, categoryPercentage: 1, maxBarThickness: 40,
        }],
      },
      options: {
        responsive: true, maintainAspectRatio: false,
        animation: window.matchMedia("(prefers-reduced-motion: reduce)").matches ? false : { duration: 300 },
        layout: { padding: { right: 12 } },
        scales: {
          x: {
            type: "time", offset: true,
            time: { minUnit: "day", tooltipFormat: "EEE d MMM yyyy",
              displayFormats: { day: "d MMM", week: "d MMM", month: "MMM yyyy", quarter: "MMM yyyy", year: "yyyy" } },
            title: { display: true, text: "Day (UTC)" },
            grid: { color: grid, offset: false },
            ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 16, major: { enabled: true },
              font: function (ctx) { return ctx.tick && ctx.tick.major ? { weight: "bold" } : {}; } },
          },
          y: { beginAtZero: true, title: { display: true, text: "Σ influence" }, grid: { color: grid },
            ticks: { callback: function (v) { return Number(v).toLocaleString("en", { maximumFractionDigits: 2 }); } } },
        },
        plugins: {
          legend: { display: false },
          title: { display: !!exporting, text: title, font: { size: 14, weight: "bold" }, padding: { bottom: 8 } },
          tooltip: { callbacks: { label: function (ctx) {
            var n = ctx.raw.n;
            return fmt(ctx.raw.y) + " influence, " + n + " cascade" + (n === 1 ? "" : "s");
          } } },
        },
      },
    };
  }
  // an account's activity is in UTC days, so the axis is too: the adapter's dates are local time, so each day is
  // placed at its local midnight, which is the same calendar day whatever the browser's time zone
  var chart = new Chart(canvas, build(false));
  canvas.chart = chart;
  if (window.Spreadwatch.chartDownloads) {
    window.Spreadwatch.chartDownloads({ into: figure, name: figure.getAttribute("data-export-name"),
      label: "the influence-per-day chart", title: title, canvas: canvas, build: build, minHeight: 320 });
  }
})();
