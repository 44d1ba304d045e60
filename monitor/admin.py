"""The Django admin for Spreadwatch's models: for operators, not analysts (they use the dashboard).

Several tables hold millions of rows (follows, retweets, follower counts, given edges, influence rows), so:

* every foreign key to a big table (Account, Tweet, Collection, ComputeRun) is a raw-id field: no change
  page renders a ``<select>`` of every account;
* every foreign key a changelist shows is in ``list_select_related``: no query per row;
* the bulk tables' changelists never count the whole table: ``show_full_result_count = False`` drops the
  "N total" count, and :class:`EstimatedCountPaginator` takes PostgreSQL's row estimate instead of
  ``COUNT(*)`` when the list is unfiltered;
* their list filters need no query to list their choices (choices, booleans, workspaces, date ranges) and
  they have no date hierarchy (it scans the table for its years and months); their searches match ids and
  screen names exactly; only the id column sorts (ordering by another column sorts the whole table), but
  for the tables whose ``id`` has no index: the follows, retweets and snapshots (migration 0045) and the
  per-cascade and daily rows (migration 0044) list in their unique key's order, backwards, and no column sorts
  (a row opened by its ``id`` is found by a scan);
* rows the engine writes (batches, influence, daily aggregates) are view-only: they are replaced by the next
  computation, so an edit would be silently lost or leave the aggregates inconsistent.

Deleting a workspace goes through ``services.workspace_purge``: the bulk tables have no database-level foreign
keys, and Django's collector would load their rows one by one, both to list them on the confirmation page
and to delete them.
"""

from __future__ import annotations

import json

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import capfirst

from . import services
from .admin_base import BigTableAdmin, EngineRowsAdmin, EstimatedCountPaginator
from .models import (
    Account,
    ApiToken,
    CascadeGraph,
    CascadeInfluence,
    Claim,
    Collection,
    CollectionFile,
    ComputeBatch,
    ComputeRun,
    DailyInfluence,
    DerivedRowsMark,
    Follow,
    FollowerCount,
    GivenEdge,
    Invitation,
    Lease,
    Membership,
    Notice,
    OutboxTask,
    Publisher,
    PublisherDay,
    Retweet,
    SearchPairs,
    StreamArrival,
    StreamEvent,
    StreamToken,
    Tweet,
    TweetDocument,
    Workspace,
)

admin.site.site_header = "Spreadwatch admin"
admin.site.site_title = "Spreadwatch admin"
admin.site.index_title = "Data and operations"


# --- helpers -----------------------------------------------------------------------------------------------


def pretty_json(value) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str))


def json_display(field: str, description: str | None = None):
    """A read-only admin field showing the JSON field ``field`` pretty-printed."""

    @admin.display(description=description or field.replace("_", " "))
    def show(self, obj):
        return pretty_json(getattr(obj, field))

    show.__name__ = f"{field}_json"
    return show


# --- workspaces and members --------------------------------------------------------------------------------


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)
    autocomplete_fields = ("user",)


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_at")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    # the unit is fixed by the first data (monitor/services/units.py)
    readonly_fields = ("unit", "created_at", "effective_limits")
    inlines = (MembershipInline,)
    list_per_page = 50
    fieldsets = (
        (None, {"fields": ("name", "slug", "unit", "created_at")}),
        (
            "Cost budgets",
            {
                "fields": ("budget_run_seconds", "budget_run_memory_mb", "max_runs_in_flight", "effective_limits"),
                "description": "Every analysis is estimated before it is queued and refused beyond these limits. "
                "Leave a field empty for the deployment's default (SPREADWATCH_BUDGET_RUN_SECONDS, "
                "SPREADWATCH_BUDGET_RUN_MEMORY_MB, SPREADWATCH_MAX_RUNS_IN_FLIGHT).",
            },
        ),
    )

    @admin.display(description="Limits in force")
    def effective_limits(self, obj) -> str:
        """The limits the workspace's runs are held to now, its own or the deployment's defaults filled in."""
        from .services.budgets import duration, workspace_limits

        if obj is None or obj.pk is None:
            return "the deployment's defaults, until an admin sets the fields above"
        lim = workspace_limits(obj)
        return (
            f"{duration(lim.run_seconds)} of estimated worker time per run, {lim.run_memory_mb:,} MB of estimated "
            f"peak memory per batch, {lim.runs_in_flight} run(s) queued to workers at once"
        )

    # Deleting: the bulk tables have no database-level foreign keys and hold millions of rows. The default
    # confirmation page lists every related row, and the default delete removes them one collector pass at
    # a time; both go through counts and services.workspace_purge (set-based) instead.

    # what a workspace's deletion removes: deleting it asks for the delete permission of each, as Django does
    purged_models = (
        Account, Tweet, Publisher, Retweet, Follow, FollowerCount, GivenEdge, CascadeInfluence, DailyInfluence,
        PublisherDay, Collection, CollectionFile, ComputeRun, ComputeBatch, Membership,
    )  # fmt: skip

    def get_deleted_objects(self, objs, request):
        objs = list(objs)
        ids = [ws.pk for ws in objs]
        opts = self.model._meta
        deleted = []
        for ws in objs:
            url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[ws.pk])
            deleted.append(format_html('{}: <a href="{}">{}</a>', capfirst(opts.verbose_name), url, ws))
            deleted.append(
                [
                    "its accounts, tweets, publishers, collections, compute runs and memberships",
                    "their follows, follower counts, retweets, given edges and influence rows (deleted set-based)",
                ]
            )
        model_count = {
            opts.verbose_name_plural: len(objs),
            Account._meta.verbose_name_plural: Account.objects.filter(workspace__in=ids).count(),
            Tweet._meta.verbose_name_plural: Tweet.objects.filter(workspace__in=ids).count(),
            Publisher._meta.verbose_name_plural: Publisher.objects.filter(workspace__in=ids).count(),
            Collection._meta.verbose_name_plural: Collection.objects.filter(workspace__in=ids).count(),
            ComputeRun._meta.verbose_name_plural: ComputeRun.objects.filter(workspace__in=ids).count(),
            Membership._meta.verbose_name_plural: Membership.objects.filter(workspace__in=ids).count(),
        }
        perms_needed = {
            str(model._meta.verbose_name)
            for model in (self.model, *self.purged_models)
            if not request.user.has_perm(f"{model._meta.app_label}.delete_{model._meta.model_name}")
        }
        return deleted, model_count, perms_needed, []

    def delete_model(self, request, obj) -> None:
        services.workspace_purge(workspace=obj)

    def delete_queryset(self, request, queryset) -> None:
        with transaction.atomic(using=queryset.db):
            for ws in queryset:
                services.workspace_purge(workspace=ws)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "workspace", "role", "created_at")
    list_filter = ("role", "workspace")
    list_select_related = ("user", "workspace")
    search_fields = ("user__username", "user__email", "workspace__name")
    autocomplete_fields = ("user",)
    readonly_fields = ("created_at",)
    list_per_page = 100


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Invitations are made by a workspace's owners on its settings page (the link is shown to them once and
    e-mailed; only its hash is stored): here an operator sees who accepted which, and may withdraw one."""

    list_display = ("email", "workspace", "role", "invited_by", "created_at", "expires_at", "accepted_by", "revoked_at")
    list_filter = ("role", "workspace")
    list_select_related = ("workspace", "invited_by", "accepted_by")
    search_fields = ("email", "workspace__name", "accepted_by__username")
    raw_id_fields = ("workspace", "invited_by", "accepted_by")
    readonly_fields = ("token_hash", "created_at", "accepted_at", "accepted_by")
    actions = ["withdraw"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Withdraw the selected invitations")
    def withdraw(self, request, queryset) -> None:
        from django.utils import timezone

        n = queryset.filter(accepted_at__isnull=True, revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Withdrew {n} invitation{'s' if n != 1 else ''}.")


# --- accounts and the follower graph -----------------------------------------------------------------------


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ("twitter_id", "screen_name", "workspace")
    list_filter = ("workspace",)
    list_select_related = ("workspace",)
    search_fields = ("=twitter_id", "screen_name")
    search_help_text = "An exact Twitter id, or part of a screen name."
    sortable_by = ()
    list_per_page = 50
    show_full_result_count = False
    paginator = EstimatedCountPaginator

    def get_readonly_fields(self, request, obj=None):
        return ("workspace", "twitter_id") if obj else ()

    def has_delete_permission(self, request, obj=None):
        # an account's rows are spread over the bulk tables and the daily aggregates, which a row-by-row
        # delete would leave stale: data leaves with its workspace (workspace_purge)
        return False


@admin.register(FollowerCount)
class FollowerCountAdmin(BigTableAdmin):
    list_display = ("id", "account", "observed_at", "count", "collection")
    list_filter = ("account__workspace",)
    list_select_related = ("account", "collection")
    search_fields = ("=account__twitter_id", "=account__screen_name")
    raw_id_fields = ("account", "collection")
    ordering = ("-account_id", "-observed_at")  # the partitions' unique key, read backwards (no index on id)
    sortable_by = ()


@admin.register(Follow)
class FollowAdmin(BigTableAdmin):
    list_display = ("id", "follower", "followee", "workspace", "collection")
    list_filter = ("workspace",)
    list_select_related = ("follower", "followee", "workspace", "collection")
    search_fields = (
        "=follower__twitter_id",
        "=followee__twitter_id",
        "=follower__screen_name",
        "=followee__screen_name",
    )
    raw_id_fields = ("follower", "followee", "collection")
    ordering = ("-follower_id", "-followee_id")  # the partitions' unique key, read backwards (no index on id)
    sortable_by = ()


@admin.register(Publisher)
class PublisherAdmin(admin.ModelAdmin):
    list_display = ("account", "workspace", "monitored", "created_at")
    list_editable = ("monitored",)
    list_filter = ("workspace", "monitored")
    list_select_related = ("account", "workspace")
    search_fields = ("=account__twitter_id", "account__screen_name")
    raw_id_fields = ("account",)
    readonly_fields = ("created_at",)
    list_per_page = 100

    def get_readonly_fields(self, request, obj=None):
        return ("workspace", "account", "created_at") if obj else ("created_at",)


# --- tweets and cascades -----------------------------------------------------------------------------------


@admin.register(Tweet)
class TweetAdmin(admin.ModelAdmin):
    list_display = (
        "tweet_id",
        "author",
        "workspace",
        "created_at",
        "label",
        "graph_source",
        "compute_status",
        "n_participants",
        "reach",
    )
    list_filter = ("workspace", "label", "graph_source", "compute_status", "times_known")
    list_select_related = ("author", "workspace")
    search_fields = ("=tweet_id", "text", "author__screen_name")
    search_help_text = "An exact status id, or part of the text or of the author's screen name."
    date_hierarchy = "created_at"
    raw_id_fields = ("author", "collection")
    list_per_page = 50
    show_full_result_count = False
    computed = Tweet.OUTCOME_FIELDS
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "workspace",
                    "tweet_id",
                    "author",
                    "created_at",
                    "text",
                    "label",
                    "author_followers",
                    "graph_source",
                    "times_known",
                    "collection",
                )
            },
        ),
        ("Computed", {"fields": computed}),
    )

    def get_readonly_fields(self, request, obj=None):
        return ("workspace", "tweet_id", "author", *self.computed) if obj else self.computed

    def has_delete_permission(self, request, obj=None):
        return False  # as for accounts: the aggregates would go stale; delete the workspace instead


@admin.register(Retweet)
class RetweetAdmin(BigTableAdmin):
    list_display = ("id", "tweet", "retweeter", "retweet_id", "created_at", "followers_count")
    list_filter = ("tweet__workspace",)
    list_select_related = ("tweet", "retweeter")
    search_fields = ("=tweet__tweet_id", "=retweet_id", "=retweeter__twitter_id", "=retweeter__screen_name")
    raw_id_fields = ("tweet", "retweeter", "collection")
    ordering = ("-tweet_id", "-retweeter_id")  # the partitions' unique key, read backwards: newest tweets first
    sortable_by = ()


@admin.register(GivenEdge)
class GivenEdgeAdmin(BigTableAdmin):
    list_display = ("id", "tweet", "src", "dst")
    list_filter = ("tweet__workspace",)
    list_select_related = ("tweet", "src", "dst")
    search_fields = ("=tweet__tweet_id", "=src__twitter_id", "=dst__twitter_id")
    raw_id_fields = ("tweet", "src", "dst")


# --- uploads -----------------------------------------------------------------------------------------------


class CollectionFileInline(admin.TabularInline):
    model = CollectionFile
    fields = ("original_name", "file", "size", "format")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ("name", "workspace", "status", "format", "mode", "validate_only", "uploaded_by", "created_at")
    list_filter = ("workspace", "status", "mode", "validate_only")
    list_select_related = ("workspace", "uploaded_by")
    search_fields = ("name",)
    date_hierarchy = "created_at"
    inlines = (CollectionFileInline,)
    list_per_page = 50
    counts_json = json_display("counts")
    report_json = json_display("report")
    timings_json = json_display("timings")
    fields = (
        "workspace",
        "name",
        "uploaded_by",
        "mode",
        "validate_only",
        "compute",
        "status",
        "format",
        "counts_json",
        "report_json",
        "error",
        "timings_json",
        "created_at",
        "started_at",
        "finished_at",
    )
    # how the upload was read and what it brought: only the name is the operator's to change
    readonly_fields = tuple(f for f in fields if f != "name")

    def has_add_permission(self, request) -> bool:
        return False  # uploads go through the dashboard, the API or import_collection, which queue the import


@admin.register(CollectionFile)
class CollectionFileAdmin(admin.ModelAdmin):
    list_display = ("original_name", "collection", "format", "size")
    list_filter = ("collection__workspace",)
    list_select_related = ("collection",)
    search_fields = ("original_name", "collection__name")
    fields = ("collection", "original_name", "file", "size", "format")
    readonly_fields = fields
    list_per_page = 100

    def has_add_permission(self, request) -> bool:
        return False  # files come with their upload


# --- computation -------------------------------------------------------------------------------------------


class ComputeBatchInline(admin.TabularInline):
    model = ComputeBatch
    fields = ("index", "status", "n_cascades", "n_nodes", "attempts", "device", "started_at", "finished_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).defer("tweet_pks", "timings")


@admin.register(ComputeRun)
class ComputeRunAdmin(admin.ModelAdmin):
    list_display = (
        "__str__",
        "workspace",
        "collection",
        "algorithm",
        "status",
        "progress_display",
        "backend",
        "orphans",
        "n_cascades",
        "created_at",
        "finished_at",
    )
    list_filter = ("workspace", "algorithm", "status", "backend", "orphans", "aggregate")
    list_select_related = ("workspace", "collection")
    search_fields = ("=id", "collection__name")
    search_help_text = "A run number, or part of its collection's name."
    date_hierarchy = "created_at"
    inlines = (ComputeBatchInline,)
    list_per_page = 50
    params_json = json_display("params")
    devices_json = json_display("devices")
    timings_json = json_display("timings")
    notes_json = json_display("notes")
    fields = (
        "workspace",
        "collection",
        "created_by",
        "algorithm",
        "params_json",
        "aggregate",
        "orphans",
        "backend",
        "status",
        "n_batches",
        "batches_done",
        "n_cascades",
        "n_nodes",
        "n_edges",
        "devices_json",
        "timings_json",
        "notes_json",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    )
    # what the run was asked and what it did: the services own all of it
    readonly_fields = fields

    @admin.display(description="progress")
    def progress_display(self, obj: ComputeRun) -> str:
        return f"{obj.batches_done}/{obj.n_batches}"

    def has_add_permission(self, request) -> bool:
        return False  # runs are planned by services.compute_run_start (dashboard "recompute", uploads)


@admin.register(ComputeBatch)
class ComputeBatchAdmin(EngineRowsAdmin):
    list_display = ("id", "run", "index", "status", "n_cascades", "n_nodes", "attempts", "device", "finished_at")
    list_filter = ("status", "run__workspace")
    list_select_related = ("run",)
    search_fields = ("=run__id",)
    search_help_text = "A run number."
    show_full_result_count = True
    paginator = Paginator
    sortable_by = None
    timings_json = json_display("timings")
    fields = (
        "run",
        "index",
        "status",
        "tweet_pks_summary",
        "n_cascades",
        "n_nodes",
        "attempts",
        "device",
        "timings_json",
        "error",
        "started_at",
        "finished_at",
    )
    readonly_fields = fields

    @admin.display(description="tweets (primary keys)")
    def tweet_pks_summary(self, obj: ComputeBatch) -> str:
        pks = obj.tweet_pks or []
        head = ", ".join(str(pk) for pk in pks[:50])
        return f"{len(pks)}: {head}{', …' if len(pks) > 50 else ''}"

    def get_queryset(self, request):
        return super().get_queryset(request).defer("tweet_pks")


# --- computed influence ------------------------------------------------------------------------------------


@admin.register(CascadeInfluence)
class CascadeInfluenceAdmin(EngineRowsAdmin):
    list_display = ("id", "tweet", "account", "role", "influence", "followers", "publisher", "day")
    list_filter = ("role", ("day", admin.DateFieldListFilter))
    list_select_related = ("tweet", "account", "publisher")
    search_fields = ("=tweet__tweet_id", "=account__twitter_id", "=account__screen_name")
    raw_id_fields = ("tweet", "account", "publisher")
    ordering = ("-tweet_id", "-account_id")  # the unique key's index, read backwards: newest tweets first
    sortable_by = ()

    def get_search_results(self, request, queryset, search_term):
        """The fields above, searched by their indexes: a tweet's rows by its status id, an account's (Twitter id
        or screen name) through the cascades it took part in. The default join would scan the whole table for
        an account: no index leads with it (``CascadeInfluence.objects.of_accounts``)."""
        term = search_term.strip()
        if not term:
            return queryset, False
        numeric = term.isascii() and term.isdigit() and int(term) < 2**63
        match = Q(screen_name=term) | Q(twitter_id=int(term)) if numeric else Q(screen_name=term)
        rows = CascadeInfluence.objects.of_accounts(Account.objects.filter(match).values("pk"))
        if numeric:  # either, each by the (tweet, account) key: the rows' ``id`` has no index (migration 0044)
            rows = rows | CascadeInfluence.objects.filter(tweet_id__in=Tweet.objects.filter(tweet_id=int(term)))
        return queryset & rows, False


@admin.register(CascadeGraph)
class CascadeGraphAdmin(EngineRowsAdmin):
    list_display = ("tweet", "n_edges")
    list_select_related = ("tweet",)
    search_fields = ("=tweet__tweet_id",)
    raw_id_fields = ("tweet",)
    exclude = ("edges",)  # packed int64 pairs: shown decoded below, not as bytes
    readonly_fields = ("tweet", "n_edges", "edge_list")

    @admin.display(description="edges (src → dst, Account ids; first 200)")
    def edge_list(self, obj: CascadeGraph) -> str:
        src, dst = obj.edge_arrays()
        return ", ".join(f"{s}→{d}" for s, d in zip(src[:200].tolist(), dst[:200].tolist()))


@admin.register(DailyInfluence)
class DailyInfluenceAdmin(EngineRowsAdmin):
    list_display = ("id", "workspace", "publisher", "account", "day", "influence", "cascades")
    list_filter = ("workspace", ("day", admin.DateFieldListFilter))
    list_select_related = ("workspace", "publisher", "account")
    search_fields = ("=account__twitter_id", "=account__screen_name", "=publisher__twitter_id")
    raw_id_fields = ("publisher", "account")
    # the unique key's index, read backwards (the rows' ``id`` has none, migration 0044)
    ordering = ("-workspace_id", "-publisher_id", "-day", "-label", "-account_id")
    sortable_by = ()


@admin.register(PublisherDay)
class PublisherDayAdmin(EngineRowsAdmin):
    # one row per publisher and day: small enough for exact counts and a date hierarchy
    list_display = ("id", "workspace", "publisher", "day", "tweets", "reach")
    list_filter = ("workspace",)
    list_select_related = ("workspace", "publisher")
    search_fields = ("=publisher__twitter_id", "=publisher__screen_name")
    date_hierarchy = "day"
    raw_id_fields = ("publisher",)
    show_full_result_count = True
    paginator = Paginator


# --- operations: heartbeats, the task outbox, API tokens, notices ---------------------------------------------------


class _ServiceRowsAdmin(admin.ModelAdmin):
    """Rows the services write and read (leases, the outbox, notices): viewed here, not added or edited."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Lease)
class LeaseAdmin(_ServiceRowsAdmin):
    list_display = ("kind", "object_id", "holder", "started_at", "beat_at")
    list_filter = ("kind",)
    search_fields = ("holder",)


@admin.register(OutboxTask)
class OutboxTaskAdmin(_ServiceRowsAdmin):
    """Tasks the broker refused; beat's send_outbox sends them. Deleting one drops the task for good."""

    list_display = ("name", "args", "attempts", "created_at", "last_tried_at", "error")
    search_fields = ("name",)


@admin.register(DerivedRowsMark)
class DerivedRowsMarkAdmin(_ServiceRowsAdmin):
    """The one row that says the engine's unlogged results survived PostgreSQL's last restart. Shown, never
    deleted here: without it the next sweep takes every result for lost and recomputes every workspace
    (``monitor.services.derived_rows``)."""

    list_display = ("id",)
    search_fields = ("=id",)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Notice)
class NoticeAdmin(_ServiceRowsAdmin):
    list_display = ("created_at", "workspace", "user", "message", "read_at")
    list_select_related = ("workspace", "user")
    list_filter = ("workspace",)
    search_fields = ("message", "user__username")
    raw_id_fields = ("workspace", "user")


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    """Saved tweet searches (docs/claims.md); analysts keep them on the Claims page, an operator may read or fix one."""

    list_display = ("name", "workspace", "query", "created_by", "created_at")
    list_select_related = ("workspace", "created_by")
    list_filter = ("workspace",)
    search_fields = ("name", "query")
    raw_id_fields = ("workspace", "created_by")


@admin.register(TweetDocument)
class TweetDocumentAdmin(EngineRowsAdmin):
    """The tweets' search documents (docs/claims.md): PostgreSQL's triggers write them with the tweets; view-only.
    The tsvector itself is not a field of the model (it is the tweet's ``search`` column, copied)."""

    list_display = ("tweet_id", "workspace_id", "created_at", "status_id")
    search_fields = ("=status_id",)
    search_help_text = "Twitter status ids match exactly."
    sortable_by = ("tweet_id",)
    readonly_fields = ("tweet", "workspace_id", "created_at", "status_id")


@admin.register(SearchPairs)
class SearchPairsAdmin(admin.ModelAdmin):
    """Each workspace's index of common word pairs for the phrase search (docs/claims.md), written by the beat task
    ``search_pairs_refresh``. View-only; deleting a row has its index dropped and built again at the next refresh
    (``manage.py claims pairs <ws>`` runs one now)."""

    list_display = ("workspace", "index_name", "words", "documents", "checked_version", "built_at", "build_seconds")
    list_select_related = ("workspace",)
    search_fields = ("workspace__slug", "index_name")
    readonly_fields = ("workspace", "index_name", "lexemes", "documents", "checked_version", "built_at",
                       "build_seconds")  # fmt: skip

    @admin.display(description="common words")
    def words(self, obj) -> int:
        return len(obj.lexemes or [])

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are made through the API (their key is shown once, to its user); an operator may revoke them."""

    list_display = ("prefix", "user", "name", "workspace", "created_at", "expires_at", "last_used_at", "revoked_at")
    list_select_related = ("user", "workspace")
    search_fields = ("prefix", "name", "user__username")
    raw_id_fields = ("user", "workspace")
    readonly_fields = ("key_hash", "prefix", "auth_hash", "created_at", "last_used_at")
    actions = ["revoke"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset) -> None:
        for token in queryset:
            services.api_token_revoke(token=token)


# --- the live stream (issue 17) -----------------------------------------------------------------------------------


@admin.register(StreamToken)
class StreamTokenAdmin(admin.ModelAdmin):
    """Stream tokens are made on the workspace's stream tokens page (their key is shown once, to an owner); an
    operator may revoke them here. The key's hash is never shown."""

    list_display = ("prefix", "workspace", "name", "created_by", "created_at", "last_used_at", "revoked_at")
    list_select_related = ("workspace", "created_by")
    list_filter = ("workspace",)
    search_fields = ("prefix", "name")
    exclude = ("key_hash",)
    readonly_fields = ("workspace", "prefix", "created_by", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Revoke the selected stream tokens")
    def revoke(self, request, queryset) -> None:
        from .services.stream import stream_token_revoke

        for token in queryset:
            stream_token_revoke(token=token)


@admin.register(StreamArrival)
class StreamArrivalAdmin(EngineRowsAdmin):
    """The applied stream events counted per cascade and arrival second, for the Live page's windows (the events
    themselves are deleted once applied; kept two hours). Written by the consumers only: view-only here."""

    list_display = ("second", "workspace", "cascade_key", "events", "retweets", "applied_at")
    list_filter = ("workspace",)
    list_select_related = ("workspace",)
    search_fields = ("=cascade_key",)
    search_help_text = "The cascade key (original tweet id) matches exactly."
    readonly_fields = [f.name for f in StreamArrival._meta.fields]
    ordering = ("-second", "-pk")


@admin.register(StreamEvent)
class StreamEventAdmin(BigTableAdmin):
    """The stream's open events and dead letters, to look into lag and errors: filter by status, kind and
    partition; the error says why an event is dead (an event applied cleanly is deleted: ``StreamArrival``
    counts it). Written by intake and the consumers only: view-only here."""

    list_display = ("id", "workspace", "kind", "status", "partition", "cascade_key", "received_at", "applied_at",
                    "attempts", "error_short")  # fmt: skip
    list_filter = ("status", "kind", "partition", "workspace")
    list_select_related = ("workspace",)
    search_fields = ("=cascade_key",)
    search_help_text = "The cascade key (original tweet id) matches exactly."
    readonly_fields = [f.name for f in StreamEvent._meta.fields]

    @admin.display(description="error")
    def error_short(self, obj) -> str:
        return obj.error if len(obj.error) <= 80 else obj.error[:77] + "..."

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


# the analyses' result tables (network analytics, the planner, who amplifies whom, coordinated accounts)
from . import admin_analyses  # noqa: E402,F401
