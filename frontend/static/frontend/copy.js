// "Copy" buttons next to a read-only field holding a secret shown once (an API key, an invitation link):
// data-copy names the field. The Clipboard API where the page is a secure context, else select + execCommand.
(function () {
  document.querySelectorAll("button.copy[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var field = document.getElementById(btn.dataset.copy);
      if (!field) return;
      function done(ok) {
        btn.textContent = ok ? "Copied" : "Select and copy";
        btn.setAttribute("aria-live", "polite");
      }
      field.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(function () { done(true); }, function () { done(false); });
      } else {
        var ok = false;
        try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
        done(ok);
      }
    });
  });
})();
