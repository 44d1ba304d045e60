import os, time, statistics, json
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
import django; django.setup()
from django.conf import settings
settings.ALLOWED_HOSTS = ["*"]
from django.contrib.auth import get_user_model
from django.test import Client
from monitor import selectors
from monitor.models import Workspace, Tweet
ws = Workspace.objects.get(slug='bench-1m')
u = get_user_model().objects.get(username='bench')
c = Client(); c.force_login(u)
pubs = [p['twitter_id'] for p in selectors.publishers_summary(ws, limit=10)]
accs = [r['twitter_id'] for r in selectors.ranking(ws, limit=20).rows]
by_size = Tweet.objects.filter(workspace=ws, n_participants__gt=1).order_by('-n_participants')
n = by_size.count()
tweets = list(by_size.values_list('tweet_id', flat=True)[5:10]) + list(by_size.values_list('tweet_id', flat=True)[n // 100:n // 100 + 5])
kinds = {
  'overview': ['/w/bench-1m/'],
  'ranking': ['/w/bench-1m/ranking/'],
  'publisher': [f'/w/bench-1m/publishers/{p}/' for p in pubs[:3]],
  'account': [f'/w/bench-1m/accounts/{a}/' for a in accs[:3]],
  'cascade': [f'/w/bench-1m/tweets/{t}/explore/' for t in tweets],
  'api-ranking': [f'/api/v1/workspaces/bench-1m/publishers/{p}/ranking/' for p in pubs[:3]] + ['/api/v1/workspaces/bench-1m/ranking/'],
}
for k, urls in kinds.items():
    for url in urls:
        r = c.get(url); assert r.status_code == 200, (url, r.status_code)
        ts = []
        for _ in range(5):
            t = time.perf_counter(); r = c.get(url); ts.append(1000 * (time.perf_counter() - t))
        print(f"{k:12s} {statistics.median(ts):7.1f} ms  {len(r.content)/1024:8.0f} KiB  {url}")
