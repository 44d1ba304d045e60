import os, time, json, logging, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
import django; django.setup()
from django.conf import settings
settings.ALLOWED_HOSTS = ["*"]
from django.contrib.auth import get_user_model
from django.test import Client
from monitor import selectors, services
from monitor.models import Workspace, Tweet
builds = []
class H(logging.Handler):
    def emit(self, r): builds.append(r.getMessage())
lg = logging.getLogger("monitor.cache"); lg.setLevel(logging.DEBUG); lg.addHandler(H()); lg.propagate = False
ws = Workspace.objects.get(slug='bench-1m')
u = get_user_model().objects.get(username='bench')
c = Client(); c.force_login(u)
pages = json.load(open(sys.argv[1]))
if len(sys.argv) > 2:
    pub = selectors.publishers_summary(ws, limit=1)[0]['twitter_id']
    pks = list(Tweet.objects.filter(workspace=ws, author__twitter_id=pub).order_by('-created_at').values_list('pk', flat=True)[:200])
    t = time.perf_counter()
    run = services.compute_run_start(workspace=ws, tweet_pks=pks, backend='cpu'); run.refresh_from_db()
    print("run", run.status, round(time.perf_counter()-t,1), run.timings.get("warm_s"), run.notes, flush=True)
    builds.clear()
for kind, urls in pages.items():
    for url in urls:
        b0 = len(builds); t = time.perf_counter(); r = c.get(url); ms = 1000*(time.perf_counter()-t)
        if builds[b0:] or ms > 100:
            print(f"{kind:12s} {ms:7.0f} ms {url} {builds[b0:]}")
print("total builds", len(builds))
