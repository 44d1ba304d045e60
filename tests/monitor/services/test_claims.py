"""Claims' writes: a claim is saved only with a name unique in its workspace and a search that reads, each refusal
naming its field and writing nothing; tracking is per workspace, idempotent and bounded; purging a workspace's data
keeps its claims and forgets the accounts they tracked."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitor import services
from monitor.models import Claim
from monitor.models.claims import MAX_TRACKED
from tests.claimed import claimed_csv


@pytest.fixture
def claimed(ws_a, import_files, tmp_path):
    import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    return ws_a


@pytest.mark.parametrize(
    "name, query, field, why",
    [
        ("", "5g", "name", "give the claim a name"),
        ("x" * 201, "5g", "name", "at most 200"),
        ("A", "", "query", "type a word"),
        ("A", "-5g", "query", "not excluded"),
        ("A", "5g " * 200, "query", "at most 500"),
    ],
)
def test_a_claim_is_refused_naming_the_field(ws_a, alice, name, query, field, why):
    with pytest.raises(ValidationError) as e:
        services.claim_create(workspace=ws_a, user=alice, name=name, query=query)
    assert why in " ".join(e.value.message_dict[field])
    assert not Claim.objects.exists()


def test_names_are_unique_per_workspace_and_trimmed(ws_a, ws_b, alice, bob):
    claim = services.claim_create(workspace=ws_a, user=alice, name="  5G  ", query=" 5g ")
    assert (claim.name, claim.query) == ("5G", "5g")
    with pytest.raises(ValidationError, match="already has a claim named"):
        services.claim_create(workspace=ws_a, user=alice, name="5G", query="towers")
    services.claim_create(workspace=ws_b, user=bob, name="5G", query="towers")  # another workspace: fine
    other = services.claim_create(workspace=ws_a, user=alice, name="Towers", query="towers")
    with pytest.raises(ValidationError, match="already has a claim named"):
        services.claim_update(claim=other, name="5G")
    services.claim_update(claim=claim, name="5G")  # its own name: fine


def test_tracking_is_per_workspace_idempotent_and_bounded(claimed, ws_b, alice, monkeypatch):
    claim = services.claim_create(workspace=claimed, user=alice, name="5G", query="5g")
    a101 = claimed.accounts.get(twitter_id=101)
    services.claim_track(claim=claim, account=a101)
    claim = services.claim_track(claim=claim, account=a101)
    assert claim.tracked == [a101.pk]
    elsewhere = ws_b.accounts.create(twitter_id=1, screen_name="x")
    with pytest.raises(ValidationError, match="not in the claim's workspace"):
        services.claim_track(claim=claim, account=elsewhere)
    monkeypatch.setattr("monitor.services.claims.MAX_TRACKED", 1)
    with pytest.raises(ValidationError, match="at most 1 accounts"):
        services.claim_track(claim=claim, account=claimed.accounts.get(twitter_id=102))
    assert services.claim_untrack(claim=claim, account_pk=a101.pk).tracked == []
    assert MAX_TRACKED == 200


def test_a_purge_keeps_the_claims_and_forgets_their_tracked_accounts(claimed, alice):
    claim = services.claim_create(workspace=claimed, user=alice, name="5G", query="5g")
    services.claim_track(claim=claim, account=claimed.accounts.get(twitter_id=101))
    services.workspace_purge(workspace=claimed, delete_workspace=False)
    claim.refresh_from_db()
    assert claim.query == "5g" and claim.tracked == []
