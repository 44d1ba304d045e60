"""The dashboard as an analyst uses it: log in, upload, watch the import, read the rankings."""

from __future__ import annotations

import pytest
from django.urls import reverse

from monitor.models import Collection
from tests.webapp import THESIS


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def test_it_asks_for_a_login(client, ws_a):
    r = client.get(reverse("overview", kwargs={"ws": ws_a.slug}))
    assert r.status_code == 302 and "/login/" in r["Location"]


def test_it_logs_in_and_lands_on_the_only_workspace(client, alice, ws_a):
    r = client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"}, follow=True)
    assert r.status_code == 200
    assert r.redirect_chain[-1][0] == reverse("overview", kwargs={"ws": ws_a.slug})


def test_it_uploads_several_files_through_the_form_and_ranks_the_worked_example(
    client, alice, ws_a, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    with (
        open(THESIS / "tweets.csv", "rb") as t,
        open(THESIS / "follows.csv", "rb") as f,
        django_capture_on_commit_callbacks(execute=True),
    ):
        r = client.post(
            reverse("upload", kwargs={"ws": ws_a.slug}),
            {"files": [t, f], "name": "worked example", "format": "auto", "mode": "strict", "compute": "on"},
        )
    assert r.status_code == 302
    c = Collection.objects.get(workspace=ws_a)
    assert c.status == Collection.Status.DONE, c.error
    page = client.get(r["Location"])
    assert page.status_code == 200 and b"Done" in page.content
    b = client.get(reverse("publisher", kwargs={"ws": ws_a.slug, "publisher": 102}))
    html = b.content.decode()
    # the publisher ranking lists b, e, f, c, a, d in that order with the thesis' totals
    positions = [html.index(f"@{n}<") if f"@{n}<" in html else html.index(f">{n}<") for n in "befcad"]
    assert positions == sorted(positions)
    for total in ("118", "96", "64", "32", "16", "8"):
        assert total in html


def test_it_shows_the_report_of_a_failed_strict_upload(client, alice, ws_a, tmp_path, import_files):
    bad = tmp_path / "tweets.csv"
    bad.write_text("tweet_id,retweeted_tweet_id,user_id,created_at,followers_count\n1,,2,yesterday,3\n")
    c = import_files(ws_a, [bad])
    client.force_login(alice)
    html = client.get(reverse("collection", kwargs={"ws": ws_a.slug, "pk": c.pk})).content.decode()
    assert "tweets.csv" in html and "created_at" in html and "nothing was stored" in html


def test_it_reports_progress_as_json(client, alice, loaded):
    client.force_login(alice)
    c = Collection.objects.get(workspace=loaded)
    r = client.get(reverse("collection-progress", kwargs={"ws": loaded.slug, "pk": c.pk}))
    assert r.json()["status"] == "done" and r.json()["percent"] == 100.0


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("overview", {}),
        ("ranking", {}),
        ("publisher", {"publisher": 102}),
        ("account", {"twitter_id": 105}),
        ("tweet", {"tweet_id": 1000}),
        ("collections", {}),
        ("upload", {}),
        ("runs", {}),
    ],
)
def test_it_renders_every_page_with_real_data(client, alice, loaded, name, kwargs):
    client.force_login(alice)
    r = client.get(reverse(name, kwargs={"ws": loaded.slug, **kwargs}))
    assert r.status_code == 200


def test_it_renders_collection_and_run_pages(client, alice, loaded):
    client.force_login(alice)
    c = Collection.objects.get(workspace=loaded)
    assert client.get(reverse("collection", kwargs={"ws": loaded.slug, "pk": c.pk})).status_code == 200
    run = c.compute_runs.get()
    assert client.get(reverse("run", kwargs={"ws": loaded.slug, "pk": run.pk})).status_code == 200


def test_the_run_page_shows_counts_among_the_timings_as_counts_not_seconds(client, alice, loaded, run_tasks, settings):
    from monitor import services

    settings.SPREADWATCH_RUN_WORKERS, settings.SPREADWATCH_BATCH_MIN_NODES = 3, 1  # two batches
    run = run_tasks(services.compute_run_start, workspace=loaded, backend="cpu")
    client.force_login(alice)
    html = client.get(reverse("run", kwargs={"ws": loaded.slug, "pk": run.pk})).content.decode()
    at = html.index("Batches that found the follower graph kept")
    assert html[at : at + 120].split("<dd>")[1].startswith("2</dd>"), html[at : at + 120]
    assert "<dt>Forward and backward phases</dt>" in html


def test_the_collection_page_shows_how_many_parts_an_import_was_merged_in(client, alice, ws_a, import_files, settings):
    from tests.webapp import THESIS

    settings.SPREADWATCH_IMPORT_PART_ROWS, settings.SPREADWATCH_READ_CHUNK_ROWS = 5, 4
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    html = client.get(reverse("collection", kwargs={"ws": ws_a.slug, "pk": c.pk})).content.decode()
    at = html.index("<dt>Parts merged</dt>")
    assert html[at : at + 60].split("<dd>")[1].startswith(f"{c.timings['parts']}</dd>"), html[at : at + 60]
    assert c.timings["parts"] >= 3
    assert html.index("<dt>Reading</dt>") < html.index("<dt>Storing</dt>")


def test_it_rejects_a_backwards_window_with_a_message(client, alice, loaded):
    client.force_login(alice)
    r = client.get(
        reverse("ranking", kwargs={"ws": loaded.slug}), {"window": "custom", "start": "2020-02-01", "end": "2020-01-01"}
    )
    assert r.status_code == 400 and "start is after its end" in r.content.decode()


def test_it_keeps_the_ranking_page_to_a_fixed_number_of_queries(client, alice, loaded, django_assert_max_num_queries):
    client.force_login(alice)
    url = reverse("ranking", kwargs={"ws": loaded.slug})
    with django_assert_max_num_queries(12):
        assert client.get(url, {"aggregate": "participation"}).status_code == 200


def test_it_recomputes_on_request(client, alice, loaded, django_capture_on_commit_callbacks):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post(reverse("recompute", kwargs={"ws": loaded.slug}), {"orphans": "attach", "backend": "cpu"})
    assert r.status_code == 302
    from monitor.models import ComputeRun

    run = ComputeRun.objects.filter(workspace=loaded).latest("pk")
    assert run.status == "done" and run.orphans == "attach"


def test_it_hides_other_workspaces_behind_404(client, bob, loaded):
    """bob (workspace B) gets 404 for every page and API object of workspace A, and sees none of it listed."""
    client.force_login(bob)
    ws = loaded.slug
    c = Collection.objects.get(workspace=loaded)
    run = c.compute_runs.get()
    pages = [
        reverse("overview", kwargs={"ws": ws}),
        reverse("ranking", kwargs={"ws": ws}),
        reverse("publisher", kwargs={"ws": ws, "publisher": 102}),
        reverse("account", kwargs={"ws": ws, "twitter_id": 105}),
        reverse("tweet", kwargs={"ws": ws, "tweet_id": 1000}),
        reverse("collections", kwargs={"ws": ws}),
        reverse("upload", kwargs={"ws": ws}),
        reverse("collection", kwargs={"ws": ws, "pk": c.pk}),
        reverse("collection-progress", kwargs={"ws": ws, "pk": c.pk}),
        reverse("runs", kwargs={"ws": ws}),
        reverse("run", kwargs={"ws": ws, "pk": run.pk}),
        f"/api/v1/workspaces/{ws}/collections/",
        f"/api/v1/workspaces/{ws}/collections/{c.pk}/",
        f"/api/v1/workspaces/{ws}/runs/",
        f"/api/v1/workspaces/{ws}/runs/{run.pk}/",
        f"/api/v1/workspaces/{ws}/ranking/",
        f"/api/v1/workspaces/{ws}/publishers/102/ranking/",
    ]
    for url in pages:
        assert client.get(url).status_code == 404, url
    assert (
        client.post(reverse("recompute", kwargs={"ws": ws}), {"orphans": "strict", "backend": "cpu"}).status_code == 404
    )
    # B's own pages don't reach A's objects either: A's ids in B's URLs are missing, not forbidden
    own = bob.workspaces.get().slug
    assert client.get(reverse("collection", kwargs={"ws": own, "pk": c.pk})).status_code == 404
    assert client.get(reverse("account", kwargs={"ws": own, "twitter_id": 105})).status_code == 404
    assert client.get("/api/v1/workspaces/").json() == [
        {
            "slug": own,
            "name": "Lab",
            "created_at": bob.workspaces.get().created_at.isoformat().replace("+00:00", "Z"),
            "unit": "",
        }
    ]


def test_it_cancels_and_retries_from_the_collection_page(client, alice, ws_a, django_capture_on_commit_callbacks):
    from monitor import services

    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    page = client.get(reverse("collection", kwargs={"ws": ws_a.slug, "pk": c.pk})).content.decode()
    assert "Cancel import" in page
    client.post(reverse("collection-cancel", kwargs={"ws": ws_a.slug, "pk": c.pk}))
    c.refresh_from_db()
    assert c.status == "cancelled"
    assert "Retry import" in client.get(reverse("collection", kwargs={"ws": ws_a.slug, "pk": c.pk})).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("collection-retry", kwargs={"ws": ws_a.slug, "pk": c.pk}))
    c.refresh_from_db()
    assert c.status == "done"


def test_it_hides_cancel_and_retry_of_another_workspace(client, bob, ws_a):
    from monitor import services

    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv"])
    client.force_login(bob)
    for name in ("collection-cancel", "collection-retry"):
        assert client.post(reverse(name, kwargs={"ws": ws_a.slug, "pk": c.pk})).status_code == 404
