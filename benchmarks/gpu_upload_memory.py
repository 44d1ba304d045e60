"""What a GPU worker's first batch adds to its process's memory: the CUDA context, then the follower graph's
upload from its memory-mapped file (monitor/graph_files.py maps it), by kind of page (RssAnon, RssShmem, RssFile:
compute.memory.private_bytes counts the first two). A synthetic graph file of ``--edges`` 32-bit indices.

    python3 benchmarks/gpu_upload_memory.py --edges 300000000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def kinds() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("RssAnon", "RssShmem", "RssFile")):
            k, v = line.split(":")
            out[k] = int(v.split()[0]) // 1024  # MiB
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edges", type=int, default=300_000_000)
    ap.add_argument("--users", type=int, default=5_000_000)
    args = ap.parse_args()
    from compute.memory import private_bytes
    from compute.structures import FollowerGraph

    steps = {"start": kinds()}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "indices.bin"
        rng = np.random.default_rng(1)
        with open(path, "wb") as fh:
            for a in range(0, args.edges, 50_000_000):
                fh.write(rng.integers(0, args.users, min(50_000_000, args.edges - a), dtype=np.int32).tobytes())
        indices = np.memmap(path, dtype=np.int32, mode="r")
        indptr = np.linspace(0, args.edges, args.users + 1).astype(np.int64)
        graph = FollowerGraph(np.arange(args.users, dtype=np.int64), indptr, indices)
        steps["file written, mapped"] = kinds()
        import cupy as cp

        cp.zeros(1)
        steps["CUDA context"] = kinds()
        p0, a0 = private_bytes(), private_bytes(shared=False)
        from compute.gpu.forward import DeviceGraph

        dg = DeviceGraph(graph)
        cp.cuda.Device().synchronize()
        steps["graph uploaded"] = kinds()
        steps["private_bytes grown by the upload, MiB"] = (private_bytes() - p0) // 2**20
        # what a GPU worker's memory ceiling counts (monitor/services/runs._ceiling: shared pages left out)
        steps["private_bytes(shared=False) grown by the upload, MiB"] = (private_bytes(shared=False) - a0) // 2**20
        del dg
    print(json.dumps(steps, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
