/* How the pages write numbers, in the charts' JavaScript: the same as monitor/numbers.py's readable() and the
   templates' influence filter ("73,165", "734", "53.8", "4.21", "0.867", "0.0012"), in English whatever the
   browser's locale, so that a number reads the same in a table and in a chart's tooltip. */
(function () {
  "use strict";
  function readable(x) {
    if (x === null || x === undefined || x === "" || Number.isNaN(Number(x))) return "–";
    x = Number(x);
    if (x === 0) return "0";
    var a = Math.abs(x);
    if (a >= 100) return Math.round(x).toLocaleString("en");
    if (a >= 10) return x.toFixed(1);
    if (a >= 1) return x.toFixed(2);
    if (a >= 0.01) return x.toFixed(3);
    return String(Number(x.toPrecision(2)));
  }
  function count(n) {
    return Math.round(Number(n)).toLocaleString("en");
  }
  // the pages' sans-serif stack for the charts' canvas: Pico's ends in var(--pico-font-family-emoji), which a
  // custom property hands over unresolved and a canvas font (and svgcanvas) refuses whole
  function chartFont() {
    var f = getComputedStyle(document.documentElement).getPropertyValue("--pico-font-family-sans-serif");
    f = f.replace(/,?\s*var\([^)]*\)/g, "").trim();
    return f || "system-ui, sans-serif";
  }
  window.Spreadwatch = window.Spreadwatch || {};
  window.Spreadwatch.chartFont = chartFont;
  window.Spreadwatch.readable = readable;
  window.Spreadwatch.count = count;
})();
