"""IMGPU's bottom-up traversal (issue 16) on one engine: K = 50 seeds from R = 200 live-edge snapshots at
p = 0.01 on the generated graphs of the paper's sizes, timed, with the seeds and gains saved or compared.

    python benchmarks/influence_max_imgpu_bench.py --backend cpu --save results/imgpu_cpu.json
    python benchmarks/influence_max_imgpu_bench.py --backend gpu --reference results/imgpu_cpu.json [--repeat 2]

[--graphs nethept,netphy,amazon] [--k 50] [--p 0.01] [--snapshots 200]. With --reference, each graph's GPU
seeds and gains are compared with the CPU's (same snapshots, so they must be equal). Times are wall-clock
around the whole call (the GPU's is synchronised: every round ends in a host read of the pick); the graph upload
is timed apart. Prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compute.algorithms.influence_max as im
from compute.generators.im_graphs import paper_graph


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="nethept,netphy,amazon")
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--p", type=float, default=0.01)
    ap.add_argument("--snapshots", type=int, default=200)
    ap.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--save", default="")
    ap.add_argument("--reference", default="")
    args = ap.parse_args()
    ref = json.loads(Path(args.reference).read_text()) if args.reference else {}
    saved = {}
    for name in args.graphs.split(","):
        g = paper_graph(name, seed=0)
        model = im.ic_model(g, p=args.p)
        upload = None
        if args.backend == "gpu":
            import cupy as cp

            from compute.gpu.influence_max import device_model

            t = time.perf_counter()
            device_model(model)
            cp.cuda.Device().synchronize()
            upload = round(time.perf_counter() - t, 4)
        for rep in range(args.repeat):
            t = time.perf_counter()
            res = im.influence_max(model, k=args.k, method="imgpu", snapshots=args.snapshots, seed=0,
                                   backend=args.backend)  # fmt: skip
            secs = time.perf_counter() - t
            row = {"graph": name, "n": g.n_nodes, "m": g.n_edges, "backend": res.backend, "run": rep,
                   "seconds": round(secs, 3), "upload_seconds": upload, "estimate": round(res.estimate, 4),
                   "notes": res.notes}  # fmt: skip
            if name in ref:
                row["same_seeds_as_reference"] = res.nodes.tolist() == ref[name]["nodes"]
                row["same_gains_as_reference"] = bool(np.array_equal(res.gains, np.asarray(ref[name]["gains"])))
                row["reference_seconds"] = ref[name]["seconds"]
            print(json.dumps(row), flush=True)
        saved[name] = {"nodes": res.nodes.tolist(), "gains": res.gains.tolist(), "seconds": round(secs, 3)}
    if args.save:
        Path(args.save).write_text(json.dumps(saved))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
