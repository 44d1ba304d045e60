"""Time to the first frame of the Network pages' graph drawings, three ways (benchmarks/drawing.md).

Headless Chromium (Debian's, through Playwright) opens each graph at 1440 px and times navigation start to the
first frame with every node drawn at a readable place:

* ``server``: the product. The page as Spreadwatch serves it: positions from ``compute.drawing.force_layout``
  (cached per graph) in the data island, sigma.js draws them with WebGL; ``network.js`` marks
  ``graph-first-frame`` once sigma has drawn. Run ``--repeat`` times: the first load computes the layout (when
  no earlier load of that graph did), the others find it cached.
* ``worker``: the same data island in a page of its own, laid out in the browser by graphology's ForceAtlas2 in
  a web worker (``FA2Layout`` from graphology-library 0.8.0, its settings inferred by the library: Barnes-Hut
  above 2,000 nodes), sigma drawing once the worker has run ``--fa2-iterations`` iterations.
* ``worker-live``: the same, with sigma drawing all along (the library's usual use: the picture moves while it
  settles); its first readable frame is the one after those iterations (the random start drawn before it is
  not a picture of the graph).
* ``cytoscape``: the same data in a page that does what the Network pages did before: cytoscape 3.34.4 with its
  ``cose`` layout on the main thread (same parameters), drawn on canvas when the layout returns.

The ``worker`` and ``cytoscape`` pages are served from a local directory (no Django in their time), so the
comparison favours them by the server's response time, which the ``server`` row reports separately.

Run against a running demo (``make demo``; a network run of the generated collection's follower graph is not
needed for a neighbourhood)::

    python benchmarks/drawing_bench.py --base http://127.0.0.1:8000 --user analyst --password ... \\
        --path /w/generated/accounts/3715671895/neighbourhood/ \\
        --path /w/generated/accounts/918957771322640673/neighbourhood/ \\
        --fa2-lib graphology-library.min.js --cytoscape-lib cytoscape.min.js --repeat 3

``--fa2-lib`` is graphology-library's ``dist/graphology-library.min.js`` (``npm pack graphology-library@0.8.0``)
and ``--cytoscape-lib`` cytoscape's ``dist/cytoscape.min.js`` (``npm pack cytoscape@3.34.4``, what the pages
carried until issue 40); neither is part of the product, so the repository does not carry them.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import statistics
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "frontend" / "static" / "frontend" / "vendor"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu"]  # as the browser tests: SwiftShader's WebGL, no GPU

WORKER_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>#g{width:100%%;height:62vh}</style></head>
<body><div id="g"></div><script id="data" type="application/json">%(data)s</script>
<script src="graphology.umd.min.js"></script><script src="sigma.min.js"></script>
<script src="graphology-library.min.js"></script>
<script>
var data = JSON.parse(document.getElementById("data").textContent), K = %(iterations)d;
var g = new graphology.Graph({type: "directed", multi: false, allowSelfLoops: false}), seed = 1;
function rnd() { seed = (seed * 16807) %% 2147483647; return seed / 2147483647; }
data.nodes.forEach(function (n) {
  g.addNode(String(n.id), {x: rnd() * 100, y: rnd() * 100, size: 3, color: "#e67e22", label: n.name});
});
data.edges.forEach(function (e) {
  var s = String(e[0]), d = String(e[1]);
  if (s !== d && !g.hasEdge(s, d)) g.addEdge(s, d, {size: 0.6, color: "#b8c2cc"});
});
var live = %(live)s, r = null;
function draw() { r = new Sigma(g, document.getElementById("g"), {labelRenderedSizeThreshold: Infinity}); }
if (live) { draw(); performance.mark("random-frame"); }
var settings = graphologyLibrary.layoutForceAtlas2.inferSettings(g);
var layout = new graphologyLibrary.FA2Layout(g, {settings: settings}), done = 0;
layout.worker.addEventListener("message", function () {
  done += 1;
  if (done === K) {
    layout.kill();
    if (r) r.refresh(); else draw();  // a synchronous render of the positions after K iterations
    performance.mark("graph-first-frame");
  }
});
layout.start();
</script></body></html>
"""

CYTOSCAPE_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>#g{width:100%%;height:62vh}</style></head>
<body><div id="g"></div><script id="data" type="application/json">%(data)s</script>
<script src="cytoscape.min.js"></script>
<script>
var data = JSON.parse(document.getElementById("data").textContent);
var elements = data.nodes.map(function (n) { return {data: {id: "n" + n.id, label: n.name}}; });
data.edges.forEach(function (e, i) { elements.push({data: {id: "e" + i, source: "n" + e[0], target: "n" + e[1]}}); });
var cy = cytoscape({container: document.getElementById("g"), elements: elements,
  style: [{selector: "node", style: {label: "data(label)", "font-size": 9, width: 12, height: 12}},
          {selector: "edge", style: {width: 1, "curve-style": "bezier", "target-arrow-shape": "triangle"}}],
  layout: {name: "cose", animate: false, randomize: false, nodeRepulsion: function () { return 6000; },
           idealEdgeLength: function () { return 50; }, numIter: 1000, fit: true, padding: 20}});
// cose without animation runs inside the constructor; the canvas is painted on the next animation frame
requestAnimationFrame(function () { performance.mark("graph-first-frame"); });
</script></body></html>
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _first_frame(page, url: str, timeout_ms: int) -> dict:
    """Navigation start to the ``graph-first-frame`` mark (and to the response's end), in ms; a page that has
    not drawn within ``timeout_ms`` gives ``frame: None`` (reported as more than the timeout)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(url, wait_until="commit")
    try:
        page.wait_for_function("performance.getEntriesByName('graph-first-frame').length > 0", timeout=timeout_ms)
    except PlaywrightTimeout:
        return {"frame": None, "random": None, "response": 0.0, "timeout_ms": timeout_ms}
    return page.evaluate(
        """() => { const nav = performance.getEntriesByType('navigation')[0];
        const mark = n => { const m = performance.getEntriesByName(n); return m.length ? m[0].startTime : null; };
        return { frame: mark('graph-first-frame'), random: mark('random-frame'), response: nav.responseEnd }; }"""
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="http://127.0.0.1:8000")
    ap.add_argument("--user", default="analyst")
    ap.add_argument("--password", required=True)
    ap.add_argument("--path", action="append", required=True, help="a page with a drawing (repeatable)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--width", type=int, default=1440)
    ap.add_argument("--fa2-lib", type=Path, help="graphology-library.min.js (0.8.0); without it: no 'worker' row")
    ap.add_argument("--fa2-iterations", type=int, default=300)
    ap.add_argument("--cytoscape-lib", type=Path, help="cytoscape.min.js (3.34.4); without it: no 'cytoscape' row")
    ap.add_argument("--timeout", type=int, default=120, help="seconds a page may take to its first frame")
    ap.add_argument("--skip", action="append", default=[], help="a candidate not to run (worker-live)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--json", type=Path, help="write the timings here too")
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    site = Path(tempfile.mkdtemp(prefix="drawing-bench-"))
    for name in ("graphology.umd.min.js", "sigma.min.js"):
        shutil.copy(VENDOR / name, site / name)
    if args.cytoscape_lib:
        shutil.copy(args.cytoscape_lib, site / "cytoscape.min.js")
    if args.fa2_lib:
        shutil.copy(args.fa2_lib, site / "graphology-library.min.js")
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    local = f"http://127.0.0.1:{httpd.server_address[1]}"

    results = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, headless=True)
        ctx = browser.new_context(viewport={"width": args.width, "height": 900})
        page = ctx.new_page()
        page.on("pageerror", lambda exc: print(f"JavaScript error on {page.url}: {exc}"))
        page.goto(args.base + "/login/")
        page.get_by_label("Username").fill(args.user)
        page.get_by_label("Password").fill(args.password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        for i, path in enumerate(args.path):
            runs = [_first_frame(page, args.base + path, 60_000) for _ in range(args.repeat)]
            data = page.evaluate("document.getElementById('network-graph').textContent")
            n, m = len(json.loads(data)["nodes"]), len(json.loads(data)["edges"])
            row = {"path": path, "nodes": n, "edges": m, "server": runs}
            safe = data.replace("</", "<\\/")
            for live in (False, True):
                page_data = {"data": safe, "iterations": args.fa2_iterations, "live": "true" if live else "false"}
                (site / f"w{i}{'live' if live else ''}.html").write_text(WORKER_PAGE % page_data)
            (site / f"c{i}.html").write_text(CYTOSCAPE_PAGE % {"data": safe})
            wait = args.timeout * 1000
            if args.fa2_lib:
                row["worker"] = [_first_frame(page, f"{local}/w{i}.html", wait) for _ in range(args.repeat)]
                if "worker-live" not in args.skip:
                    row["worker-live"] = [
                        _first_frame(page, f"{local}/w{i}live.html", wait) for _ in range(args.repeat)
                    ]
            if args.cytoscape_lib:
                row["cytoscape"] = [_first_frame(page, f"{local}/c{i}.html", wait) for _ in range(args.repeat)]
            results.append(row)
            _report(row)
        browser.close()
    httpd.shutdown()
    shutil.rmtree(site, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _report(row: dict) -> None:
    print(f"{row['path']}: {row['nodes']:,} nodes, {row['edges']:,} edges")
    for name in ("server", "worker", "worker-live", "cytoscape"):
        runs = row.get(name)
        if not runs:
            continue
        frames = [r["frame"] for r in runs if r["frame"] is not None]
        if not frames:
            print(f"  {name:11s} no first frame within {runs[0]['timeout_ms'] / 1000:.0f} s ({len(runs)} tries)")
            continue
        line = (
            f"  {name:11s} first frame: first load {runs[0]['frame'] or float('nan'):6.0f} ms,"
            f" median {statistics.median(frames):6.0f} ms ({min(frames):.0f}-{max(frames):.0f}, {len(frames)} of"
            f" {len(runs)} drawn); response end median {statistics.median(r['response'] for r in runs):.0f} ms"
        )
        if runs[0]["random"] is not None:
            line += f"; the random start drawn at {statistics.median(r['random'] for r in runs):.0f} ms"
        print(line)


if __name__ == "__main__":
    raise SystemExit(main())
