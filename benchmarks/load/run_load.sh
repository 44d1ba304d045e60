#!/usr/bin/env bash
# Load test (issue 6): gunicorn with production settings on the 1M-retweet workspace `bench-1m` (load it first
# with `make bench-web`), driven by wrk from this machine over loopback: 50 connections for 60 s over every page
# kind together, then 15 s per page kind for the breakdown. Writes results to benchmarks/results/load_<date>/.
#
#   scripts/with_services.py -- benchmarks/load/run_load.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
OUT=benchmarks/results/load_$(date +%Y-%m-%d)
mkdir -p "$OUT"
TMP=$(mktemp -d)  # the session cookie and the server log stay out of the results folder
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/spreadwatch}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/14}
export DEBUG=0 ALLOWED_HOSTS=127.0.0.1 SECRET_KEY=${SECRET_KEY:-load-test-secret-key-not-for-production-0123456789abcdef}
export CELERY_TASK_ALWAYS_EAGER=1 LOG_LEVEL=WARNING
unset CELERY_BROKER_URL || true
$PY manage.py collectstatic --noinput -v0
# the pages: overview, the 10 busiest publishers, their top accounts, a few cascades, the rankings API
$PY manage.py shell -c "
from django.contrib.auth import get_user_model
from django.test import Client
from monitor import selectors
from monitor.models import Workspace, Tweet
ws = Workspace.objects.get(slug='bench-1m')
u = get_user_model().objects.get(username='bench')
c = Client(); c.force_login(u)
open('$TMP/cookie', 'w').write('sessionid=' + c.cookies['sessionid'].value)
pubs = [p['twitter_id'] for p in selectors.publishers_summary(ws, limit=10)]
accs = [r['twitter_id'] for r in selectors.ranking(ws, limit=10).rows]
tweets = list(Tweet.objects.filter(workspace=ws).order_by('-n_participants').values_list('tweet_id', flat=True)[5:10])
kinds = {
  'overview': ['/w/bench-1m/'],
  'publisher': [f'/w/bench-1m/publishers/{p}/' for p in pubs],
  'account': [f'/w/bench-1m/accounts/{a}/' for a in accs],
  'cascade': [f'/w/bench-1m/tweets/{t}/explore/' for t in tweets],
  'api-ranking': [f'/api/v1/workspaces/bench-1m/publishers/{p}/ranking/' for p in pubs] + ['/api/v1/workspaces/bench-1m/ranking/'],
}
for k, v in kinds.items():
    open(f'$OUT/pages-{k}.txt', 'w').write('\n'.join(v) + '\n')
open('$OUT/pages-all.txt', 'w').write('\n'.join(x for v in kinds.values() for x in v) + '\n')
" 2>/dev/null
.venv/bin/gunicorn monitor.wsgi:application --bind 127.0.0.1:8099 --workers ${WEB_CONCURRENCY:-4} --log-level warning \
  > "$TMP/gunicorn.log" 2>&1 &
GPID=$!
trap 'kill $GPID 2>/dev/null || true; rm -rf "$TMP"' EXIT
sleep 4
# warm: every page once (fills the read cache as a first visit would)
while read -r p; do curl -s -o /dev/null -b "$(cat $TMP/cookie)" "http://127.0.0.1:8099$p"; done < "$OUT/pages-all.txt"
export COOKIE="$(cat $TMP/cookie)"
{
  echo "## all pages together: 50 connections, 60 s"
  PAGES_FILE=$OUT/pages-all.txt wrk -t2 -c50 -d60s --timeout 10s -s benchmarks/load/pages.lua http://127.0.0.1:8099
  for k in overview publisher account cascade api-ranking; do
    echo "## $k: 50 connections, 15 s"
    PAGES_FILE=$OUT/pages-$k.txt wrk -t2 -c50 -d15s --timeout 10s -s benchmarks/load/pages.lua http://127.0.0.1:8099
  done
} | tee "$OUT/wrk.txt"
