/* Spreadwatch: the upload page's drop zone and upload progress (progressive enhancement).
   Without JavaScript the form is an ordinary multipart form. With it:
   - files dropped on the zone are added to the <input type=file multiple name=files> (DataTransfer);
   - the chosen files are listed with their sizes;
   - the form is sent with XMLHttpRequest so a progress bar can show the upload; on success the browser
     goes to the page the server redirected to (the new collection), on a form error the returned form
     replaces this one. */
(function () {
  "use strict";

  function fmtSize(n) {
    var units = ["bytes", "KB", "MB", "GB", "TB"];
    var i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }

  function canSetFiles() {
    try { return typeof DataTransfer !== "undefined" && !!new DataTransfer().items; } catch (e) { return false; }
  }

  function init(form) {
    var input = form.querySelector('input[type="file"][name="files"]');
    var zone = form.querySelector("[data-dropzone]");
    var list = form.querySelector("[data-file-list]");
    var status = form.querySelector("[data-upload-status]");
    var bar = form.querySelector("[data-upload-progress]");
    var text = form.querySelector("[data-upload-text]");
    var submit = form.querySelector("[data-upload-submit]");
    if (!input || !zone) return;

    function render() {
      if (!list) return;
      list.textContent = "";
      var total = 0;
      Array.prototype.forEach.call(input.files || [], function (f) {
        total += f.size;
        var li = document.createElement("li");
        var name = document.createElement("span");
        name.textContent = f.name;
        var size = document.createElement("span");
        size.textContent = fmtSize(f.size);
        li.appendChild(name);
        li.appendChild(size);
        list.appendChild(li);
      });
      if (input.files && input.files.length > 1) {
        var li = document.createElement("li");
        li.className = "total";
        li.innerHTML = "<span></span><span></span>";
        li.firstChild.textContent = input.files.length + " files";
        li.lastChild.textContent = fmtSize(total);
        list.appendChild(li);
      }
    }

    input.addEventListener("change", render);

    if (canSetFiles()) {
      zone.classList.add("enhanced");
      var depth = 0;
      zone.addEventListener("dragenter", function (e) { e.preventDefault(); depth += 1; zone.classList.add("dragover"); });
      zone.addEventListener("dragover", function (e) { e.preventDefault(); if (e.dataTransfer) e.dataTransfer.dropEffect = "copy"; });
      zone.addEventListener("dragleave", function () { depth -= 1; if (depth <= 0) { depth = 0; zone.classList.remove("dragover"); } });
      zone.addEventListener("drop", function (e) {
        e.preventDefault();
        depth = 0;
        zone.classList.remove("dragover");
        if (!e.dataTransfer || !e.dataTransfer.files.length) return;
        var dt = new DataTransfer();
        var seen = {};
        function add(f) {
          var key = f.name + "\u0000" + f.size;
          if (seen[key]) return;
          seen[key] = true;
          dt.items.add(f);
        }
        Array.prototype.forEach.call(input.files || [], add);  // keep what was chosen before
        Array.prototype.forEach.call(e.dataTransfer.files, add);
        input.files = dt.files;
        input.dispatchEvent(new Event("change", { bubbles: true }));
      });
    }

    if (!window.XMLHttpRequest || !window.FormData || !status || !bar) return;

    form.addEventListener("submit", function (e) {
      if (!input.files || !input.files.length) return;  // let the server say a file is needed
      e.preventDefault();
      var xhr = new XMLHttpRequest();
      var action = form.action || window.location.href;
      xhr.open("POST", action);
      // the server answers {"redirect": url} instead of a 302, so the "Uploaded" message waits for that page
      xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
      status.hidden = false;
      bar.value = 0;
      bar.max = 100;
      if (text) text.textContent = "Uploading…";
      if (submit) { submit.disabled = true; submit.setAttribute("aria-busy", "true"); }

      xhr.upload.addEventListener("progress", function (ev) {
        if (!ev.lengthComputable) { bar.removeAttribute("value"); return; }
        var p = (100 * ev.loaded) / ev.total;
        bar.value = p;
        if (text) text.textContent = "Uploading… " + Math.floor(p) + " % of " + fmtSize(ev.total);
      });
      xhr.upload.addEventListener("load", function () {
        bar.removeAttribute("value");  // indeterminate while the server stores the files
        if (text) text.textContent = "Uploaded. Storing the files and starting the import…";
      });

      function fail(msg) {
        status.hidden = false;
        bar.value = 0;
        if (text) text.textContent = msg;
        if (submit) { submit.disabled = false; submit.removeAttribute("aria-busy"); }
      }

      xhr.addEventListener("load", function () {
        if (xhr.status === 200 && (xhr.getResponseHeader("Content-Type") || "").indexOf("application/json") === 0) {
          try {
            var target = JSON.parse(xhr.responseText).redirect;
            if (target) { window.location.assign(target); return; }
          } catch (err) { /* not our JSON: fall through */ }
        }
        var final = xhr.responseURL || "";
        var redirected = final && final.split("#")[0] !== new URL(action, window.location.href).href;
        if (xhr.status >= 200 && xhr.status < 300 && redirected) {
          window.location.assign(final);  // the new collection's page
          return;
        }
        if (xhr.status >= 200 && xhr.status < 500 && xhr.responseText) {
          // the form came back with errors: show it in place of this one
          var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
          var fresh = doc.querySelector("form[data-upload-form]");
          if (fresh) {
            var main = doc.querySelector("main");
            var msgs = main && main.querySelector(".messages");
            var old = document.querySelector("main .messages");
            if (old) old.remove();
            if (msgs) document.querySelector("main").prepend(document.importNode(msgs, true));
            var node = document.importNode(fresh, true);
            form.replaceWith(node);
            init(node);
            var err = node.querySelector(".errorlist, .form-errors");
            if (err) err.scrollIntoView({ block: "center" });
            return;
          }
        }
        fail("The upload failed (HTTP " + xhr.status + "). Try again, or reload the page.");
      });
      xhr.addEventListener("error", function () { fail("The upload was interrupted: check the connection and try again."); });
      xhr.addEventListener("abort", function () { fail("The upload was cancelled."); });
      xhr.send(new FormData(form));
    });
  }

  var form = document.querySelector("form[data-upload-form]");
  if (form) init(form);
})();
