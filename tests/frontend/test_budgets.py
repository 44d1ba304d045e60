"""Cost budgets on the pages: each analysis's start form carries its live estimate, a start beyond the budget
answers 400 with the message on the field that drives the cost, the run page shows the estimate beside what the
run measured, an influence recompute beyond the budget says why, and the admin shows the limits in force."""

from __future__ import annotations

import pytest
from django.urls import reverse

from monitor import services
from monitor.models import ComputeRun
from tests.webapp import THESIS


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


PLAN = {"k": 2, "model": "uniform", "p": 0.01, "strength": 20, "method": "imm", "eps": 0.01, "unit": "accounts"}
PLAN |= {"evaluate": 500, "seed": 0, "batches": 1, "backend": "cpu"}


def test_a_plan_beyond_the_budget_answers_400_with_the_message_on_eps(client, alice, loaded, monkeypatch):
    from compute import costs

    monkeypatch.setattr(costs, "RR_SECONDS_PER_SET", 0.01)  # the thesis' audience of 5 as if it were millions
    client.force_login(alice)
    r = client.post(reverse("counter-campaign-start", kwargs={"ws": loaded.slug, "publisher": 102}), PLAN)
    assert r.status_code == 400
    (msg,) = r.context["form"].errors["eps"]
    assert msg.startswith("eps: 0.01 with k 2 needs about") and "budget is 30 min" in msg, msg
    assert "raise eps to at least" in msg, msg
    assert msg in r.content.decode().replace("&#x27;", "'")
    assert not ComputeRun.objects.filter(algorithm="influence_max").exists()


def test_a_network_run_beyond_the_budget_names_samples_on_its_field(client, alice, loaded, monkeypatch):
    from compute import costs

    # the thesis' 6 accounts as if they were a million: exact betweenness 40 min, one sampled source fits
    monkeypatch.setattr(costs, "BTW_SECONDS_PER_UNIT", 20.0)
    client.force_login(alice)
    data = {"graph": "follows", "samples": 0, "seed": 0, "backend": "cpu"}
    r = client.post(reverse("network-start", kwargs={"ws": loaded.slug}), data)
    assert r.status_code == 400
    (msg,) = r.context["form"].errors["samples"]
    assert msg.startswith("samples: 0 is exact betweenness") and "(lower samples to at most 1)" in msg, msg


@pytest.mark.parametrize(
    ("name", "kwargs", "algorithm", "fixed"),
    [
        ("network", {}, "network", ""),
        ("counter-campaign", {"publisher": 102}, "influence_max", 'data-param-publisher="102"'),
        ("account", {"twitter_id": 102}, "wtf", 'data-param-accounts="102" data-param-direction="both"'),
    ],
)
def test_each_start_form_carries_its_live_estimate(client, alice, loaded, name, kwargs, algorithm, fixed):
    client.force_login(alice)
    body = client.get(reverse(name, kwargs={"ws": loaded.slug, **kwargs})).content.decode()
    url = reverse("api:run-estimate", kwargs={"ws": loaded.slug})
    assert f'data-estimate-url="{url}" data-algorithm="{algorithm}"' in body
    assert fixed in body and "frontend/estimate.js" in body


def test_the_run_page_shows_the_estimate_beside_the_measured_time(client, alice, loaded, run_tasks):
    run = run_tasks(
        services.compute_run_start, workspace=loaded, backend="cpu", algorithm="network", params={"samples": 0}
    )
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.estimate["drivers"]["sources"] == 6
    client.force_login(alice)
    body = client.get(reverse("run", kwargs={"ws": loaded.slug, "pk": run.pk})).content.decode()
    assert "Estimated cost" in body and "of worker time on one CPU worker" in body and "sources 6" in body
    assert "budget 30 min per run, 2.0 GB per batch" in body
    assert "(its batches, summed)" in body


def test_an_influence_recompute_beyond_the_budget_says_why(client, alice, loaded, monkeypatch):
    from compute import costs

    monkeypatch.setattr(costs, "INFLUENCE_SECONDS_PER_NODE", 1e6)
    client.force_login(alice)
    r = client.post(
        reverse("recompute", kwargs={"ws": loaded.slug}), {"orphans": "strict", "backend": "cpu"}, follow=True
    )
    assert r.status_code == 200 and "this workspace&#x27;s budget is 30 min" in r.content.decode()
    assert ComputeRun.objects.filter(workspace=loaded).count() == 1  # the upload's run only


def test_the_admin_shows_the_limits_in_force(admin_client, ws_a):
    ws_a.budget_run_seconds = 600
    ws_a.save()
    body = admin_client.get(reverse("admin:monitor_workspace_change", args=[ws_a.pk])).content.decode()
    assert "Limits in force" in body and "10 min of estimated worker time per run, 2,048 MB" in body
