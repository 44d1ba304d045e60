"""Zero unauthorised reads: every URL pattern of the project, filled with workspace A's objects, is requested
by bob (workspace B) and by an anonymous client.

* bob gets **404** for every object of A (never 200, never 403: ids don't leak), with every method (a 405 is
  allowed: it says nothing about the object), and A's ids in B's own URLs are missing too; the URLs with no
  object (his workspace list) don't list A.
* anonymous: every page redirects to the login page, every API URL answers 401/403, every admin URL redirects
  to the admin's login, except the public URLs of :data:`PUBLIC` (each with its reason).

A new URL pattern fails :func:`test_every_url_pattern_is_covered` until it is added to :data:`FILL` (how to
fill it) or :data:`PUBLIC` (why anyone may open it).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from frontend.views.alerts import RULE_ACTIONS
from monitor.alerts.models import Alert, AlertRule
from monitor.models import Collection, ComputeRun, Invitation, Membership

from .helpers import A_MARKERS, Objects, walk

# name -> (kwargs list from A's objects). Every parameter but ``ws`` and the formats/actions is an object of A.
TABLE = ("csv", "json")
GRAPH = ("gexf", "graphml")


def _ws(o):
    return {"ws": o.ws.slug}


def _notice(o) -> int:
    """A notice of alice's in workspace A."""
    from monitor.models import Notice

    return Notice.objects.create(workspace=o.ws, user=o.rule.owner, message="Newsroom run failed").pk


def _stream_token(o) -> int:
    """A stream token of workspace A."""
    from monitor.services.stream import stream_token_create

    return stream_token_create(workspace=o.ws, name="Newsroom firehose")[0].pk


def _token(o) -> int:
    """An API token of alice's."""
    from monitor.services import api_token_create

    return api_token_create(user=o.rule.owner, name="Newsroom feed")[0].pk


def _member(o) -> int:
    """alice's membership of workspace A."""
    from monitor.models import Membership

    return Membership.objects.get(workspace=o.ws, user=o.rule.owner).pk


def _claim(o) -> int:
    """A claim of workspace A (alice's): one per workspace, whichever URL asks first."""
    from monitor.models import Claim
    from monitor.services import claim_create

    found = Claim.objects.filter(workspace=o.ws, name="Newsroom claim").first()
    return (found or claim_create(workspace=o.ws, user=o.rule.owner, name="Newsroom claim", query="newsroom")).pk


def _invitation(o) -> int:
    """A pending invitation to workspace A (made by its owner, alice)."""
    import secrets

    from monitor.models import Invitation

    return Invitation.objects.create(
        workspace=o.ws,
        email="newsroom-guest@example.org",
        token_hash=secrets.token_hex(32),
        expires_at="2999-01-01T00:00Z",
    ).pk


FILL = {
    # --- pages ---
    "overview": lambda o: [_ws(o)],
    "ranking": lambda o: [_ws(o)],
    "ranking-export": lambda o: [_ws(o) | {"fmt": f} for f in TABLE],
    "publisher": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "compare": lambda o: [_ws(o)],
    "compare-export": lambda o: [_ws(o)],
    "publisher-export": lambda o: [_ws(o) | {"publisher": o.publisher, "fmt": f} for f in TABLE],
    "publisher-network": lambda o: [_ws(o) | {"publisher": o.publisher, "fmt": f} for f in GRAPH],
    "account": lambda o: [_ws(o) | {"twitter_id": o.account}],
    "account-by-name": lambda o: [_ws(o) | {"screen_name": o.account_name}],
    "search": lambda o: [_ws(o)],
    "tweet": lambda o: [_ws(o) | {"tweet_id": o.tweet}],
    "tweet-graph": lambda o: [_ws(o) | {"tweet_id": o.tweet, "fmt": f} for f in GRAPH],
    "cascade": lambda o: [_ws(o) | {"tweet_id": o.tweet}],
    "collections": lambda o: [_ws(o)],
    "upload": lambda o: [_ws(o)],
    "collection": lambda o: [_ws(o) | {"pk": o.collection}],
    "collection-progress": lambda o: [_ws(o) | {"pk": o.collection}],
    "collection-cancel": lambda o: [_ws(o) | {"pk": o.collection}],
    "collection-retry": lambda o: [_ws(o) | {"pk": o.collection}],
    "runs": lambda o: [_ws(o)],
    "recompute": lambda o: [_ws(o)],
    "run": lambda o: [_ws(o) | {"pk": o.run}],
    "run-cancel": lambda o: [_ws(o) | {"pk": o.run}],
    "run-retry": lambda o: [_ws(o) | {"pk": o.run}],
    "network": lambda o: [_ws(o)],
    "network-start": lambda o: [_ws(o)],
    "network-run": lambda o: [_ws(o) | {"pk": o.run}],
    "network-component": lambda o: [_ws(o) | {"pk": o.run}],
    "network-accounts-export": lambda o: [_ws(o) | {"pk": o.run}],
    "network-component-export": lambda o: [_ws(o) | {"pk": o.run, "fmt": f} for f in GRAPH],
    "network-conversations-export": lambda o: [_ws(o) | {"pk": o.run, "fmt": f} for f in GRAPH],
    "network-community": lambda o: [_ws(o) | {"pk": o.run}],
    "network-community-export": lambda o: [_ws(o) | {"pk": o.run, "fmt": f} for f in GRAPH],
    "claims": lambda o: [_ws(o)],
    "claim-create": lambda o: [_ws(o)],
    **{
        name: (lambda o: [_ws(o) | {"pk": _claim(o)}])
        for name in ("claim", "claim-update", "claim-delete", "claim-track", "claim-untrack")
    },
    "coordination": lambda o: [_ws(o)],
    "coordination-start": lambda o: [_ws(o)],
    "coordination-run": lambda o: [_ws(o) | {"pk": o.run}],
    "coordination-cluster": lambda o: [_ws(o) | {"pk": o.run}],
    "coordination-edges-export": lambda o: [_ws(o) | {"pk": o.run, "fmt": f} for f in TABLE],
    "coordination-graph-export": lambda o: [_ws(o) | {"pk": o.run, "fmt": f} for f in GRAPH],
    "collection-coordination": lambda o: [_ws(o) | {"pk": o.collection}],
    "collection-coordination-start": lambda o: [_ws(o) | {"pk": o.collection}],
    "collection-network": lambda o: [_ws(o) | {"pk": o.collection}],
    "collection-network-start": lambda o: [_ws(o) | {"pk": o.collection}],
    "counter-campaign": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "counter-campaign-start": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "counter-campaign-run": lambda o: [_ws(o) | {"pk": o.run}],
    "counter-campaign-export": lambda o: [_ws(o) | {"pk": o.run}],
    "neighbourhood": lambda o: [_ws(o) | {"twitter_id": o.account}],
    "neighbourhood-export": lambda o: [_ws(o) | {"twitter_id": o.account, "fmt": f} for f in GRAPH],
    "account-wtf": lambda o: [_ws(o) | {"twitter_id": o.account}],
    "account-wtf-export": lambda o: [_ws(o) | {"twitter_id": o.account, "fmt": f} for f in TABLE],
    "publisher-watchlist": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "publisher-watchlist-alert": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "publisher-watchlist-export": lambda o: [_ws(o) | {"publisher": o.publisher, "fmt": f} for f in TABLE],
    "wtf-progress": lambda o: [_ws(o) | {"pk": o.wtf_run}],
    "wtf-docs": lambda o: [_ws(o)],
    "notice-dismiss": lambda o: [_ws(o) | {"pk": _notice(o)}],
    "workspace-settings": lambda o: [_ws(o)],
    "member-invite": lambda o: [_ws(o)],
    "member-role": lambda o: [_ws(o) | {"pk": _member(o)}],
    "member-remove": lambda o: [_ws(o) | {"pk": _member(o)}],
    "invitation-revoke": lambda o: [_ws(o) | {"pk": _invitation(o)}],
    "workspace-leave": lambda o: [_ws(o)],
    "account-token-revoke": lambda o: [{"pk": _token(o)}],
    "api:token": lambda o: [{"pk": _token(o)}],
    "alerts": lambda o: [_ws(o)],
    "alert-read": lambda o: [_ws(o) | {"pk": o.alert}],
    "alerts-read-all": lambda o: [_ws(o)],
    "alert-rules": lambda o: [_ws(o)],
    "live": lambda o: [_ws(o)],
    "live-data": lambda o: [_ws(o)],
    "stream-tokens": lambda o: [_ws(o)],
    "stream-token-revoke": lambda o: [_ws(o) | {"pk": _stream_token(o)}],
    "alert-rule-new": lambda o: [_ws(o)],
    "alert-rules-evaluate": lambda o: [_ws(o)],
    "alert-rule-edit": lambda o: [_ws(o) | {"pk": o.rule.pk}],
    "alert-rule-action": lambda o: [_ws(o) | {"pk": o.rule.pk, "action": a} for a in RULE_ACTIONS],
    # --- API ---
    "api:collections": lambda o: [_ws(o)],
    "api:collection": lambda o: [_ws(o) | {"pk": o.collection}],
    "api:runs": lambda o: [_ws(o)],
    "api:run": lambda o: [_ws(o) | {"pk": o.run}],
    "api:run-cancel": lambda o: [_ws(o) | {"pk": o.run}],
    "api:run-retry": lambda o: [_ws(o) | {"pk": o.run}],
    "api:run-estimate": lambda o: [_ws(o)],
    "api:publishers": lambda o: [_ws(o)],
    "api:account": lambda o: [_ws(o) | {"twitter_id": o.account}],
    "api:tweet": lambda o: [_ws(o) | {"tweet_id": o.tweet}],
    "api:account-wtf": lambda o: [_ws(o) | {"twitter_id": o.account}],
    "api:account-wtf-export": lambda o: [_ws(o) | {"twitter_id": o.account}],
    "api:watchlist": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "api:watchlist-export": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "api:ranking": lambda o: [_ws(o)],
    "api:publisher-ranking": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "api:ranking-export": lambda o: [_ws(o)],
    "api:publisher-ranking-export": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "api:publisher-network": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "api:tweet-graph": lambda o: [_ws(o) | {"tweet_id": o.tweet}],
    "api:network-runs": lambda o: [_ws(o)],
    "api:network-run": lambda o: [_ws(o) | {"pk": o.run}],
    "api:network-accounts": lambda o: [_ws(o) | {"pk": o.run}],
    "api:network-component": lambda o: [_ws(o) | {"pk": o.run}],
    "api:network-communities": lambda o: [_ws(o) | {"pk": o.run}],
    "api:network-community": lambda o: [_ws(o) | {"pk": o.run}],
    "api:tweet-search": lambda o: [_ws(o)],
    "api:claims": lambda o: [_ws(o)],
    **{
        f"api:{name}": (lambda o: [_ws(o) | {"pk": _claim(o)}])
        for name in ("claim", "claim-timeline", "claim-spreaders", "claim-publishers", "claim-tracked")
    },
    "api:coordination-runs": lambda o: [_ws(o)],
    "api:coordination-run": lambda o: [_ws(o) | {"pk": o.run}],
    "api:coordination-clusters": lambda o: [_ws(o) | {"pk": o.run}],
    "api:coordination-cluster": lambda o: [_ws(o) | {"pk": o.run, "cluster": 1}],
    "api:coordination-edges": lambda o: [_ws(o) | {"pk": o.run}],
    "api:counter-campaign-runs": lambda o: [_ws(o) | {"publisher": o.publisher}],
    "api:counter-campaign-run": lambda o: [_ws(o) | {"pk": o.run}],
    "api:account-neighbourhood": lambda o: [_ws(o) | {"twitter_id": o.account}],
    "api:compare": lambda o: [_ws(o)],
    "api:alerts": lambda o: [_ws(o)],
    "api:alert-read": lambda o: [_ws(o) | {"pk": o.alert}],
    "api:alert-rules": lambda o: [_ws(o)],
    "api:alert-rule": lambda o: [_ws(o) | {"pk": o.rule.pk}],
}
# login required, but no object in the URL: bob gets his own view, which must not show A
NO_OBJECT = {"home": {}, "api:workspaces": {}, "api:tokens": {}, "workspace-new": {}, "account-tokens": {}}
# staff only (the deployment's own health: every workspace's queue and runs): others get 403, anonymous the login
STAFF = {"health": {}}
# anyone may open these (no login), with the reason
PUBLIC = {
    "login": "the login page",
    "logout": "logging out (POST)",
    "password_reset": "asking for a reset link (the answer is the same whether the address exists)",
    "password_reset_done": "a static confirmation",
    "password_reset_confirm": "the uid+token in the URL is the capability",
    "password_reset_complete": "a static confirmation",
    "healthz": "the health check: says only ok/fail per dependency",
    "invitation-accept": "the token in the URL is the capability (single use, expiring; an unknown one is 404)",
    "help": "the help page: explains the measure and the API, holds no data",
    "api:schema": "the OpenAPI schema: describes the API, holds no data",
    "api:docs": "Swagger UI over the schema",
    "api:redoc": "a redirect to Swagger UI (Redoc, which loaded fonts from the internet, is not served)",
    "docs": "the method pages of docs/ (network.md...): the repository's own documentation, no data",
    "alerts:unsubscribe": "the token in the URL is the capability (email one-click unsubscribe, RFC 8058)",
    "api:stream": "no session or API token is taken at all: only a stream token (sws_) appends, to its own "
    "workspace's stream (tests/monitor/test_api_stream.py)",
}
OBJECT_PARAMS = {"pk", "tweet_id", "twitter_id", "publisher", "screen_name", "cluster"}
METHODS = ("get", "post", "patch", "delete")


def _patterns():
    return [p for p in walk() if p.namespace != "admin"]


def _admin_patterns():
    return [p for p in walk() if p.namespace == "admin"]


def test_every_url_pattern_is_covered():
    """A URL pattern the crawl cannot fill fails here: add it to FILL, NO_OBJECT or PUBLIC (with a reason)."""
    known = set(FILL) | set(NO_OBJECT) | set(PUBLIC) | set(STAFF)
    unnamed = [p.route for p in _patterns() if not p.name]
    assert not unnamed, f"URL patterns without a name cannot be crawled: {unnamed}"
    missing = sorted({p.name for p in _patterns()} - known)
    assert not missing, f"new URL patterns the security crawl does not cover (add them to FILL or PUBLIC): {missing}"
    stale = sorted(known - {p.name for p in _patterns()})
    assert not stale, f"FILL/PUBLIC name patterns that no longer exist: {stale}"
    # every parameter of a filled pattern is filled
    for p in _patterns():
        if p.name in FILL:
            assert set(p.params) <= {"ws", "fmt", "action"} | OBJECT_PARAMS, (p.name, p.params)
    assert _admin_patterns(), "the admin is crawled by its own rule"


def _urls(o: Objects):
    for p in _patterns():
        if p.name in FILL:
            for kwargs in FILL[p.name](o):
                assert set(kwargs) == set(p.params), f"{p.name}: fill {sorted(kwargs)} for {p.params}"
                yield p.name, reverse(p.name, kwargs=kwargs), kwargs


def _call(client, method: str, url: str):
    if method in ("patch", "delete"):
        return getattr(client, method)(url, data="{}", content_type="application/json")
    return getattr(client, method)(url)


def _no_a(resp, where: str):
    body = b"" if resp.streaming else resp.content
    assert not A_MARKERS.search(body.decode(errors="replace")), f"{where}: the answer shows workspace A"


def test_bob_gets_404_for_every_object_of_workspace_a(client, bob, objs):
    client.force_login(bob)
    leaks = []
    for name, url, kwargs in _urls(objs):
        codes = {}
        for m in METHODS:
            r = _call(client, m, url)
            codes[m] = r.status_code
            if r.status_code not in (404, 405):
                leaks.append(f"{m.upper()} {url} ({name}) -> {r.status_code}")
            else:
                _no_a(r, f"{m.upper()} {url}")
        if 404 not in codes.values():
            leaks.append(f"{url} ({name}): no method answers 404: {codes}")
        # A's ids in B's own URLs are missing, not forbidden
        if OBJECT_PARAMS & set(kwargs) and "ws" in kwargs:
            own = reverse(name, kwargs=kwargs | {"ws": "lab"})
            for m in METHODS:
                r = _call(client, m, own)
                if r.status_code not in (404, 405):
                    leaks.append(f"{m.upper()} {own} ({name}, A's ids in B) -> {r.status_code}")
    assert not leaks, "unauthorised answers:\n" + "\n".join(leaks)
    # and nothing of A was changed by those requests
    rule = AlertRule.objects.get(pk=objs.rule.pk)
    assert rule.is_active and rule.muted_until is None and rule.webhook_secret == objs.rule.webhook_secret
    assert Alert.objects.get(pk=objs.alert).read_at is None
    assert Collection.objects.get(pk=objs.collection).status == Collection.Status.DONE
    assert list(ComputeRun.objects.filter(algorithm="wtf").values_list("pk", flat=True)) == [objs.wtf_run]
    assert not AlertRule.objects.exclude(pk=objs.rule.pk).exists()
    assert list(Membership.objects.filter(workspace=objs.ws).values_list("user__username", "role")) == [
        ("alice", "analyst")
    ]
    assert not Invitation.objects.filter(revoked_at__isnull=False).exists()


def test_bob_sees_none_of_workspace_a_where_no_object_is_named(client, bob, objs):
    from monitor.services import api_token_create

    client.force_login(bob)
    _token(objs)  # alice's, which bob's token list must not show
    api_token_create(user=bob, name="bob's token for lab")  # his own, which it shows
    for name, kwargs in NO_OBJECT.items():
        r = client.get(reverse(name, kwargs=kwargs), follow=True)  # home redirects to the only workspace
        assert r.status_code == 200, name
        _no_a(r, name)
        assert "lab" in r.content.decode(), f"{name}: bob's own workspace is listed"


def test_staff_pages_refuse_bob_and_send_anonymous_to_login(client, bob):
    for name, kwargs in STAFF.items():
        url = reverse(name, kwargs=kwargs)
        assert _is_login_redirect(client.get(url), "/login/"), name
        client.force_login(bob)
        r = client.get(url)
        assert r.status_code == 403, name
        _no_a(r, name)
        client.logout()


def _is_login_redirect(r, login: str) -> bool:
    return r.status_code == 302 and urlsplit(r["Location"]).path == login


def test_anonymous_is_sent_to_login_everywhere_but_the_public_urls(client, objs):
    bad = []
    for name, url, _ in _urls(objs):
        api = name.startswith("api:")
        ok_codes = []
        for m in ("get", "post"):
            r = _call(client, m, url)
            if api:
                good = r.status_code in (401, 403)
            else:
                good = _is_login_redirect(r, "/login/")
            if good:
                ok_codes.append(m)
            elif r.status_code != 405:
                bad.append(f"{m.upper()} {url} ({name}) -> {r.status_code}")
            _no_a(r, url)
        if not ok_codes:
            bad.append(f"{url} ({name}): neither GET nor POST asks for a login")
    for name, kwargs in NO_OBJECT.items():
        r = client.get(reverse(name, kwargs=kwargs))
        if not (r.status_code in (401, 403) if name.startswith("api:") else _is_login_redirect(r, "/login/")):
            bad.append(f"GET {name} -> {r.status_code}")
    assert not bad, "answered without a login:\n" + "\n".join(bad)


def _admin_urls(o: Objects):
    values = {"object_id": str(o.ws.pk), "app_label": "monitor", "content_type_id": 1, "id": str(o.ws.pk)}
    for p in _admin_patterns():
        if not p.name:
            continue  # the admin's catch-all view: answers like the admin index
        yield p.name, reverse(p.name, kwargs={k: values.get(k, "1") for k in p.params})


@pytest.mark.parametrize("who", ["anonymous", "bob"])
def test_the_admin_sends_non_staff_to_its_login(client, bob, objs, who):
    if who == "bob":
        client.force_login(bob)
    bad = []
    urls = list(_admin_urls(objs))
    assert len(urls) > 20
    for name, url in urls:
        r = client.get(url)
        if not _is_login_redirect(r, "/admin/login/") and name not in ("admin:login", "admin:logout"):
            bad.append(f"GET {url} ({name}) -> {r.status_code}")
    assert not bad, "\n".join(bad)


def test_the_public_urls_answer_without_a_login(client, objs):
    assert client.get("/login/").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert client.get("/password-reset/").status_code == 200
    assert client.get(reverse("api:schema")).status_code == 200
    assert client.get(f"/alerts/unsubscribe/{objs.rule.unsubscribe_token}x/").status_code == 404
