"""The REST API: token auth, upload, collection state, rankings."""

from __future__ import annotations

from tests.webapp import EXPECTED_TOTAL, THESIS


def test_it_refuses_anonymous_callers(client, ws_a):
    assert client.get(f"/api/v1/workspaces/{ws_a.slug}/collections/").status_code in (401, 403)


def test_it_uploads_and_ranks_through_the_api(api, ws_a, django_capture_on_commit_callbacks):
    with (
        open(THESIS / "tweets.csv", "rb") as t,
        open(THESIS / "follows.csv", "rb") as f,
        django_capture_on_commit_callbacks(execute=True),
    ):
        r = api.post(f"/api/v1/workspaces/{ws_a.slug}/collections/", {"files": [t, f]}, format="multipart")
    assert r.status_code == 201, r.content
    detail = api.get(f"/api/v1/workspaces/{ws_a.slug}/collections/{r.json()['id']}/").json()
    assert detail["status"] == "done" and detail["progress"]["percent"] == 100.0
    ranking = api.get(f"/api/v1/workspaces/{ws_a.slug}/publishers/102/ranking/", {"aggregate": "total"}).json()
    got = {row["screen_name"]: row["total"] for row in ranking["results"]}
    assert got == EXPECTED_TOTAL
    assert ranking["results"][0]["twitter_id"] == "102"  # ids travel as strings
    assert ranking["unit"] == "followers reached" and ranking["tweets"] == 2


def test_it_validates_only_through_the_api(api, ws_a, django_capture_on_commit_callbacks):
    with open(THESIS / "tweets.csv", "rb") as t, django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            f"/api/v1/workspaces/{ws_a.slug}/collections/",
            {"files": [t], "validate_only": True},
            format="multipart",
        )
    detail = api.get(f"/api/v1/workspaces/{ws_a.slug}/collections/{r.json()['id']}/").json()
    assert detail["status"] == "validated" and detail["report"]["read"]["n_good"] == 11


def test_it_names_the_bad_parameter(api, ws_a):
    r = api.get(f"/api/v1/workspaces/{ws_a.slug}/ranking/", {"aggregate": "median"})
    assert r.status_code == 400 and "aggregate" in r.json()
    r = api.get(f"/api/v1/workspaces/{ws_a.slug}/ranking/", {"from": "2020-13-01"})
    assert r.status_code == 400 and "from" in r.json()
    r = api.post(f"/api/v1/workspaces/{ws_a.slug}/collections/", {}, format="multipart")
    assert r.status_code == 400 and "files" in r.json()
