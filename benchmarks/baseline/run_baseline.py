"""Run the sequential C baseline of the backward phase (thesis Algorithm 2) on a spreading-graph archive.

    python benchmarks/baseline/run_baseline.py ARCHIVE.npz [--repeat K] [--json] [--out INFLUENCE.f64] [--prebuilt]

Exports the archive's arrays as raw little-endian files into a temporary directory (not timed), compiles
``backward_queue.c`` with ``gcc -O3 -march=native`` into a cache directory under /tmp (keyed by the source's
hash and the compiler command), runs it and prints one line: a table row, or JSON with ``--json``.
``--out`` keeps the influence array (float64[N], raw; ``np.fromfile(path)``) for cross-checking.
``--prebuilt`` times only the traversal (steps 3-4), with every cascade's degrees and CSR built before the
timer, as the thesis did; the default times the whole computation from the archive's arrays.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "backward_queue.c"
CFLAGS = ["-O3", "-march=native"]
MAGIC = 0x42514241534C4E31  # must match backward_queue.c
CACHE = Path(tempfile.gettempdir()) / "spreadwatch-baseline"

sys.path.insert(0, str(HERE.parents[1]))  # the repository root, for compute.structures


def build(cc: str = "gcc") -> Path:
    """Compile backward_queue.c (cached by source hash and flags); return the executable's path."""
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join([cc, *CFLAGS]).encode()).hexdigest()[:16]
    exe = CACHE / f"backward_queue-{key}"
    if not exe.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_name(exe.name + f".{os.getpid()}.tmp")
        subprocess.run([cc, *CFLAGS, "-o", str(tmp), str(SOURCE)], check=True)
        os.replace(tmp, exe)
    return exe


def export(archive: str | os.PathLike, outdir: Path) -> dict:
    """Write the raw arrays backward_queue.c reads; return the sizes."""
    from compute.structures import load_archive

    g = load_archive(archive)
    c = g.cascades
    t, n, m = g.n_cascades, g.n_nodes, g.n_edges
    if n >= 2**31 - 1:
        raise SystemExit(f"{archive}: {n} nodes; the baseline stores node indices as int32 (N < 2^31)")
    le = {"i8": np.dtype("<i8"), "f8": np.dtype("<f8"), "i4": np.dtype("<i4")}
    np.array([MAGIC, t, n, m], dtype=le["i8"]).tofile(outdir / "meta.bin")
    c.node_offsets.astype(le["i8"], copy=False).tofile(outdir / "node_offsets.bin")
    c.followers.astype(le["f8"], copy=False).tofile(outdir / "followers.bin")
    c.publisher.astype(le["i8"], copy=False).tofile(outdir / "publisher.bin")
    g.edge_offsets.astype(le["i8"], copy=False).tofile(outdir / "edge_offsets.bin")
    g.edge_src.astype(le["i4"], copy=False).tofile(outdir / "edge_src.bin")
    g.edge_dst.astype(le["i4"], copy=False).tofile(outdir / "edge_dst.bin")
    return {"n_cascades": t, "n_nodes": n, "n_edges": m}


def run(
    archive: str | os.PathLike, repeat: int = 21, out: str | None = None, cc: str = "gcc", prebuilt: bool = False
) -> dict:
    """Export, build, run; return the C program's RESULT record (plus the machine it ran on)."""
    exe = build(cc)
    with tempfile.TemporaryDirectory(prefix="spreadwatch-baseline-") as d:
        export(archive, Path(d))
        cmd = [str(exe), d, "--repeat", str(repeat)]
        if out:
            cmd += ["--out", str(out)]
        if prebuilt:
            cmd.append("--prebuilt")
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        raise RuntimeError(f"no RESULT line from {exe}:\n{proc.stdout}\n{proc.stderr}")
    res = json.loads(lines[-1][len("RESULT ") :])
    res["archive"] = str(archive)
    res["compiler"] = " ".join([cc, *CFLAGS])
    res["cpu"] = _cpu_name()
    return res


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("archive", help="spreading-graph archive (.npz, docs/formats.md)")
    p.add_argument("--repeat", type=int, default=21, help="runs of the whole computation (default 21)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument("--out", help="write the influence array (raw float64[N]) here")
    p.add_argument(
        "--prebuilt",
        action="store_true",
        help="build every cascade's CSR before timing; time only the traversal (thesis method)",
    )
    p.add_argument("--cc", default=os.environ.get("CC", "gcc"), help="C compiler (default gcc)")
    a = p.parse_args(argv)
    if shutil.which(a.cc) is None:
        raise SystemExit(f"compiler {a.cc!r} not found")
    res = run(a.archive, a.repeat, a.out, a.cc, a.prebuilt)
    if a.json:
        print(json.dumps(res))
    else:
        print(
            f"[{res['mode']}] cascades {res['n_cascades']}  nodes {res['n_nodes']}  edges {res['n_edges']}  "
            f"median {res['median_s'] * 1e3:.6g} ms  min {res['min_s'] * 1e3:.6g} ms  "
            f"{res['edges_per_s']:.4g} edges/s  sum(I) {res['sum_influence']:.17g}  "
            f"sum(I[pub]) {res['sum_publisher_influence']:.17g}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
