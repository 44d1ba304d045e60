"""Every analysis run is estimated before it is queued and refused beyond its workspace's budget."""

import pytest

from monitor.limits import MB

pytestmark = pytest.mark.django_db


# --- estimates and the check -----------------------------------------------------------------------------------


@pytest.fixture
def thesis(ws_a, alice, import_files):
    from tests.webapp import THESIS

    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def test_every_run_records_its_estimate_and_budget(thesis):
    from monitor.services import compute_run_start

    run = compute_run_start(workspace=thesis, algorithm="wtf", params={"accounts": ["102", "105"]})
    run.refresh_from_db()
    e = run.estimate
    assert e["algorithm"] == "wtf" and e["drivers"]["seeds"] == 2 and e["drivers"]["directions"] == 2
    assert e["budget"] == {"run_seconds": 1800, "run_memory_bytes": 2048 * MB} and e["held"] is True
    upload_run = thesis.compute_runs.get(algorithm="influence")
    assert upload_run.estimate["algorithm"] == "influence" and upload_run.estimate["held"] is False
    assert upload_run.estimate["drivers"]["cascades"] == upload_run.n_cascades


def test_an_upload_s_influence_run_is_recorded_but_not_refused(ws_a, alice, import_files, monkeypatch):
    """The data of an upload must be computed: its run is estimated and kept, the upload limits bound it."""
    from compute import costs
    from tests.webapp import THESIS

    monkeypatch.setattr(costs, "INFLUENCE_SECONDS_PER_NODE", 1e6)  # every participant a million seconds
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    run = ws_a.compute_runs.get(algorithm="influence")
    assert run.status == run.Status.DONE and run.estimate["seconds"] > 1800 and run.estimate["held"] is False


def test_an_analyst_s_influence_recompute_is_held_to_the_budget(thesis, monkeypatch):
    from django.core.exceptions import ValidationError

    from compute import costs
    from monitor.services import compute_run_start

    monkeypatch.setattr(costs, "INFLUENCE_SECONDS_PER_NODE", 1e6)
    with pytest.raises(ValidationError) as exc:
        compute_run_start(workspace=thesis)
    msg = exc.value.message_dict["tweets"][0]
    assert msg.startswith("tweets: ") and "this workspace's budget is 30 min" in msg, msg
    assert thesis.compute_runs.count() == 1  # the upload's only


def test_a_wtf_run_beyond_the_budget_names_its_seeds(thesis, monkeypatch):
    from django.core.exceptions import ValidationError

    from compute import costs
    from monitor.services import compute_run_start

    monkeypatch.setattr(costs, "MONEY_SECONDS_PER_MEMBER_ITER", 10.0)
    with pytest.raises(ValidationError) as exc:
        compute_run_start(workspace=thesis, algorithm="wtf", params={"accounts": ["102", "105"], "max_iter": 500})
    errors = exc.value.message_dict
    assert list(errors) == ["max_iter"] and "2 seeds x 2 direction(s)" in errors["max_iter"][0], errors


def test_a_network_run_whose_communities_alone_exceed_the_budget_is_refused_by_communities(thesis, monkeypatch):
    from django.core.exceptions import ValidationError

    from compute import costs
    from monitor.services import compute_run_start

    monkeypatch.setattr(costs, "COMMUNITY_SECONDS_PER_ARC", 1000.0)  # 16 arcs: four and a half hours
    with pytest.raises(ValidationError) as exc:
        compute_run_start(workspace=thesis, algorithm="network", params={"samples": 0})
    errors = exc.value.message_dict
    assert list(errors) == ["communities"] and "(leave communities off)" in errors["communities"][0], errors
    assert "this workspace's budget is 30 min" in errors["communities"][0]
    run = compute_run_start(workspace=thesis, algorithm="network", params={"samples": 0, "communities": False})
    assert run.estimate["drivers"]["communities"] is False and run.estimate["drivers"]["communities_seconds"] == 0


def test_a_plain_walks_run_with_too_many_walks_is_refused_by_its_walks(thesis):
    from django.core.exceptions import ValidationError

    from monitor.services import compute_run_start

    params = {"accounts": ["102"], "method": "walks"}
    run = compute_run_start(workspace=thesis, algorithm="wtf", params=params | {"walks": 1e4})
    assert run.estimate["drivers"]["method"] == "walks" and run.estimate["time_param"] == "walks"
    with pytest.raises(ValidationError) as exc:
        compute_run_start(workspace=thesis, algorithm="wtf", params=params | {"walks": 1e9})
    msg = exc.value.message_dict["walks"][0]
    assert "walks with 1e+09 walks from each seed for 1 seeds x 2 direction(s)" in msg and "(fewer walks" in msg, msg


def test_a_fora_run_with_too_many_walks_is_refused_by_its_walks_whatever_the_graph(thesis):
    """The thesis' graph has six accounts: a local method's cost is its work bound, not the graph's size."""
    from django.core.exceptions import ValidationError

    from monitor.services import compute_run_start

    params = {"accounts": ["102", "105"], "method": "fora", "epsilon": 1e-6}
    run = compute_run_start(workspace=thesis, algorithm="wtf", params=params | {"walks": 1e4})
    assert run.estimate["drivers"]["method"] == "fora" and run.estimate["seconds"] < 1800
    with pytest.raises(ValidationError) as exc:
        compute_run_start(workspace=thesis, algorithm="wtf", params=params | {"walks": 1e9})
    errors = exc.value.message_dict
    assert list(errors) == ["walks"], errors
    msg = errors["walks"][0]
    assert "fora with epsilon 1e-06, 1e+09 walks per unit of residual for 2 seeds x 2 direction(s)" in msg, msg
    assert "fewer walks or a larger epsilon" in msg, msg


def test_memory_beyond_the_budget_is_refused_too(thesis):
    from django.core.exceptions import ValidationError

    from monitor.services import compute_run_start

    thesis.budget_run_memory_mb = 1
    thesis.budget_run_seconds = 10**6
    thesis.save()
    with pytest.raises(ValidationError) as exc:
        compute_run_start(
            workspace=thesis, algorithm="influence_max", params={"publisher": _pk(thesis, 102), "k": 2, "eps": 1e-4}
        )
    msg = exc.value.message_dict["eps"][0]
    assert "held at once" in msg and "per batch" in msg and "1 MB" in msg, msg


def _pk(ws, twitter_id: int) -> int:
    from monitor.models import Account

    return Account.objects.get(workspace=ws, twitter_id=twitter_id).pk
