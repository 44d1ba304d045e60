"""Workspaces and who may see them."""

from __future__ import annotations

from django.utils.text import slugify

from ..models import Membership, Workspace

__all__ = ["workspace_create", "membership_add", "workspace_purge"]


def workspace_create(*, name: str, owner=None, slug: str = "") -> Workspace:
    ws = Workspace(name=name, slug=slug or slugify(name)[:60])
    ws.full_clean()
    ws.save()
    if owner is not None:
        membership_add(workspace=ws, user=owner, role=Membership.Role.OWNER)
    return ws


def membership_add(*, workspace: Workspace, user, role: str = Membership.Role.ANALYST) -> Membership:
    m, _ = Membership.objects.get_or_create(workspace=workspace, user=user, defaults={"role": role})
    if m.role != role:
        m.role = role
        m.full_clean()
        m.save(update_fields=["role"])
    return m


def workspace_purge(*, workspace: Workspace, delete_workspace: bool = True) -> dict[str, int]:
    """Delete a workspace's data set-based, children first (the bulk tables have no database-level foreign
    keys, so nothing cascades by itself, and the ORM's row-by-row collector would take minutes on millions of
    rows). Returns rows deleted per table."""
    from django.db import connection, transaction

    ws = workspace.pk
    tweets = "SELECT id FROM monitor_tweet WHERE workspace_id = %s"
    accounts = "SELECT id FROM monitor_account WHERE workspace_id = %s"
    runs = "SELECT id FROM monitor_computerun WHERE workspace_id = %s"
    steps = [
        ("networkpartial", f"DELETE FROM monitor_networkpartial WHERE run_id IN ({runs})"),
        ("networkaccount", f"DELETE FROM monitor_networkaccount WHERE run_id IN ({runs})"),
        ("networksummary", f"DELETE FROM monitor_networksummary WHERE run_id IN ({runs})"),
        (
            "alerts_webhookdelivery",
            "DELETE FROM alerts_webhookdelivery WHERE alert_id IN "
            "(SELECT id FROM alerts_alert WHERE workspace_id = %s)",
        ),
        ("alerts_alert", "DELETE FROM alerts_alert WHERE workspace_id = %s"),
        ("alerts_alertrule", "DELETE FROM alerts_alertrule WHERE workspace_id = %s AND publisher_id IS NOT NULL"),
        *(  # the counter-campaign planner's results, by run
            (
                table,
                f"DELETE FROM monitor_{table} WHERE run_id IN "
                "(SELECT id FROM monitor_computerun WHERE workspace_id = %s)",
            )
            for table in ("influencemaxpartial", "influencemaxseed", "influencemaxresult")
        ),
        (
            "wtfentry",
            "DELETE FROM monitor_wtfentry WHERE result_id IN "
            "(SELECT id FROM monitor_wtfresult WHERE workspace_id = %s)",
        ),
        ("wtfresult", "DELETE FROM monitor_wtfresult WHERE workspace_id = %s"),
        ("dailyinfluence", "DELETE FROM monitor_dailyinfluence WHERE workspace_id = %s"),
        ("publisherday", "DELETE FROM monitor_publisherday WHERE workspace_id = %s"),
        ("cascadeinfluence", f"DELETE FROM monitor_cascadeinfluence WHERE tweet_id IN ({tweets})"),
        ("givenedge", f"DELETE FROM monitor_givenedge WHERE tweet_id IN ({tweets})"),
        ("cascadegraph", f"DELETE FROM monitor_cascadegraph WHERE tweet_id IN ({tweets})"),
        ("retweet", f"DELETE FROM monitor_retweet WHERE tweet_id IN ({tweets})"),
        ("follow", "DELETE FROM monitor_follow WHERE workspace_id = %s"),
        ("followercount", f"DELETE FROM monitor_followercount WHERE account_id IN ({accounts})"),
        ("tweet", "DELETE FROM monitor_tweet WHERE workspace_id = %s"),
        ("publisher", "DELETE FROM monitor_publisher WHERE workspace_id = %s"),
        ("account", "DELETE FROM monitor_account WHERE workspace_id = %s"),
    ]
    out: dict[str, int] = {}
    with transaction.atomic(), connection.cursor() as cur:
        for name, sql in steps:
            cur.execute(sql, [ws])
            out[name] = max(cur.rowcount, 0)
        from ..cache import bump_data_version

        bump_data_version(ws)  # in this transaction: committed with the rows (monitor/cache.py)
        if delete_workspace:
            workspace.delete()  # the small tables (collections, runs, memberships) cascade through the ORM
    return out
