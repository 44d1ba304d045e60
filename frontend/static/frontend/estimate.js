/* Spreadwatch: a run's estimated cost on its start form, kept current as the analyst changes the parameters
   (progressive enhancement). Every element with data-estimate-url sits inside the form it estimates: on load and
   after each change (debounced) it asks GET <data-estimate-url>?algorithm=<data-algorithm>&<the form's fields>
   &<each data-param-NAME attribute: a fixed parameter, e.g. the publisher> and shows the answer's summary; a run beyond the workspace's budget
   shows why (the same words the start would answer with a 400), invalid parameters their error. Without
   JavaScript the start itself says so on the field. */
(function () {
  "use strict";
  if (!window.fetch || !window.URLSearchParams) return;
  var SKIP = { csrfmiddlewaretoken: 1, backend: 1 };

  function setup(box) {
    var form = box.closest("form");
    if (!form) return;
    var url = box.getAttribute("data-estimate-url");
    var algorithm = box.getAttribute("data-algorithm");
    var fixed = {};
    Array.prototype.forEach.call(box.attributes, function (a) {
      if (a.name.indexOf("data-param-") === 0) fixed[a.name.slice(11).replace(/-/g, "_")] = a.value;
    });
    var text = box.querySelector("[data-estimate-text]");
    var errors = box.querySelector("[data-estimate-errors]");
    var timer = null;
    var asked = 0;

    function query() {
      var q = new URLSearchParams();
      q.set("algorithm", algorithm);
      Object.keys(fixed).forEach(function (k) {
        q.set(k, fixed[k]);
      });
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name || SKIP[el.name] || el.disabled) return;
        if (el.type === "checkbox") { q.set(el.name, el.checked ? "true" : "false"); return; }
        if (el.type === "radio" && !el.checked) return;
        if (el.value !== "") q.set(el.name, el.value);
      });
      return q.toString();
    }

    function show(summary, problems, over) {
      box.classList.toggle("over", !!over);
      if (text) text.textContent = summary;
      if (!errors) return;
      errors.textContent = "";
      problems.forEach(function (p) {
        var li = document.createElement("li");
        li.textContent = p;
        errors.appendChild(li);
      });
      errors.hidden = !problems.length;
    }

    function ask() {
      var mine = ++asked;
      box.setAttribute("aria-busy", "true");
      fetch(url + "?" + query(), { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
        .then(function (res) {
          if (mine !== asked) return; // a later change asked again
          box.removeAttribute("aria-busy");
          var b = res.body || {};
          if (res.ok) {
            var why = Object.keys(b.errors || {}).map(function (k) { return b.errors[k]; });
            show("Estimated: " + b.summary + ".", why, !b.fits);
          } else {
            var msgs = [];
            Object.keys(b).forEach(function (k) { [].concat(b[k]).forEach(function (m) { msgs.push(String(m)); }); });
            show("No estimate for these parameters.", msgs, true);
          }
        })
        .catch(function () {
          if (mine !== asked) return;
          box.removeAttribute("aria-busy");
          show("The estimate could not be loaded; the start will still check the budget.", [], false);
        });
    }

    function later() {
      clearTimeout(timer);
      timer = setTimeout(ask, 300);
    }

    form.addEventListener("input", later);
    form.addEventListener("change", later);
    ask();
  }

  Array.prototype.forEach.call(document.querySelectorAll("[data-estimate-url]"), setup);
})();
