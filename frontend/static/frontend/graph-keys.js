/* The keyboard of the WebGL graph drawings (the cascade explorer, the Network pages): with the drawing focused,
   the arrows pan, + and - zoom, 0 fits it all again. window.spreadwatchGraphKeys(element, renderer) wires it up
   for one sigma.js renderer. */
(function () {
  "use strict";
  window.spreadwatchGraphKeys = function (element, renderer) {
    element.addEventListener("keydown", function (ev) {
      var cam = renderer.getCamera(), state = cam.getState(), step = 0.08 * state.ratio;
      var moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
      if (moves[ev.key]) { cam.setState({ x: state.x + moves[ev.key][0], y: state.y + moves[ev.key][1] }); ev.preventDefault(); }
      else if (ev.key === "+" || ev.key === "=") { cam.animatedZoom({ duration: 150 }); ev.preventDefault(); }
      else if (ev.key === "-") { cam.animatedUnzoom({ duration: 150 }); ev.preventDefault(); }
      else if (ev.key === "0") { cam.animatedReset({ duration: 150 }); ev.preventDefault(); }
    });
  };
})();
