#!/usr/bin/env bash
# Load test (issue 6): gunicorn with the production settings (DEBUG=0, Redis cache) serving the 1M-retweet
# workspace `bench-1m` (load it first with `make bench-web`), driven from this machine over loopback.
#
#   scripts/with_services.py -- benchmarks/load/run_load.sh          (about 4 minutes; needs wrk and locust)
#
# 1. analysts: 50 Locust users for 60 s, each opening a page, reading it 1-5 s, opening the next (the model is in
#    benchmarks/load/locustfile.py), after every page was opened once (the read cache is warm, as between
#    computes). Per page p50/p95/p99 and failures: the issue's target is read here.
# 2. analysts-after-compute: the first minute after a compute run: the same web processes (they served case 1), a
#    compute run finishes (over the busiest publisher's LOAD_RECOMPUTE_TWEETS newest tweets: any run bumps the data
#    version, so every cached read is of an old version, and its worker warms the pages opened first before it
#    marks the run done and the rest right after, monitor/services/warmup.py), and the 50 analysts arrive at once
#    the moment the run shows done. Its log: after-compute-run.txt.
# 3. analysts-quiet: the first minute after a quiet spell: nobody asked for anything for LOAD_QUIET_SECONDS (330,
#    past the read cache's old 300 s TTL, under which every page was cold again by then), after the beat task that
#    drops superseded versions ran once (its log: prune.txt).
# 4. analysts-restart: the web processes restarted (a deploy), the cache kept (their per-process snapshots go).
# 5. analysts-cold: the same right after the read cache was emptied and the web processes restarted: a Redis
#    flush or a Redis without persistence restarted, not a compute run (before the warm-up existed, this stood for
#    the first minute after one).
# 6. analysts-nocache: 30 s with the read cache off (SPREADWATCH_READ_CACHE_SECONDS=0): every request does its work.
# 7. capacity: wrk, 50 connections with no think time (each sends its next request the moment the last one
#    answers), 30 s over every page kind, then 10 s per kind: the most this machine serves.
# LOAD_CASES (default "warm after-compute quiet restart cold nocache capacity") picks the cases; `uptime` before each is in
# uptime.txt (the load average says what else ran on the machine).
# Results go to benchmarks/results/load_<date>_<time>/ (LOAD_OUT= to choose): summary.md, Locust CSVs, wrk.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
OUT=${LOAD_OUT:-benchmarks/results/load_$(date +%Y-%m-%d_%H%M)}
mkdir -p "$OUT"
TMP=$(mktemp -d)  # the session cookie and the server log stay out of the results folder
PORT=${LOAD_PORT:-8099}
USERS=${LOAD_USERS:-50}
SECONDS_RUN=${LOAD_SECONDS:-60}
CASES=" ${LOAD_CASES:-warm after-compute quiet restart cold nocache capacity} "
QUIET_SECONDS=${LOAD_QUIET_SECONDS:-330}
RECOMPUTE_TWEETS=${LOAD_RECOMPUTE_TWEETS:-200}
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/spreadwatch}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/14}
export DEBUG=0 ALLOWED_HOSTS=127.0.0.1 SECRET_KEY=${SECRET_KEY:-load-test-secret-key-not-for-production-0123456789abcdef}
export CELERY_TASK_ALWAYS_EAGER=1 LOG_LEVEL=WARNING
unset CELERY_BROKER_URL || true
[[ $CASES != *" capacity "* ]] || command -v wrk >/dev/null || { echo "run_load.sh: wrk is missing (apt-get install wrk)" >&2; exit 2; }
[ -x .venv/bin/locust ] || $PY -m pip install -q -e ".[load]"
$PY manage.py collectstatic --noinput -v0
# the pages, by kind: the overview; rankings over all publishers and for the 10 busiest, each with the variants an
# analyst clicks (aggregate, sort, window, page 2); the 20 top spreaders; 10 cascades (5 of the largest, 5
# mid-sized); the rankings API
$PY manage.py shell -c "
import json
from django.contrib.auth import get_user_model
from django.test import Client
from monitor import selectors
from monitor.models import Workspace, Tweet
ws = Workspace.objects.get(slug='bench-1m')
u = get_user_model().objects.get(username='bench')
c = Client(); c.force_login(u)
open('$TMP/cookie', 'w').write('sessionid=' + c.cookies['sessionid'].value)
pubs = [p['twitter_id'] for p in selectors.publishers_summary(ws, limit=10)]
accs = [r['twitter_id'] for r in selectors.ranking(ws, limit=20).rows]
by_size = Tweet.objects.filter(workspace=ws, n_participants__gt=1).order_by('-n_participants')
n = by_size.count()
tweets = list(by_size.values_list('tweet_id', flat=True)[5:10]) + list(by_size.values_list('tweet_id', flat=True)[n // 100:n // 100 + 5])
variants = ['', '?aggregate=mean', '?sort=cascades', '?window=30d', '?page=2']
kinds = {
  'overview': ['/w/bench-1m/'],
  'ranking': ['/w/bench-1m/ranking/' + v for v in variants],
  'publisher': [f'/w/bench-1m/publishers/{p}/' + v for p in pubs for v in variants],
  'account': [f'/w/bench-1m/accounts/{a}/' for a in accs],
  'cascade': [f'/w/bench-1m/tweets/{t}/explore/' for t in tweets],
  'api-ranking': [f'/api/v1/workspaces/bench-1m/publishers/{p}/ranking/' for p in pubs] + ['/api/v1/workspaces/bench-1m/ranking/'],
}
json.dump(kinds, open('$OUT/pages.json', 'w'), indent=1)
for k, v in kinds.items():
    open(f'$OUT/pages-{k}.txt', 'w').write('\n'.join(v) + '\n')
open('$OUT/pages-all.txt', 'w').write('\n'.join(x for v in kinds.values() for x in v) + '\n')
" 2>/dev/null
export COOKIE="$(cat $TMP/cookie)"
GPID=
serve() {  # (re)start gunicorn with the environment given as arguments; wait until it answers
  [ -n "$GPID" ] && { kill $GPID; wait $GPID 2>/dev/null || true; }
  env "$@" .venv/bin/gunicorn monitor.wsgi:application --bind 127.0.0.1:$PORT --workers ${WEB_CONCURRENCY:-4} \
    --log-level warning >> "$TMP/gunicorn.log" 2>&1 &
  GPID=$!
  for _ in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:$PORT/healthz && return; sleep 0.2; done
  echo "gunicorn did not start:"; tail -20 "$TMP/gunicorn.log"; exit 1
}
trap '[ -n "$GPID" ] && kill $GPID 2>/dev/null; rm -rf "$TMP"' EXIT
warm() {  # every page once, as earlier visits would have left the read cache
  while read -r p; do curl -s -o /dev/null -b "$COOKIE" "http://127.0.0.1:$PORT$p"; done < "$OUT/pages-all.txt"
}
empty_cache() {
  $PY manage.py shell -c "from django.core.cache import cache; cache.clear()" 2>/dev/null
}
analysts() {  # $1: result name, $2: seconds
  echo "$1: $(uptime)" >> "$OUT/uptime.txt"
  PAGES_JSON=$OUT/pages.json .venv/bin/locust -f benchmarks/load/locustfile.py --headless -u $USERS -r 25 \
    -t ${2}s --stop-timeout 10 --host http://127.0.0.1:$PORT --csv "$OUT/$1" --only-summary \
    > "$OUT/$1.log" 2>&1 || true  # locust exits 1 when any request failed: the failures are in the table
}
compute_run() {  # a compute run over the busiest publisher's newest tweets, in this process (eager), to its end
  $PY manage.py shell -c "
import time
from monitor import selectors, services
from monitor.models import ComputeRun, Tweet, Workspace
ws = Workspace.objects.get(slug='bench-1m')
pub = selectors.publishers_summary(ws, limit=1)[0]['twitter_id']
pks = list(Tweet.objects.filter(workspace=ws, author__twitter_id=pub).order_by('-created_at').values_list('pk', flat=True)[:$RECOMPUTE_TWEETS])
t = time.perf_counter()
run = services.compute_run_start(workspace=ws, tweet_pks=pks, backend='cpu')
run.refresh_from_db()
print(f'run {run.pk}: {run.status}, {len(pks)} tweets, {time.perf_counter() - t:.1f} s; warm_s={run.timings.get(\"warm_s\")}; notes={run.notes}', flush=True)
assert run.status == ComputeRun.Status.DONE, run.error
" 2>&1 | grep --line-buffered -v "^WARNING\|^INFO" >> "$OUT/after-compute-run.txt"
}
serve
# the read cache as the last run's warm-up and earlier visits leave it: the run's warm-up stores the all-time sums
# (which the next run's warm-up advances by its recorded change); the web processes' page visits only use their
# own copy of them
sums() {
  $PY manage.py shell -c "
from monitor.models import Workspace
from monitor.selectors.rankings import all_time_sums
all_time_sums(Workspace.objects.get(slug='bench-1m'))
" 2>/dev/null
}
empty_cache; sums; warm
case $CASES in *" warm "*) analysts analysts $SECONDS_RUN ;; esac
if [[ $CASES == *" after-compute "* ]]; then
  echo "compute run: $(uptime)" >> "$OUT/uptime.txt"
  # the analysts arrive the moment the run shows done, while its worker may still warm the pages one click
  # further (monitor/services/warmup.py, part 2, in a thread after the commit); the process ends after that
  : > "$OUT/after-compute-run.txt"
  compute_run &  # the web processes keep running, as they would
  cpid=$!
  until grep -q "^run .*: done" "$OUT/after-compute-run.txt" || ! kill -0 $cpid 2>/dev/null; do sleep 0.1; done
  analysts analysts-after-compute $SECONDS_RUN
  wait $cpid
fi
if [[ $CASES == *" quiet "* ]]; then
  $PY manage.py shell -c "
from monitor.services.warmup import read_cache_prune
print('prune:', read_cache_prune())
" 2>/dev/null >> "$OUT/prune.txt"
  sleep "$QUIET_SECONDS"  # nobody asks for anything
  analysts analysts-quiet $SECONDS_RUN
fi
if [[ $CASES == *" restart "* ]]; then
  serve  # a deploy: fresh processes, the cache kept
  analysts analysts-restart $SECONDS_RUN
fi
if [[ $CASES == *" cold "* ]]; then
  serve  # fresh processes: their snapshots of the all-time sums go too
  empty_cache
  analysts analysts-cold $SECONDS_RUN
fi
if [[ $CASES == *" nocache "* ]]; then
  serve SPREADWATCH_READ_CACHE_SECONDS=0
  analysts analysts-nocache 30
fi
if [[ $CASES == *" capacity "* ]]; then
serve
warm
{
  echo "## all pages together: 50 connections, 30 s, no think time"
  PAGES_FILE=$OUT/pages-all.txt wrk -t2 -c50 -d30s --timeout 10s -s benchmarks/load/pages.lua http://127.0.0.1:$PORT
  for k in overview ranking publisher account cascade api-ranking; do
    echo "## $k: 50 connections, 10 s, no think time"
    PAGES_FILE=$OUT/pages-$k.txt wrk -t2 -c50 -d10s --timeout 10s -s benchmarks/load/pages.lua http://127.0.0.1:$PORT
  done
} > "$OUT/wrk.txt"
fi
$PY benchmarks/load/summarise.py "$OUT" | tee "$OUT/summary.md"
