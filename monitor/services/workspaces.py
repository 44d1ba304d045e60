"""Workspaces and who may see them: creating one (its creator becomes its owner), inviting members (an existing
user by username or e-mail, anyone else by an e-mailed, expiring, single-use link), changing roles, removing
members and leaving. Owners manage members; a workspace never loses its last owner. The checks are here, not in
the views: every caller (the dashboard, the admin's actions, a shell) gets the same rules."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from .. import partitions
from ..models import Invitation, Membership, Workspace

__all__ = [
    "invitation_accept",
    "invitation_accept_new_user",
    "invitation_check",
    "invitation_create",
    "invitation_revoke",
    "member_invite",
    "member_remove",
    "member_set_role",
    "membership_add",
    "workspace_create",
    "workspace_leave",
    "workspace_purge",
]

OWNER = Membership.Role.OWNER


def _free_slug(base: str) -> str:
    base = (base or "workspace")[:54]
    slug, n = base, 1
    while Workspace.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def workspace_create(*, name: str, owner=None, slug: str = "") -> Workspace:
    """A new workspace; ``owner`` (if given) becomes its owner. Without ``slug`` one is made from the name
    (``-2``, ``-3``... when taken); a given ``slug`` that is taken is an error."""
    name = (name or "").strip()
    with transaction.atomic():
        ws = Workspace(name=name, slug=slug or _free_slug(slugify(name)[:60]))
        ws.full_clean()
        ws.save()
        if owner is not None:
            membership_add(workspace=ws, user=owner, role=OWNER)
    return ws


def membership_add(*, workspace: Workspace, user, role: str = Membership.Role.ANALYST) -> Membership:
    m, _ = Membership.objects.get_or_create(workspace=workspace, user=user, defaults={"role": role})
    if m.role != role:
        m.role = role
        m.full_clean()
        m.save(update_fields=["role"])
    return m


def _require_manager(actor, workspace: Workspace) -> None:
    # the same rule as selectors.can_manage_members (not imported: selectors import services' progress keys)
    if (
        not actor.is_superuser
        and not Membership.objects.filter(workspace=workspace, user=actor, role__in=Membership.MANAGER_ROLES).exists()
    ):
        raise PermissionDenied("only the workspace's owners manage its members")


def _check_role(role: str) -> str:
    if role not in Membership.Role.values:
        raise ValidationError({"role": f"unknown role {role!r}: one of {', '.join(Membership.Role.values)}"})
    return role


def _owners_locked(workspace: Workspace) -> list[int]:
    """The owners' membership ids, their rows locked until the transaction ends: two owners removing each other
    at the same moment cannot leave the workspace with none."""
    return list(
        Membership.objects.select_for_update()
        .filter(workspace=workspace, role=OWNER)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _not_last_owner(membership: Membership, owners: list[int], what: str) -> None:
    if membership.role == OWNER and owners == [membership.pk]:
        raise ValidationError(
            f"{what}: {membership.user} is the workspace's only owner; make another member an owner first"
        )


def member_invite(
    *, workspace: Workspace, actor, who: str, role: str = Membership.Role.ANALYST, link_for: Callable[[str], str]
) -> tuple[Membership | None, Invitation | None, str]:
    """Add ``who`` to the workspace. ``who`` is a username or e-mail address of an existing user (added at once,
    returns ``(membership, None, "")``), or any other e-mail address (an invitation is e-mailed with the link
    ``link_for(token)``; returns ``(None, invitation, link)``)."""
    _require_manager(actor, workspace)
    _check_role(role)
    who = (who or "").strip()
    if not who:
        raise ValidationError({"who": "give a username or an e-mail address"})
    User = get_user_model()
    users = list(User.objects.filter(username__iexact=who, is_active=True)[:2])
    if not users and "@" in who:
        users = list(User.objects.filter(email__iexact=who, is_active=True)[:2])
        if len(users) > 1:
            raise ValidationError({"who": f"{len(users)} accounts share the address {who}: give the username"})
    if users:
        user = users[0]
        if Membership.objects.filter(workspace=workspace, user=user).exists():
            raise ValidationError({"who": f"{user.get_username()} is already a member of {workspace.name}"})
        return membership_add(workspace=workspace, user=user, role=role), None, ""
    if "@" not in who:
        raise ValidationError(
            {"who": f"no user is named {who!r}; to invite someone who has no account yet, give their e-mail address"}
        )
    invitation, link = invitation_create(workspace=workspace, actor=actor, email=who, role=role, link_for=link_for)
    return None, invitation, link


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_create(
    *, workspace: Workspace, actor, email: str, role: str = Membership.Role.ANALYST, link_for: Callable[[str], str]
) -> tuple[Invitation, str]:
    """An invitation for ``email`` (valid ``SPREADWATCH_INVITATION_DAYS`` days, used once), e-mailed through
    Django's mail backend; returns it and its link (shown to the owner this once: only a hash is stored)."""
    _require_manager(actor, workspace)
    _check_role(role)
    email = (email or "").strip()
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError({"who": f"{email!r} is not an e-mail address"}) from None
    token = secrets.token_urlsafe(32)
    inv = Invitation.objects.create(
        workspace=workspace,
        email=email,
        role=role,
        token_hash=_hash(token),
        invited_by=actor,
        expires_at=timezone.now() + dt.timedelta(days=settings.SPREADWATCH_INVITATION_DAYS),
    )
    link = link_for(token)
    inviter = actor.get_full_name() or actor.get_username()
    body = (
        f'{inviter} invites you to the Spreadwatch workspace "{workspace.name}" as '
        f"{inv.get_role_display().lower()}.\n\n"
        f"Open this link to accept (sign in, or create an account there):\n{link}\n\n"
        f"The link works once and until {inv.expires_at:%Y-%m-%d %H:%M} UTC. If you did not expect it, ignore this "
        "message."
    )
    # after commit: no mail for an invitation that was rolled back; a mail error must not undo the invitation
    # (the owner has the link on screen and can pass it on)
    transaction.on_commit(
        lambda: send_mail(f"Invitation to {workspace.name} on Spreadwatch", body, None, [email], fail_silently=True)
    )
    return inv, link


def invitation_check(inv: Invitation | None) -> Invitation:
    """The invitation if it can still be accepted, else a ValidationError saying why."""
    if inv is None:
        raise ValidationError("this invitation link is not valid (mistyped, or the invitation was deleted)")
    why = inv.problem(timezone.now())
    if why:
        raise ValidationError(why)
    return inv


def invitation_accept(*, token: str, user) -> Membership:
    """Use the invitation of ``token`` for ``user`` (signed in): they join its workspace with its role (an
    existing member keeps the higher of the two roles). Once only, even for two requests at the same moment."""
    with transaction.atomic():
        inv = invitation_check(
            Invitation.objects.select_for_update().select_related("workspace").filter(token_hash=_hash(token)).first()
        )
        existing = Membership.objects.filter(workspace=inv.workspace, user=user).first()
        if existing is not None and existing.role == OWNER:
            m = existing
        else:
            m = membership_add(workspace=inv.workspace, user=user, role=inv.role)
        inv.accepted_at = timezone.now()
        inv.accepted_by = user
        inv.save(update_fields=["accepted_at", "accepted_by"])
    return m


def invitation_accept_new_user(*, token: str, username: str, password: str) -> tuple[object, Membership]:
    """Create an account (its e-mail address the invitation's) and accept the invitation with it, in one
    transaction: the only way to sign up is a valid invitation (there is no open sign-up)."""
    User = get_user_model()
    with transaction.atomic():
        inv = invitation_check(Invitation.objects.select_for_update().filter(token_hash=_hash(token)).first())
        if User.objects.filter(username__iexact=username).exists():
            raise ValidationError({"username": f"the username {username!r} is taken"})
        user = User.objects.create_user(username=username, email=inv.email, password=password)
        return user, invitation_accept(token=token, user=user)


def invitation_revoke(*, invitation: Invitation, actor) -> Invitation:
    _require_manager(actor, invitation.workspace)
    Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    invitation.refresh_from_db()
    return invitation


def member_set_role(*, membership: Membership, actor, role: str) -> Membership:
    """Give a member another role (owners only); the last owner cannot be made an analyst."""
    _require_manager(actor, membership.workspace)
    _check_role(role)
    with transaction.atomic():
        owners = _owners_locked(membership.workspace)
        membership.refresh_from_db()
        if role != OWNER:
            _not_last_owner(membership, owners, "cannot change the role")
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def member_remove(*, membership: Membership, actor) -> None:
    """Remove a member (owners only; anyone may remove themselves: :func:`workspace_leave`). Never the last
    owner."""
    if membership.user_id != actor.pk:
        _require_manager(actor, membership.workspace)
    with transaction.atomic():
        owners = _owners_locked(membership.workspace)
        membership.refresh_from_db()
        _not_last_owner(membership, owners, "cannot remove")
        membership.delete()


def workspace_leave(*, workspace: Workspace, user) -> None:
    """``user`` leaves the workspace (not its last owner)."""
    m = Membership.objects.filter(workspace=workspace, user=user).first()
    if m is None:
        raise ValidationError(f"{user} is not a member of {workspace.name}")
    member_remove(membership=m, actor=user)


def workspace_purge(*, workspace: Workspace, delete_workspace: bool = True) -> dict[str, int]:
    """Delete a workspace's data set-based, children first (the bulk tables have no database-level foreign
    keys, so nothing cascades by itself, and the ORM's row-by-row collector would take minutes on millions of
    rows). Returns rows deleted per table."""
    from django.db import connection, transaction

    ws = workspace.pk
    tweets = "SELECT id FROM monitor_tweet WHERE workspace_id = %s"
    runs = "SELECT id FROM monitor_computerun WHERE workspace_id = %s"
    steps = [
        ("networkpartial", f"DELETE FROM monitor_networkpartial WHERE run_id IN ({runs})"),
        ("networkaccount", f"DELETE FROM monitor_networkaccount WHERE run_id IN ({runs})"),
        ("networksummary", f"DELETE FROM monitor_networksummary WHERE run_id IN ({runs})"),
        *(  # coordinated accounts, by run
            (table, f"DELETE FROM monitor_{table} WHERE run_id IN ({runs})")
            for table in ("coordinationedge", "coordinationmember", "coordinationcluster", "coordinationsummary")
        ),
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
        # claims are saved searches and stay; the accounts they track are gone with the accounts
        ("claim_tracked", "UPDATE monitor_claim SET tracked = '[]' WHERE workspace_id = %s"),
        ("publisherday", "DELETE FROM monitor_publisherday WHERE workspace_id = %s"),
        ("givenedge", f"DELETE FROM monitor_givenedge WHERE tweet_id IN ({tweets})"),
        ("cascadegraph", f"DELETE FROM monitor_cascadegraph WHERE tweet_id IN ({tweets})"),
        ("tweet", "DELETE FROM monitor_tweet WHERE workspace_id = %s"),
        ("publisher", "DELETE FROM monitor_publisher WHERE workspace_id = %s"),
        ("account", "DELETE FROM monitor_account WHERE workspace_id = %s"),
    ]
    out: dict[str, int] = {}
    with transaction.atomic(), connection.cursor() as cur:
        for name, sql in steps:
            cur.execute(sql, [ws])
            out[name] = max(cur.rowcount, 0)
            if name == "cascadegraph":  # per-cascade and daily rows, retweets, follows, snapshots: their partitions
                out["cascadeinfluence"] = partitions.empty(cur, "monitor_cascadeinfluence", ws)
                out["dailyinfluence"] = partitions.empty(cur, "monitor_dailyinfluence", ws)
                out["retweet"] = partitions.empty(cur, "monitor_retweet", ws)
                out["follow"] = partitions.empty(cur, "monitor_follow", ws)
                out["followercount"] = partitions.empty(cur, "monitor_followercount", ws)
        from ..cache import bump_data_version
        from ..db import renew_follows_token

        bump_data_version(ws)  # in this transaction: committed with the rows (monitor/cache.py)
        renew_follows_token(cur, ws)
        # no tweet is left: the next data fixes the unit again (monitor/services/units.py)
        cur.execute("UPDATE monitor_workspace SET unit = '' WHERE id = %s", [ws])
        if delete_workspace:
            workspace.delete()  # the small tables (collections, runs, memberships) cascade through the ORM
            partitions.drop_after_commit()  # its emptied partitions (follows, retweets, snapshots, daily rows)
        from ..graph_files import drop

        transaction.on_commit(lambda: drop(ws))  # the follower graph's files: no version is current any more
    return out
