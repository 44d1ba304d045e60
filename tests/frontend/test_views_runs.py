"""The run page's cancel and retry buttons (frontend/views/runs.py): POST with CSRF, the user's workspace only."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from monitor import services
from monitor.models import ComputeRun
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


@pytest.fixture
def queued_run(ws_a, import_files, settings):
    """A run over the thesis example whose two batches no worker has taken yet."""
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    settings.SPREADWATCH_BATCH_NODES = 6
    return services.compute_run_start(workspace=ws_a, backend="cpu")  # on-commit tasks are not run here


def _url(name: str, run: ComputeRun, ws: str = "newsroom") -> str:
    return reverse(name, kwargs={"ws": ws, "pk": run.pk})


def test_it_cancels_a_queued_run_from_its_page(client, alice, queued_run):
    client.force_login(alice)
    page = client.get(_url("run", queued_run)).content.decode()
    assert "Cancel run" in page and _url("run-cancel", queued_run) in page
    r = client.post(_url("run-cancel", queued_run), follow=True)
    assert r.redirect_chain[-1][0] == _url("run", queued_run)
    page = r.content.decode()
    assert "Run cancelled" in page and "The run was cancelled" in page and "Retry run" in page
    assert "cancelled by alice: 0 of 2 batches had finished" in page
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.CANCELLED


def test_it_retries_a_cancelled_run_from_its_page_to_the_full_results(client, alice, queued_run, run_tasks):
    client.force_login(alice)
    client.post(_url("run-cancel", queued_run))
    r = run_tasks(client.post, _url("run-retry", queued_run), follow=True)
    assert "Run queued again" in r.content.decode()
    run = ComputeRun.objects.get(pk=queued_run.pk)
    assert run.status == ComputeRun.Status.DONE and run.batches_done == 2
    assert total_by_name(queued_run.workspace) == EXPECTED_TOTAL


def test_it_says_why_a_finished_run_cannot_be_cancelled(client, alice, ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    run = c.compute_runs.get()
    client.force_login(alice)
    page = client.get(_url("run", run)).content.decode()
    assert "Cancel run" not in page and "Retry run" not in page
    r = client.post(_url("run-cancel", run), follow=True)
    assert "a run that is done cannot be cancelled" in r.content.decode()
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.DONE


def test_it_answers_404_for_another_workspaces_run_and_405_to_a_get(client, bob, queued_run):
    client.force_login(bob)
    for name in ("run-cancel", "run-retry"):
        assert client.post(_url(name, queued_run)).status_code == 404
        assert client.post(_url(name, queued_run, ws="lab")).status_code == 404
        assert client.get(_url(name, queued_run)).status_code == 405
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.QUEUED


def test_it_refuses_a_cancel_without_the_csrf_token(alice, queued_run):
    c = Client(enforce_csrf_checks=True)
    c.force_login(alice)
    assert c.post(_url("run-cancel", queued_run)).status_code == 403
    page = c.get(_url("run", queued_run))
    token = page.context["csrf_token"]
    assert c.post(_url("run-cancel", queued_run), {"csrfmiddlewaretoken": str(token)}).status_code == 302
    assert ComputeRun.objects.get(pk=queued_run.pk).status == ComputeRun.Status.CANCELLED


def _runs_rows(client, alice) -> dict[str, str]:
    """The runs page's rows as text, by algorithm."""
    import re

    client.force_login(alice)
    html = client.get(reverse("runs", kwargs={"ws": "newsroom"})).content.decode()
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        text = " ".join(re.sub(r"<[^>]+>", " ", row).split())
        algorithm = re.search(r"Run \d+ (.+?) (Done|Failed|Queued|Running|Cancelled)", text).group(1)
        rows[algorithm] = text
    return rows


def test_each_algorithms_run_shows_its_own_parameters_and_results(client, alice, ws_a, import_files, run_tasks):
    # issue 40: network, look-alike and planner runs showed "Cascades 0", "Orphans strict", "Collection: recompute"
    from monitor.models import Account

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    b = Account.objects.get(workspace=ws_a, twitter_id=102)
    start = {"workspace": ws_a, "backend": "cpu"}
    run_tasks(services.compute_run_start, **start, algorithm="network", params={"samples": 0})
    run_tasks(services.compute_run_start, **start, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]})
    run_tasks(
        services.compute_run_start,
        **start,
        algorithm="influence_max",
        params={"publisher": b.pk, "k": 2, "p": 0.3, "evaluate": 2000},
    )
    rows = _runs_rows(client, alice)
    assert set(rows) == {"Influence measure", "Network analytics", "Who amplifies whom", "Counter-campaign planner"}, (
        rows
    )
    influence = rows["Influence measure"]
    assert "orphans strict" in influence and "2 cascades" in influence and "11 participants" in influence
    assert "Thesis" in influence or "tweets.csv" in influence or "upload" in influence.lower()
    network = rows["Network analytics"]
    assert "graph follows" in network and "betweenness exact" in network and "seed 0" in network
    assert "6 accounts" in network and "8 edges" in network and "the workspace: follower graph" in network
    wtf = rows["Who amplifies whom"]
    assert "accounts @e" in wtf and "direction both" in wtf and "circle 1000" in wtf
    assert "2 seed lists" in wtf and "6 accounts" in wtf and "8 follow edges" in wtf
    planner = rows["Counter-campaign planner"]
    assert "publisher @b" in planner and "K 2" in planner and "model uniform p = 0.3" in planner
    assert "2 accounts chosen" in planner and "5 accounts in the audience" in planner
    for text in (network, wtf, planner):
        assert "orphans" not in text and "cascades" not in text and "recompute" not in text, text
