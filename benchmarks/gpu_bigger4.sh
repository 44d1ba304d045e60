#!/bin/sh
# The bigger4-sized collection (the twitter preset at scale 1.0 with its whole follower graph: 3.68M retweets,
# 341.7M follows, 10.8 GB of files) through the product on the GPU machine, with a GPU worker, then the same
# compute again on the GPU and on the machine's CPU cores (web_bench.py --rerun-backends). Generating the files and
# the run together outlast one device command (600 s), so this is three commands on one warm machine, each called
# with `carry: [".debs", ".whl"]` (benchmarks/gpu_stack.sh says how the two folders are filled):
#
#   sh benchmarks/gpu_bigger4.sh prepare      # the stack, the files (~3 min), the kernels compiled
#   sh benchmarks/gpu_bigger4.sh start 580    # the run, in a session of its own; waits up to 580 s for it
#                                             # (RERUN=gpu: the re-run on the GPU only, ~90 s less device time)
#   sh benchmarks/gpu_bigger4.sh wait 580     # waits again; the run's JSON and log go to $OUT when it ends
#
# The next command must come within the machine's idle time (30 s) or the machine, and the run, are gone.
# SCALE=0.5 (each of the three) runs the preset at that scale instead: about half the files, the run and the
# device time.
set -eu
cd "$(dirname "$0")/.."
mkdir -p var
OUT=${OUT:-var}
log=var/bigger4_gpu.log
json=var/bigger4_gpu.json
SCALE=${SCALE:-1.0}
data=var/bigger4
[ "$SCALE" = "1.0" ] || data=var/fullgraph_$SCALE

wait_for_run() {
  n=0
  while [ ! -f var/bigger4_gpu.rc ] && [ "$n" -lt "$1" ]; do sleep 5; n=$((n + 5)); done
  df -h . /tmp | tail -2
  tail -5 "$log"
  if [ -f var/bigger4_gpu.rc ]; then
    echo "bigger4 run ended, rc $(cat var/bigger4_gpu.rc)"
    cp "$log" "$OUT/" 2>/dev/null || true
    cp "$json" "$OUT/" 2>/dev/null || true
  else
    echo "bigger4 run still going after $1 s"
  fi
}

case "${1:-}" in
prepare)
  nproc; free -g | head -2; df -h . /tmp /dev/shm
  sh benchmarks/gpu_stack.sh true
  PYTHONPATH=. python3 -m compute.precompile >var/precompile.log 2>&1 &
  t=$(date +%s)
  python3 -c "import sys; sys.path.insert(0, 'benchmarks'); from pathlib import Path
from _setup import full_graph_collection
full_graph_collection(Path('$data'), $SCALE)"
  echo "files generated in $(($(date +%s) - t)) s"; du -sh $data
  wait; tail -2 var/precompile.log; df -h .
  ;;
start)
  rm -f var/bigger4_gpu.rc
  export SPREADWATCH_BACKEND=gpu SPREADWATCH_UPLOAD_MAX_BYTES=17179869184 PYTHONUNBUFFERED=1
  setsid sh -c "sh benchmarks/gpu_stack.sh python3 scripts/with_services.py -- python3 benchmarks/web_bench.py \
    --full-graph-scale $SCALE --data $data --requests 20 --rerun-backends ${RERUN-gpu,cpu} --json $json; \
    echo \$? >var/bigger4_gpu.rc" >"$log" 2>&1 </dev/null &
  wait_for_run "${2:-580}"
  ;;
wait)
  wait_for_run "${2:-580}"
  ;;
*)
  echo "usage: $0 prepare | start [seconds] | wait [seconds]" >&2
  exit 2
  ;;
esac
