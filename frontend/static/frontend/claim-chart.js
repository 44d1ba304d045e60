/* A claim's page: its tweets per UTC day stacked by truth label (bars) and the retweets of them per day (a line
   on its own axis), from the data island "claim-data" ([{day: "YYYY-MM-DD", tweets, retweets, reach,
   label_false, label_true, ...}, ...]). The same numbers are in the table under it ("The numbers"). */
(function () {
  "use strict";
  var island = document.getElementById("claim-data");
  var canvas = document.getElementById("claim-chart");
  if (!island || !canvas || !window.Chart) return;
  var rows = JSON.parse(island.textContent);
  var css = getComputedStyle(document.documentElement);
  var grid = css.getPropertyValue("--pico-muted-border-color").trim() || "#e7eaf0";
  var line = css.getPropertyValue("--pico-color").trim() || "#373c44";
  Chart.defaults.color = css.getPropertyValue("--pico-muted-color").trim() || "#646b79";
  Chart.defaults.font.family = window.Spreadwatch.chartFont();
  var figure = canvas.closest("figure");
  var title = figure.getAttribute("data-export-title") || "Tweets and retweets per day";
  // the truth labels' colours of the badges (app.css .l-*)
  var labels = [["false", "False", "#c62828"], ["true", "True", "#2e7d32"], ["unverified", "Unverified", "#b26a00"],
    ["non-rumor", "Non-rumor", "#1769aa"], ["unknown", "Unlabelled", "#6c757d"]];
  var used = labels.filter(function (l) { return rows.some(function (r) { return r["label_" + l[0]] > 0; }); });

  function build(exporting) {
    var sets = used.map(function (l) {
      return { type: "bar", label: l[1] + " tweets", stack: "tweets", backgroundColor: l[2], yAxisID: "y",
        data: rows.map(function (r) { return { x: r.day, y: r["label_" + l[0]] }; }),
        minBarLength: 0, barPercentage: 0.9, categoryPercentage: 1, maxBarThickness: 40 };
    });
    sets.push({ type: "line", label: "retweets", yAxisID: "y1", borderColor: line, backgroundColor: line,
      borderWidth: 1.5, pointRadius: rows.length > 60 ? 0 : 2, tension: 0,
      data: rows.map(function (r) { return { x: r.day, y: r.retweets }; }) });
    return {
      data: { datasets: sets },
      options: {
        responsive: true, maintainAspectRatio: false,
        animation: window.matchMedia("(prefers-reduced-motion: reduce)").matches ? false : { duration: 300 },
        layout: { padding: { right: 12 } },
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { type: "time", offset: true, stacked: true,
            time: { minUnit: "day", tooltipFormat: "EEE d MMM yyyy",
              displayFormats: { day: "d MMM", week: "d MMM", month: "MMM yyyy", quarter: "MMM yyyy", year: "yyyy" } },
            title: { display: true, text: "Day (UTC)" }, grid: { color: grid, offset: false },
            ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 16 } },
          y: { stacked: true, beginAtZero: true, title: { display: true, text: "tweets" }, grid: { color: grid },
            ticks: { precision: 0 } },
          y1: { position: "right", beginAtZero: true, title: { display: true, text: "retweets" },
            grid: { drawOnChartArea: false }, ticks: { precision: 0 } },
        },
        plugins: {
          legend: { position: "bottom", labels: { boxWidth: 12 } },
          title: { display: !!exporting, text: title, font: { size: 14, weight: "bold" }, padding: { bottom: 8 } },
        },
      },
    };
  }
  var chart = new Chart(canvas, build(false));
  canvas.chart = chart;
  if (window.Spreadwatch.chartDownloads) {
    window.Spreadwatch.chartDownloads({ into: figure, name: figure.getAttribute("data-export-name"),
      label: "the claim's per-day chart", title: title, canvas: canvas, build: build, minHeight: 320 });
  }
})();
