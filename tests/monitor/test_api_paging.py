"""API paging (issue 19, defect 12): ``page_size`` (with ``page``) is honoured by every endpoint that lists,
as ``limit`` (with ``offset``) is, up to one maximum; and every operation of the schema has a summary."""

from __future__ import annotations

import json

import pytest

from monitor.alerts import services as alerts
from monitor.api.paging import MAX_PAGE_SIZE
from monitor.selectors import account_get
from tests.webapp import THESIS


@pytest.fixture
def thesis(ws_a, alice, import_files, tmp_path):
    from monitor import services

    # two collections, two runs, two publishers and a second workspace for alice: every list has two rows
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], name="first")
    assert c.status == c.Status.DONE, c.error
    more = tmp_path / "tweets.csv"
    more.write_text(
        "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"
        "3000,,105,2020-01-03T00:00:00Z,16,e\n3001,3000,106,2020-01-03T00:00:01Z,32,f\n"
    )
    c = import_files(ws_a, [more], name="second")
    assert c.status == c.Status.DONE, c.error
    services.membership_add(workspace=services.workspace_create(name="Second", slug="second"), user=alice)
    for k in (2, 3):
        alerts.rule_create(
            workspace=ws_a, owner=alice, name=f"top {k}", kind="top_k", k=k, publisher=account_get(ws_a, 102)
        )
    assert len(alerts.evaluate_workspace(workspace_id=ws_a.pk)) > 2
    return ws_a


def _rows(body):
    return body["results"] if isinstance(body, dict) else body


LISTS = [
    "/api/v1/workspaces/",
    "/api/v1/workspaces/{ws}/collections/",
    "/api/v1/workspaces/{ws}/runs/",
    "/api/v1/workspaces/{ws}/publishers/",
    "/api/v1/workspaces/{ws}/ranking/",
    "/api/v1/workspaces/{ws}/publishers/102/ranking/",
    "/api/v1/workspaces/{ws}/alerts/",
    "/api/v1/workspaces/{ws}/alerts/rules/",
]


@pytest.mark.parametrize("url", LISTS)
def test_it_honours_page_size_and_page_on_every_list(api, thesis, url):
    url = url.format(ws=thesis.slug)
    everything = _rows(api.get(url).json())
    assert len(everything) >= 2, url
    one = api.get(url, {"page_size": 1})
    assert one.status_code == 200, one.content
    assert _rows(one.json()) == everything[:1], url
    second = api.get(url, {"page_size": 1, "page": 2}).json()
    assert _rows(second) == everything[1:2], url
    # limit / offset say the same
    assert _rows(api.get(url, {"limit": 1, "offset": 1}).json()) == everything[1:2], url
    if isinstance(one.json(), dict) and "count" in one.json():
        assert one.json()["count"] == len(everything)


@pytest.mark.parametrize("url", LISTS)
@pytest.mark.parametrize(
    "params",
    [{"page_size": MAX_PAGE_SIZE + 1}, {"page_size": 0}, {"page_size": "x"}, {"page": 0}, {"limit": MAX_PAGE_SIZE + 1}],
)
def test_it_refuses_a_page_size_over_the_maximum_or_malformed(api, thesis, url, params):
    r = api.get(url.format(ws=thesis.slug), params)
    assert r.status_code == 400, (url, params, r.content)
    assert set(r.json()) & {"page_size", "page", "limit"}


def test_it_takes_the_maximum_page_size(api, thesis):
    r = api.get(f"/api/v1/workspaces/{thesis.slug}/ranking/", {"page_size": MAX_PAGE_SIZE})
    assert r.status_code == 200 and len(r.json()["results"]) == r.json()["count"]


def test_every_operation_of_the_schema_has_a_summary_and_the_lists_document_page_size(client):
    doc = json.loads(client.get("/api/v1/schema/", {"format": "json"}).content)
    missing, unpaged = [], []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            if not op.get("summary", "").strip():
                missing.append(f"{method.upper()} {path}")
            if method == "get" and any(path == u.replace("{ws}", "{ws}").replace("102", "{publisher}") for u in LISTS):
                names = {p["name"] for p in op.get("parameters", [])}
                if not {"page_size", "page"} <= names:
                    unpaged.append(path)
    assert not missing, f"operations without a summary: {missing}"
    assert not unpaged, f"lists without page_size/page in the schema: {unpaged}"
