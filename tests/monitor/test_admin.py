"""The admin: every model is registered and its pages render on real data, the big changelists issue a fixed
number of queries and don't count whole tables, engine-written rows are view-only, and deleting a workspace
removes its bulk rows."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from monitor import models as m
from monitor import services
from monitor.admin import EstimatedCountPaginator
from tests.webapp import THESIS

MODELS = list(apps.get_app_config("monitor").get_models())

# a search term per model that finds the thesis example's rows (Twitter ids, screen names, names; run numbers
# depend on the database's sequences, so they are read from the object)
SEARCH = {
    m.Workspace: "newsroom",
    m.Membership: "alice",
    m.Account: "102",
    m.FollowerCount: "b",
    m.Follow: "101",
    m.Publisher: "102",
    m.Tweet: "1000",
    m.Retweet: "1000",
    m.GivenEdge: "1000",
    m.Collection: "tweets",
    m.CollectionFile: "follows",
    m.ComputeRun: lambda run: str(run.pk),
    m.ComputeBatch: lambda batch: str(batch.run_id),
    m.CascadeInfluence: "1000",
    m.CascadeGraph: "1000",
    m.DailyInfluence: "102",
    m.PublisherDay: "b",
    m.NetworkAccount: "102",
    m.NetworkSummary: lambda summary: str(summary.run_id),
    m.NetworkPartial: lambda partial: str(partial.run_id),
    m.InfluenceMaxResult: "102",
    m.InfluenceMaxSeed: lambda seed: str(seed.run_id),
    m.InfluenceMaxPartial: lambda part: str(part.run_id),
    m.CoordinationSummary: lambda summary: str(summary.run_id),
    m.CoordinationEdge: lambda edge: str(edge.run_id),
    m.CoordinationCluster: lambda cluster: str(cluster.run_id),
    m.CoordinationMember: lambda member: str(member.run_id),
    m.WtfResult: "105",
    m.WtfEntry: "101",
    m.Lease: "worker-host",
    m.OutboxTask: "ingest",
    m.ApiToken: "alice",
    m.Notice: "failed",
    m.DerivedRowsMark: "1",  # written by the migration
    m.StreamToken: "feeder",
    m.StreamEvent: "1000",
    m.StreamArrival: "1000",
    m.Invitation: "newcomer@",
    m.Claim: "towers",
    m.TweetDocument: "1000",
    m.SearchPairs: lambda row: row.workspace.slug,
}
BULK = (m.Retweet, m.Follow, m.FollowerCount, m.CascadeInfluence, m.DailyInfluence, m.PublisherDay)


def url(model, view: str, *args) -> str:
    return reverse(f"admin:monitor_{model._meta.model_name}_{view}", args=args)


def bulk_rows(ws) -> dict[str, int]:
    tweets = m.Tweet.objects.filter(workspace=ws).values("pk")
    accounts = m.Account.objects.filter(workspace=ws).values("pk")
    return {
        "retweets": m.Retweet.objects.filter(tweet__in=tweets).count(),
        "follows": m.Follow.objects.filter(workspace=ws).count(),
        "follower counts": m.FollowerCount.objects.filter(account__in=accounts).count(),
        "cascade influence": m.CascadeInfluence.objects.filter(tweet__in=tweets).count(),
        "daily influence": m.DailyInfluence.objects.filter(workspace=ws).count(),
        "publisher days": m.PublisherDay.objects.filter(workspace=ws).count(),
        "tweets": m.Tweet.objects.filter(workspace=ws).count(),
        "accounts": m.Account.objects.filter(workspace=ws).count(),
    }


@pytest.fixture
def thesis(ws_a, alice, import_files, settings):
    """Workspace A with the thesis example imported and computed, plus one given edge (no thesis input has
    one)."""
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 10  # the runs left halfway below must not hold the next ones back
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == m.Collection.Status.DONE, c.error
    tweet = m.Tweet.objects.get(workspace=ws_a, tweet_id=1000)
    accounts = {a.screen_name: a for a in m.Account.objects.filter(workspace=ws_a)}
    m.GivenEdge.objects.create(tweet=tweet, src=accounts["b"], dst=accounts["d"])
    # a network run, and a second one halfway: its betweenness block stored, not yet added up by the finish
    for finished in (True, False):
        run = services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="network", params={"samples": 0})
        for batch in run.batches.order_by("index")[0 if finished else 1 :]:
            services.compute_batch_run(batch_id=batch.pk)
    # a counter-campaign plan, and a second one halfway: one batch's RR sets stored, not yet merged by the finish
    for finished in (True, False):
        params = {"publisher": accounts["b"].pk, "k": 2, "evaluate": 200, "batches": 2}
        run = services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="influence_max", params=params)
        for batch in run.batches.order_by("index")[: 2 if finished else 1]:
            services.compute_batch_run(batch_id=batch.pk)
    # a who-amplifies-whom run: e's lists (a is in both of the follows direction)
    wtf = services.compute_run_start(workspace=ws_a, tweet_pks=[], algorithm="wtf", params={"accounts": ["105"]})
    services.compute_batch_run(batch_id=wtf.batches.get().pk)
    # a coordination run: every two retweeters of a tweet within a day of each other are a pair
    params = {"window": 86_400, "min_count": 1}
    coord = services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="coordination", params=params)
    services.compute_batch_run(batch_id=coord.batches.get().pk)
    assert m.CoordinationEdge.objects.filter(run=coord).exists()
    # one row of each operations table (a worker's lease, a kept task, a token, a notice, an invitation, a claim)
    from django.utils import timezone

    now = timezone.now()
    m.Lease.objects.create(kind="batch", object_id=1, holder="worker-host:42", started_at=now, beat_at=now)
    m.OutboxTask.objects.create(name="monitor.tasks.ingest_collection", args=[c.pk], error="ConnectionError")
    services.api_token_create(user=alice, name="feed")
    m.Notice.objects.create(workspace=ws_a, user=alice, message="Compute run 1 failed")
    services.claim_create(workspace=ws_a, user=alice, name="5G towers", query="5g towers")
    # the live stream: a token and a dead letter
    from monitor.services.stream import stream_accept, stream_token_create

    stream_token_create(workspace=ws_a, name="feeder")
    line = '{"tweet_id": "2000", "retweeted_tweet_id": "1000", "user_id": "9", "created_at": 1600000000}'
    acc = stream_accept(workspace=ws_a, lines=[(1, line)])
    m.StreamEvent.objects.filter(pk=acc.first_id).update(status="dead", error="its original never came")
    m.StreamArrival.objects.create(workspace=ws_a, cascade_key=1000, second=now, events=2, retweets=2, applied_at=now)
    m.Invitation.objects.create(
        workspace=ws_a, email="newcomer@example.org", token_hash="f" * 64, invited_by=alice, expires_at=now
    )
    return ws_a


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


def test_it_registers_every_model():
    missing = [model.__name__ for model in MODELS if model not in admin.site._registry]
    assert not missing
    assert set(SEARCH) == set(MODELS)
    assert admin.site.site_header == "Spreadwatch admin"


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_it_renders_the_changelist_search_and_change_page(admin_client, thesis, model):
    if model is m.TweetDocument and connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's triggers write the search documents; SQLite has none")
    if model is m.SearchPairs:  # written by the beat task on large workspaces only: one as it would write it
        m.SearchPairs.objects.create(workspace=thesis, lexemes=["a", "b"], documents=7, checked_version=0)
    r = admin_client.get(url(model, "changelist"))
    assert r.status_code == 200
    assert r.context["cl"].result_count > 0

    obj = model.objects.order_by("pk").first()
    term = SEARCH[model](obj) if callable(SEARCH[model]) else SEARCH[model]
    r = admin_client.get(url(model, "changelist"), {"q": term})
    assert r.status_code == 200
    assert r.context["cl"].result_count > 0, f"searching {model.__name__} for {term!r} found nothing"

    r = admin_client.get(url(model, "change", obj.pk))
    assert r.status_code == 200


def test_it_finds_twitter_ids_exactly(admin_client, thesis):
    r = admin_client.get(url(m.Tweet, "changelist"), {"q": "1000"})
    assert [t.tweet_id for t in r.context["cl"].result_list] == [1000]
    r = admin_client.get(url(m.Account, "changelist"), {"q": "10"})  # no id is 10, no screen name has it
    assert r.context["cl"].result_count == 0
    r = admin_client.get(url(m.Retweet, "changelist"), {"q": "2000"})
    assert {rt.tweet.tweet_id for rt in r.context["cl"].result_list} == {2000}
    assert r.context["cl"].result_count == 4


def test_it_finds_an_accounts_cascade_rows_by_its_name_or_id(admin_client, thesis):
    """Through the cascades it took part in (no index leads with the account): the same rows as a filter."""
    b = m.Account.objects.get(workspace=thesis, screen_name="b")
    want = set(m.CascadeInfluence.objects.filter(account=b).values_list("pk", flat=True))
    assert len(want) > 1
    for term in ("b", f" {b.twitter_id} "):
        r = admin_client.get(url(m.CascadeInfluence, "changelist"), {"q": term})
        assert {row.pk for row in r.context["cl"].result_list} == want, term
    r = admin_client.get(url(m.CascadeInfluence, "changelist"), {"q": "99999999999999999999"})  # over int64
    assert r.status_code == 200 and r.context["cl"].result_count == 0


def test_it_finds_a_tweets_cascade_rows_by_its_status_id_and_lists_engine_rows_by_their_unique_key(
    admin_client, thesis
):
    """The per-cascade and daily rows' ``id`` has no index (migration 0044): their lists read the unique key's
    index backwards, never sorted by ``id``, and a search reads the (tweet, account) key."""
    tweet = m.Tweet.objects.filter(workspace=thesis, influence__isnull=False).distinct().first()
    want = set(m.CascadeInfluence.objects.filter(tweet=tweet).values_list("pk", flat=True))
    want |= set(m.CascadeInfluence.objects.filter(account__twitter_id=tweet.tweet_id).values_list("pk", flat=True))
    assert len(want) > 1
    r = admin_client.get(url(m.CascadeInfluence, "changelist"), {"q": str(tweet.tweet_id)})
    assert {row.pk for row in r.context["cl"].result_list} == want
    for model, key in (
        (m.CascadeInfluence, ("-tweet_id", "-account_id")),
        (m.DailyInfluence, ("-workspace_id", "-publisher_id", "-day", "-label", "-account_id")),
    ):
        r = admin_client.get(url(model, "changelist"))
        assert r.status_code == 200 and r.context["cl"].result_count > 0
        order = tuple(r.context["cl"].queryset.query.order_by)  # the admin's ordering, then the queryset's: the same
        assert order[: len(key)] == key and set(order) == set(key), (model, order)


@pytest.mark.parametrize(
    ("model", "key"),
    [
        (m.Retweet, ("tweet_id", "retweeter_id")),
        (m.Follow, ("follower_id", "followee_id")),
        (m.FollowerCount, ("account_id", "observed_at")),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_it_lists_follows_retweets_and_snapshots_by_their_unique_key_and_opens_a_row_by_its_id(
    admin_client, thesis, model, key
):
    """Their partitions have no index on ``id`` (migration 0045): the list reads the unique key's index backwards,
    never sorted by ``id``, and a row's change page still opens by its ``id``."""
    r = admin_client.get(url(model, "changelist"))
    assert r.status_code == 200
    order = tuple(r.context["cl"].queryset.query.order_by)  # the admin's ordering, then the queryset's: the same
    assert order[:2] == tuple(f"-{k}" for k in key) and set(order) == set(order[:2]), order
    rows = [tuple(getattr(row, k) for k in key) for row in r.context["cl"].result_list]
    assert len(rows) == model.objects.count() > 1 and rows == sorted(rows, reverse=True)
    last = r.context["cl"].result_list[len(rows) - 1]
    page = admin_client.get(url(model, "change", last.pk))
    assert page.status_code == 200 and page.context["original"] == last


def test_it_never_renders_a_select_of_accounts_or_tweets(admin_client, thesis):
    for model in (m.Retweet, m.Follow, m.FollowerCount, m.GivenEdge, m.Tweet, m.Publisher):
        html = admin_client.get(url(model, "change", model.objects.order_by("pk").first().pk)).content.decode()
        for fk in ("tweet", "retweeter", "follower", "followee", "account", "author", "src", "dst", "collection"):
            assert f'<select name="{fk}"' not in html, f"{model.__name__}.{fk} renders a select"


@pytest.mark.parametrize(
    ("model", "max_queries"),
    [(m.Retweet, 8), (m.CascadeInfluence, 8), (m.DailyInfluence, 8), (m.Follow, 8), (m.Tweet, 9)],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_it_lists_big_tables_in_a_fixed_number_of_queries(
    admin_client, thesis, django_assert_max_num_queries, monkeypatch, model, max_queries
):
    """Measured: 5 to 7 queries (session, user, the workspace filter's choices, the count, the page)."""
    changelist = url(model, "changelist")
    admin_client.get(changelist)
    with django_assert_max_num_queries(max_queries):
        r = admin_client.get(changelist)
    assert r.status_code == 200 and len(r.context["cl"].result_list) == model.objects.count()

    # the limit does catch a query per row: without list_select_related the same page goes past it
    monkeypatch.setattr(admin.site._registry[model], "list_select_related", ())
    with CaptureQueriesContext(connection) as ctx:
        admin_client.get(changelist)
    assert len(ctx.captured_queries) > max_queries


def test_it_takes_the_row_estimate_for_unfiltered_big_changelists(admin_client, thesis, monkeypatch):
    monkeypatch.setattr(EstimatedCountPaginator, "estimate_above", 1)
    with connection.cursor() as cur:
        # as an import does: the workspace's partition, not the parent (monitor/partitions.py); it sees this
        # transaction's rows: reltuples = 9
        cur.execute(f"ANALYZE monitor_retweet_w{thesis.pk}")
    with CaptureQueriesContext(connection) as ctx:
        r = admin_client.get(url(m.Retweet, "changelist"))
    assert r.context["cl"].result_count == m.Retweet.objects.count() == 9
    assert not [q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"] and "monitor_retweet" in q["sql"]]

    with CaptureQueriesContext(connection) as ctx:  # a filtered list is counted exactly
        r = admin_client.get(url(m.Retweet, "changelist"), {"q": "2000"})
    assert r.context["cl"].result_count == 4
    assert [q["sql"] for q in ctx.captured_queries if "COUNT(" in q["sql"] and "monitor_retweet" in q["sql"]]


def test_it_shows_json_fields_pretty_printed_and_computed_fields_read_only(admin_client, thesis):
    c = m.Collection.objects.get(workspace=thesis)
    html = admin_client.get(url(m.Collection, "change", c.pk)).content.decode()
    assert "<pre>{\n" in html
    assert 'name="counts"' not in html and 'name="status"' not in html and 'name="name"' in html

    tweet = m.Tweet.objects.get(workspace=thesis, tweet_id=1000)
    html = admin_client.get(url(m.Tweet, "change", tweet.pk)).content.decode()
    for field in ("compute_status", "n_participants", "reach", "compute_run", "tweet_id"):
        assert f'name="{field}"' not in html
    assert 'name="label"' in html

    run = m.ComputeRun.objects.get(workspace=thesis, algorithm="influence")
    html = admin_client.get(url(m.ComputeRun, "change", run.pk)).content.decode()
    assert "batches-0" in html or "Compute batch" in html  # the batch inline
    assert 'name="status"' not in html


@pytest.mark.parametrize(
    "model",
    [
        m.ComputeBatch,
        m.CascadeInfluence,
        m.DailyInfluence,
        m.PublisherDay,
        m.NetworkAccount,
        m.NetworkSummary,
        m.InfluenceMaxResult,
        m.InfluenceMaxSeed,
        m.WtfResult,
        m.WtfEntry,
        m.CoordinationEdge,
        m.CoordinationCluster,
    ],
    ids=lambda v: v.__name__,
)
def test_it_keeps_engine_rows_view_only(admin_client, thesis, model):
    assert admin_client.get(url(model, "add")).status_code == 403
    obj = model.objects.order_by("pk").first()
    r = admin_client.get(url(model, "change", obj.pk))
    assert r.status_code == 200 and not r.context["has_change_permission"]
    assert admin_client.post(url(model, "change", obj.pk), {}).status_code == 403
    assert admin_client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=obj.pk).exists()


def test_it_refuses_to_add_uploads_and_runs_outside_the_services(admin_client, thesis):
    for model in (m.Collection, m.CollectionFile, m.ComputeRun):
        assert admin_client.get(url(model, "add")).status_code == 403


@pytest.fixture
def purges(monkeypatch):
    """The workspaces ``services.workspace_purge`` was called for (the ORM's cascade would delete the thesis
    example's rows too, only one by one)."""
    calls = []
    purge = services.workspace_purge

    def spy(*, workspace, **kw):
        calls.append(workspace.pk)
        return purge(workspace=workspace, **kw)

    monkeypatch.setattr(services, "workspace_purge", spy)
    return calls


def test_it_deletes_a_workspace_with_its_bulk_rows(admin_client, thesis, ws_b, import_files, purges):
    import_files(ws_b, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    kept = bulk_rows(ws_b)
    assert all(bulk_rows(thesis).values())

    with CaptureQueriesContext(connection) as ctx:
        r = admin_client.get(url(m.Workspace, "delete", thesis.pk))
    assert r.status_code == 200
    bulk_tables = [model._meta.db_table for model in (*BULK, m.GivenEdge)]
    assert not [q["sql"] for q in ctx.captured_queries if any(t in q["sql"] for t in bulk_tables)]
    html = r.content.decode()
    assert "Newsroom" in html and "deleted set-based" in html
    assert dict(r.context["model_count"])["tweets"] == 2

    r = admin_client.post(url(m.Workspace, "delete", thesis.pk), {"post": "yes"})
    assert r.status_code == 302
    assert purges == [thesis.pk]
    assert not m.Workspace.objects.filter(pk=thesis.pk).exists()
    assert not any(bulk_rows(thesis).values())
    assert not m.GivenEdge.objects.exists()
    assert not m.Collection.objects.filter(workspace=thesis.pk).exists()
    assert not m.Membership.objects.filter(workspace=thesis.pk).exists()
    assert bulk_rows(ws_b) == kept  # the other workspace is untouched


def test_it_deletes_workspaces_through_the_bulk_action(admin_client, thesis, purges):
    changelist = url(m.Workspace, "changelist")
    r = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [thesis.pk]})
    assert r.status_code == 200 and "deleted set-based" in r.content.decode()  # the confirmation page
    r = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [thesis.pk], "post": "yes"})
    assert r.status_code == 302
    assert purges == [thesis.pk]
    assert not m.Workspace.objects.exists()
    assert not any(bulk_rows(thesis).values())
    assert not any(model.objects.exists() for model in BULK)
