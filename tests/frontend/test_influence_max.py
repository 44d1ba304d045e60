"""The counter-campaign planner's pages over the thesis' worked example: the link from the publisher's page, the
empty state and the form, starting a plan (and the form's errors), the results (the two-sentence explanation
with its docs link, the chosen accounts with their gains, the reach with its interval, the curve's data, the
baseline of top spreaders by influence), a pinned run, the CSV download, and 404 across workspaces."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.urls import reverse

from monitor import services
from monitor.models import Account, ComputeRun, InfluenceMaxResult, InfluenceMaxSeed
from monitor.numbers import readable
from tests.webapp import THESIS


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _b(ws) -> Account:
    return Account.objects.get(workspace=ws, twitter_id=102)


@pytest.fixture
def planned(loaded, run_tasks):
    """A finished plan of K = 2 for publisher b, split over two batches."""
    run = run_tasks(
        services.compute_run_start,
        workspace=loaded,
        backend="cpu",
        algorithm="influence_max",
        params={"publisher": _b(loaded).pk, "k": 2, "p": 0.3, "evaluate": 2000, "batches": 2},
    )
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    return run


def _get(client, user, name, **kwargs):
    client.force_login(user)
    query = kwargs.pop("query", None)
    return client.get(reverse(name, kwargs=kwargs), query or {})


def test_the_publisher_page_links_its_planner(client, alice, loaded):
    r = _get(client, alice, "publisher", ws=loaded.slug, publisher=102)
    assert reverse("counter-campaign", kwargs={"ws": loaded.slug, "publisher": 102}) in r.content.decode()


def test_the_planner_says_there_is_no_plan_yet_and_offers_the_form(client, alice, loaded):
    r = _get(client, alice, "counter-campaign", ws=loaded.slug, publisher=102)
    assert r.status_code == 200
    body = r.content.decode()
    assert "No plan yet" in body and 'aria-label="Plan a counter-campaign"' in body
    for name in ("k", "model", "p", "strength", "method", "eps", "unit", "evaluate", "seed", "batches", "backend"):
        assert f'name="{name}"' in body
    assert reverse("docs", kwargs={"name": "influence_max"}) in body


def test_the_form_starts_a_plan_with_the_parameters_it_was_given(
    client, alice, loaded, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    url = reverse("counter-campaign-start", kwargs={"ws": loaded.slug, "publisher": 102})
    data = {"k": 3, "model": "wc", "method": "imm", "eps": 0.2, "unit": "accounts", "evaluate": 500, "seed": 4}
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post(url, data | {"batches": 3, "backend": "cpu"})
    assert r.status_code == 302
    assert r["Location"] == reverse("counter-campaign", kwargs={"ws": loaded.slug, "publisher": 102})
    run = ComputeRun.objects.get(algorithm="influence_max")
    assert run.params == {
        "publisher": _b(loaded).pk,
        "k": 3,
        "model": "wc",
        "p": None,
        "strength": None,
        "unit": "accounts",
        "method": "imm",
        "eps": 0.2,
        "seed": 4,
        "evaluate": 500,
        "batches": 3,
    }
    assert run.status == ComputeRun.Status.DONE and run.n_batches == 3 and run.created_by == alice
    assert InfluenceMaxSeed.objects.filter(run=run).count() == 3


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"k": 0}, "k"),
        ({"model": "uniform", "p": ""}, "p"),
        ({"model": "estimated", "strength": ""}, "strength"),
        ({"eps": 2}, "eps"),
        ({"method": "celf"}, "method"),
    ],
)
def test_a_bad_form_answers_400_with_the_field_s_error_and_starts_nothing(client, alice, loaded, data, field):
    client.force_login(alice)
    base = {"k": 2, "model": "uniform", "p": 0.01, "strength": 20, "method": "imm", "eps": 0.1}
    base |= {"unit": "accounts", "evaluate": 500, "seed": 0, "batches": 1, "backend": "cpu"}
    url = reverse("counter-campaign-start", kwargs={"ws": loaded.slug, "publisher": 102})
    r = client.post(url, base | data)
    assert r.status_code == 400
    assert r.context["form"].errors.get(field)
    assert not ComputeRun.objects.filter(algorithm="influence_max").exists()


def test_a_publisher_without_an_audience_is_refused_with_the_reason(client, alice, loaded):
    client.force_login(alice)
    url = reverse("counter-campaign-start", kwargs={"ws": loaded.slug, "publisher": 104})  # nobody follows d
    data = {"k": 2, "model": "uniform", "p": 0.01, "method": "imm", "eps": 0.1, "unit": "accounts"}
    r = client.post(url, data | {"evaluate": 500, "seed": 0, "batches": 1, "backend": "cpu"})
    assert r.status_code == 400 and "no follower in the workspace" in r.content.decode()
    assert not ComputeRun.objects.filter(algorithm="influence_max").exists()


def test_the_planner_shows_the_newest_plan(client, alice, loaded, planned):
    r = _get(client, alice, "counter-campaign", ws=loaded.slug, publisher=102)
    assert r.status_code == 200
    body = r.content.decode()
    res = InfluenceMaxResult.objects.get(run=planned)
    seeds = list(InfluenceMaxSeed.objects.filter(run=planned).order_by("rank").select_related("account"))
    plan = r.context["plan"]
    assert [s["account"] for s in plan["seeds"]] == [s.account_id for s in seeds]
    # the two sentences: what the number is, how the accounts were chosen and measured, and the method's page
    assert "data-explanation" in body and "marginal gain" in body
    for value in (res.spread, res.spread_ci_low, res.spread_ci_high):
        assert readable(value) in body  # the one number format of every page
    assert reverse("docs", kwargs={"name": "influence_max"}) in body
    for s in seeds:
        assert f"/accounts/{s.account.twitter_id}/" in body
    # the baseline: b's top spreaders by influence e and f, and how many of them the plan chose
    assert [b["twitter_id"] for b in plan["baseline"]] == [105, 106]
    assert plan["comparison"]["overlap"] == res.baseline["overlap"]
    chart = json.loads(json.dumps(r.context["chart"]))  # what the page's data island holds
    assert [p[0] for p in chart["curve"]] == [1, 2] and chart["curve"][1][1] == pytest.approx(res.estimate)
    assert chart["comparison"]["baseline"]["spread"] == res.baseline["spread"]
    assert reverse("counter-campaign-export", kwargs={"ws": loaded.slug, "pk": planned.pk}) in body


def test_a_pinned_run_and_one_still_going(client, alice, loaded, planned):
    r = _get(client, alice, "counter-campaign-run", ws=loaded.slug, pk=planned.pk)
    assert r.status_code == 200 and r.context["pinned"] and r.context["run"] == planned
    going = services.compute_run_start(
        workspace=loaded, backend="cpu", algorithm="influence_max", params={"publisher": _b(loaded).pk, "k": 2}
    )
    r = _get(client, alice, "counter-campaign-run", ws=loaded.slug, pk=going.pk)
    body = r.content.decode()
    assert r.status_code == 200 and r.context["plan"] is None and "is queued" in body
    assert reverse("run-cancel", kwargs={"ws": loaded.slug, "pk": going.pk}) in body  # cancel, as on the run page
    assert 'http-equiv="refresh"' in body
    page = _get(client, alice, "run", ws=loaded.slug, pk=going.pk).content.decode()  # the run page links back
    assert reverse("counter-campaign-run", kwargs={"ws": loaded.slug, "pk": going.pk}) in page


def test_the_csv_lists_the_chosen_accounts_in_order(client, alice, loaded, planned):
    r = _get(client, alice, "counter-campaign-export", ws=loaded.slug, pk=planned.pk)
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    assert f"newsroom-counter-campaign-{planned.pk}.csv" in r["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    seeds = list(InfluenceMaxSeed.objects.filter(run=planned).order_by("rank").select_related("account"))
    assert [int(x["twitter_id"]) for x in rows] == [s.account.twitter_id for s in seeds]
    assert [float(x["marginal_gain"]) for x in rows] == [s.gain for s in seeds]
    assert [x["top_by_influence"] for x in rows] == [str(s.in_baseline).lower() for s in seeds]


def test_a_run_without_results_has_no_csv(client, alice, loaded):
    going = services.compute_run_start(
        workspace=loaded, backend="cpu", algorithm="influence_max", params={"publisher": _b(loaded).pk, "k": 2}
    )
    assert _get(client, alice, "counter-campaign-export", ws=loaded.slug, pk=going.pk).status_code == 404


def test_another_workspace_s_plans_and_publishers_answer_404(client, bob, loaded, planned):
    assert _get(client, bob, "counter-campaign", ws=loaded.slug, publisher=102).status_code == 404
    assert _get(client, bob, "counter-campaign-run", ws=loaded.slug, pk=planned.pk).status_code == 404
    assert _get(client, bob, "counter-campaign-export", ws=loaded.slug, pk=planned.pk).status_code == 404
    # in bob's own workspace, A's run and publisher do not exist
    assert _get(client, bob, "counter-campaign-run", ws="lab", pk=planned.pk).status_code == 404
    assert _get(client, bob, "counter-campaign", ws="lab", publisher=102).status_code == 404


def test_a_run_of_another_algorithm_is_not_a_plan(client, alice, loaded, planned):
    other = ComputeRun.objects.filter(workspace=loaded).exclude(algorithm="influence_max").first()
    assert other is not None  # the import's influence run
    assert _get(client, alice, "counter-campaign-run", ws=loaded.slug, pk=other.pk).status_code == 404


def test_the_method_s_page_is_served(client):
    r = client.get(reverse("docs", kwargs={"name": "influence_max"}))
    assert r.status_code == 200 and "IMM" in r.content.decode()


def test_the_planner_page_issues_as_many_queries_for_five_accounts_as_for_one(client, alice, loaded, run_tasks):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(alice)
    counts = []
    for k in (1, 5):
        run = run_tasks(
            services.compute_run_start,
            workspace=loaded,
            backend="cpu",
            algorithm="influence_max",
            params={"publisher": _b(loaded).pk, "k": k, "evaluate": 200, "batches": 1},
        )
        with CaptureQueriesContext(connection) as queries:
            r = client.get(reverse("counter-campaign-run", kwargs={"ws": loaded.slug, "pk": run.pk}))
        assert r.status_code == 200 and len(r.context["plan"]["seeds"]) == k
        counts.append(len(queries))
    assert counts[0] == counts[1], counts  # no query per chosen account or per top spreader


def test_the_planners_numbers_are_written_like_every_other_pages(client, alice, loaded, planned):
    # issue 40: "audience of 72763" without a thousands separator; every number goes through monitor.numbers
    InfluenceMaxResult.objects.filter(run=planned).update(
        total_weight=72763.0, spread=1234.5, spread_ci_low=1200.25, spread_ci_high=1268.75, estimate=1230.0
    )
    body = " ".join(_get(client, alice, "counter-campaign-run", ws=loaded.slug, pk=planned.pk).content.decode().split())
    assert "audience of 72,763 on average" in body and "72763" not in body
    assert f"reach {readable(1234.5)} " in body and "between 1,200 and 1,269" in body
    assert "1234.5" not in re.sub(
        r"<script.*?</script>|title=\"[^\"]*\"", "", body, flags=re.S
    )  # only in data and titles
