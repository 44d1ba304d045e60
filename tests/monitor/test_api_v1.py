"""REST API v1: publishers, accounts, cascades, alert rules and inbox; the OpenAPI schema and its docs."""

from __future__ import annotations

import json

import pytest

from monitor.alerts import services as alerts
from monitor.alerts.models import Alert, AlertRule
from tests.webapp import THESIS, token_client


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def base(ws) -> str:
    return f"/api/v1/workspaces/{ws.slug}"


def test_it_serves_a_valid_openapi_3_schema(client):
    r = client.get("/api/v1/schema/", {"format": "json"})
    assert r.status_code == 200
    doc = json.loads(r.content)
    assert doc["openapi"].startswith("3")
    paths = doc["paths"]
    for p in (
        "/api/v1/workspaces/{ws}/ranking/",
        "/api/v1/workspaces/{ws}/publishers/{publisher}/ranking/",
        "/api/v1/workspaces/{ws}/collections/",
        "/api/v1/workspaces/{ws}/tweets/{tweet_id}/",
        "/api/v1/workspaces/{ws}/publishers/",
        "/api/v1/workspaces/{ws}/accounts/{twitter_id}/",
        "/api/v1/workspaces/{ws}/alerts/",
        "/api/v1/workspaces/{ws}/alerts/rules/",
        "/api/v1/workspaces/{ws}/alerts/rules/{id}/",
    ):
        assert p in paths, p
    assert set(paths["/api/v1/workspaces/{ws}/alerts/rules/{id}/"]) >= {"get", "patch", "delete"}
    assert "multipart/form-data" in paths["/api/v1/workspaces/{ws}/collections/"]["post"]["requestBody"]["content"]
    # the YAML rendering parses too
    import yaml

    assert yaml.safe_load(client.get("/api/v1/schema/").content)["openapi"].startswith("3")


def test_it_validates_the_schema_without_warnings():
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


def test_it_serves_the_docs_from_local_assets(client):
    r = client.get("/api/v1/docs/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "swagger-ui" in html and "/static/drf_spectacular_sidecar/" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


def test_the_redoc_address_leads_to_the_vendored_swagger_ui_and_nothing_refers_to_another_host(client):
    # issue 40: Redoc's page fetched Google Fonts and cdn.redoc.ly's logo (console errors offline), while the
    # docs promise no CDN; its address now leads to Swagger UI, which loads only local assets
    import re

    r = client.get("/api/v1/redoc/")
    assert r.status_code == 301 and r["Location"] == "/api/v1/docs/"
    html = client.get(r["Location"]).content.decode()
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', html), html
    assert "fonts.googleapis" not in html


def test_it_lists_the_publishers(api, thesis):
    rows = api.get(f"{base(thesis)}/publishers/").json()
    by_id = {r["account"]["twitter_id"]: r for r in rows}
    assert by_id["102"]["account"]["screen_name"] == "b" and by_id["102"]["tweets"] == 2
    assert by_id["102"]["first_day"] is not None and by_id["102"]["reach"] > 0


def test_it_returns_a_cascade_with_twitter_id_edges(api, thesis):
    r = api.get(f"{base(thesis)}/tweets/1000/")
    assert r.status_code == 200
    t = r.json()
    assert t["tweet_id"] == "1000" and t["author"] == {"twitter_id": "102", "screen_name": "b"}
    edges = {tuple(e) for e in t["edges"]}
    assert edges == {
        ("101", "102"),
        ("103", "102"),
        ("104", "102"),
        ("105", "102"),
        ("103", "101"),
        ("105", "103"),
        ("106", "105"),
    }
    assert all(isinstance(x, str) for e in t["edges"] for x in e)
    roles = {p["account"]["twitter_id"]: p["role"] for p in t["participants"]}
    assert roles["102"] == "publisher" and len(roles) == t["n_participants"] == 6
    assert api.get(f"{base(thesis)}/tweets/999999/").status_code == 404


def test_it_returns_an_account_with_its_amplification(api, thesis):
    a = api.get(f"{base(thesis)}/accounts/105/").json()
    assert a["twitter_id"] == "105" and a["screen_name"] == "e"
    amp = a["amplification"]
    assert {r["account"]["twitter_id"]: r["cascades"] for r in amp["amplified"]} == {"102": 2, "103": 1}
    assert {r["account"]["twitter_id"]: r["cascades"] for r in amp["amplified_by"]} == {"106": 2}
    assert a["total"] == 96.0 and a["per_publisher"][0]["publisher"]["twitter_id"] == "102"
    assert sum(d["total"] for d in a["per_day"]) == 96.0
    assert a["follower_counts"] and all(c["tweet_id"] for c in a["top_cascades"])


def test_it_creates_reads_updates_and_deletes_rules(api, thesis):
    url = f"{base(thesis)}/alerts/rules/"
    r = api.post(url, {"name": "top 3 of b", "kind": "top_k", "k": 3, "publisher": "102"}, format="json")
    assert r.status_code == 201, r.content
    created = r.json()
    assert created["publisher"] == "102" and created["state"] == "active" and len(created["webhook_secret"]) == 64
    rid = created["id"]
    assert isinstance(rid, str)
    listed = api.get(url).json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == rid and "webhook_secret" not in listed["results"][0]
    detail = api.get(f"{url}{rid}/").json()
    assert detail["k"] == 3 and "webhook_secret" not in detail
    r = api.patch(f"{url}{rid}/", {"k": 5, "publisher": None, "is_active": False}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["k"] == 5 and r.json()["publisher"] is None and r.json()["state"] == "muted"
    r = api.patch(f"{url}{rid}/", {"is_active": True, "muted_until": "2999-01-01T00:00:00Z"}, format="json")
    assert r.json()["state"] == "snoozed"
    assert api.patch(f"{url}{rid}/", {"window_days": 0}, format="json").status_code == 400
    assert api.post(url, {"name": "x", "kind": "top_k", "publisher": "999"}, format="json").status_code == 400
    assert api.post(url, {"name": "x", "kind": "nope"}, format="json").status_code == 400
    assert api.delete(f"{url}{rid}/").status_code == 204
    assert not AlertRule.objects.filter(pk=int(rid)).exists()
    assert api.get(f"{url}{rid}/").status_code == 404


def test_it_lists_the_inbox_and_marks_an_alert_read(api, thesis, alice):
    from monitor.selectors import account_get

    rule = alerts.rule_create(
        workspace=thesis, owner=alice, name="top 3", kind="top_k", k=3, publisher=account_get(thesis, 102)
    )
    alerts.evaluate_workspace(workspace_id=thesis.pk)
    inbox = api.get(f"{base(thesis)}/alerts/").json()
    assert inbox["count"] == 3
    assert {a["account"]["twitter_id"] for a in inbox["results"]} == {"102", "105", "106"}
    first = inbox["results"][0]
    assert first["rule"] == str(rule.pk) and first["read_at"] is None and isinstance(first["id"], str)
    r = api.post(f"{base(thesis)}/alerts/{first['id']}/read/")
    assert r.status_code == 200 and r.json()["read_at"] is not None
    assert api.get(f"{base(thesis)}/alerts/", {"unread": "1"}).json()["count"] == 2


def test_it_answers_404_to_another_workspace(thesis, alice, bob):
    from monitor.selectors import account_get

    rule = alerts.rule_create(
        workspace=thesis, owner=alice, name="top 3", kind="top_k", k=3, publisher=account_get(thesis, 102)
    )
    alerts.evaluate_workspace(workspace_id=thesis.pk)
    alert = Alert.objects.filter(rule=rule).first()
    c = token_client(bob)
    b = base(thesis)
    for u in (
        f"{b}/publishers/",
        f"{b}/accounts/105/",
        f"{b}/tweets/1000/",
        f"{b}/alerts/",
        f"{b}/alerts/rules/",
        f"{b}/alerts/rules/{rule.pk}/",
        f"{b}/ranking/",
        f"{b}/collections/",
        f"{b}/runs/",
    ):
        assert c.get(u).status_code == 404, u
    assert c.post(f"{b}/alerts/{alert.pk}/read/").status_code == 404
    assert c.post(f"{b}/alerts/rules/", {"name": "x", "kind": "top_k"}, format="json").status_code == 404
    assert c.patch(f"{b}/alerts/rules/{rule.pk}/", {"k": 1}, format="json").status_code == 404
    assert c.delete(f"{b}/alerts/rules/{rule.pk}/").status_code == 404
    assert AlertRule.objects.filter(pk=rule.pk, k=3).exists()
    # and bob's own workspace does not reach alice's rule by id
    assert c.get(f"/api/v1/workspaces/lab/alerts/rules/{rule.pk}/").status_code == 404
