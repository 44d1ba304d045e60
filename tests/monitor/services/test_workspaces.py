"""The workspace services' rules: the creator owns, owners manage, analysts cannot, a workspace never loses its
last owner, and an invitation link is e-mailed, works once, expires and can be withdrawn."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from monitor import services
from monitor.models import Invitation, Membership

LINK = "https://spreadwatch.test/invitations/{}/".format


@pytest.fixture
def owner(alice, ws_a):
    services.membership_add(workspace=ws_a, user=alice, role=Membership.Role.OWNER)
    return alice


@pytest.fixture
def carol(django_user_model):
    return django_user_model.objects.create_user("carol", "carol@example.com", "carol-pass-123")


def _role(ws, user):
    return Membership.objects.filter(workspace=ws, user=user).values_list("role", flat=True).first()


def test_the_creator_of_a_workspace_owns_it_and_a_taken_slug_gets_a_suffix(db, django_user_model):
    u = django_user_model.objects.create_user("dora", "dora@example.com", "dora-pass-123")
    first = services.workspace_create(name="Fact Desk", owner=u)
    second = services.workspace_create(name="Fact Desk", owner=u)
    assert (first.slug, second.slug) == ("fact-desk", "fact-desk-2")
    assert _role(first, u) == Membership.Role.OWNER


def test_a_blank_name_is_refused(db):
    with pytest.raises(ValidationError) as e:
        services.workspace_create(name="   ")
    assert "name" in e.value.message_dict


def test_an_owner_adds_an_existing_user_by_username_or_email(owner, ws_a, carol, bob, mailoutbox):
    m, inv, link = services.member_invite(workspace=ws_a, actor=owner, who="CAROL", link_for=LINK)
    assert (m.user, m.role, inv, link) == (carol, "analyst", None, "")
    m, _, _ = services.member_invite(workspace=ws_a, actor=owner, who="Bob@Example.com", role="owner", link_for=LINK)
    assert (m.user, m.role) == (bob, "owner")
    assert not mailoutbox  # existing users are added, not mailed


def test_adding_a_member_twice_says_so(owner, ws_a, carol):
    services.member_invite(workspace=ws_a, actor=owner, who="carol", link_for=LINK)
    with pytest.raises(ValidationError, match="already a member"):
        services.member_invite(workspace=ws_a, actor=owner, who="carol", link_for=LINK)


def test_an_unknown_username_is_refused_with_advice(owner, ws_a):
    with pytest.raises(ValidationError, match="give their e-mail address"):
        services.member_invite(workspace=ws_a, actor=owner, who="nobody", link_for=LINK)


def test_an_analyst_cannot_invite_change_roles_or_remove(alice, ws_a, carol, bob):
    # alice is an analyst of A (the fixture's role)
    with pytest.raises(PermissionDenied):
        services.member_invite(workspace=ws_a, actor=alice, who="carol", link_for=LINK)
    with pytest.raises(PermissionDenied):
        services.invitation_create(workspace=ws_a, actor=alice, email="x@example.org", link_for=LINK)
    m = services.membership_add(workspace=ws_a, user=carol)
    with pytest.raises(PermissionDenied):
        services.member_set_role(membership=m, actor=alice, role="owner")
    with pytest.raises(PermissionDenied):
        services.member_remove(membership=m, actor=alice)
    assert _role(ws_a, carol) == "analyst" and _role(ws_a, alice) == "analyst"


def test_an_owner_of_another_workspace_cannot_manage_this_one(owner, ws_a, ws_b, bob, carol):
    services.membership_add(workspace=ws_b, user=bob, role="owner")
    with pytest.raises(PermissionDenied):
        services.member_invite(workspace=ws_a, actor=bob, who="carol", link_for=LINK)


def test_the_last_owner_can_be_neither_demoted_removed_nor_leave(owner, ws_a, carol):
    mine = Membership.objects.get(workspace=ws_a, user=owner)
    with pytest.raises(ValidationError, match="only owner"):
        services.member_set_role(membership=mine, actor=owner, role="analyst")
    with pytest.raises(ValidationError, match="only owner"):
        services.member_remove(membership=mine, actor=owner)
    with pytest.raises(ValidationError, match="only owner"):
        services.workspace_leave(workspace=ws_a, user=owner)
    assert _role(ws_a, owner) == "owner"
    # with a second owner, the first may step down and leave
    other = services.membership_add(workspace=ws_a, user=carol)
    services.member_set_role(membership=other, actor=owner, role="owner")
    services.member_set_role(membership=mine, actor=owner, role="analyst")
    services.workspace_leave(workspace=ws_a, user=owner)
    assert _role(ws_a, owner) is None and _role(ws_a, carol) == "owner"


def test_an_analyst_may_leave(alice, ws_a):
    services.workspace_leave(workspace=ws_a, user=alice)
    assert _role(ws_a, alice) is None


def test_an_invitation_is_mailed_hashed_and_works_once(
    owner, ws_a, carol, mailoutbox, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _, inv, link = services.member_invite(workspace=ws_a, actor=owner, who="new@example.org", link_for=LINK)
    token = link.rstrip("/").rsplit("/", 1)[1]
    assert token not in inv.token_hash and len(inv.token_hash) == 64
    assert [m.to for m in mailoutbox] == [["new@example.org"]] and link in mailoutbox[0].body
    assert ws_a.name in mailoutbox[0].subject
    m = services.invitation_accept(token=token, user=carol)
    assert (m.workspace, m.user, m.role) == (ws_a, carol, "analyst")
    inv.refresh_from_db()
    assert inv.accepted_by == carol and inv.accepted_at is not None
    with pytest.raises(ValidationError, match="used already"):
        services.invitation_accept(token=token, user=carol)


def test_an_expired_or_withdrawn_invitation_is_refused(owner, ws_a, carol):
    _, inv, link = services.member_invite(workspace=ws_a, actor=owner, who="a@example.org", link_for=LINK)
    Invitation.objects.filter(pk=inv.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    with pytest.raises(ValidationError, match="expired"):
        services.invitation_accept(token=link.split("/")[-2], user=carol)
    _, inv, link = services.member_invite(workspace=ws_a, actor=owner, who="b@example.org", link_for=LINK)
    services.invitation_revoke(invitation=inv, actor=owner)
    with pytest.raises(ValidationError, match="withdrawn"):
        services.invitation_accept(token=link.split("/")[-2], user=carol)
    with pytest.raises(ValidationError, match="not valid"):
        services.invitation_accept(token="not-a-token", user=carol)
    assert _role(ws_a, carol) is None


def test_accepting_never_demotes_an_owner(owner, ws_a):
    _, _, link = services.member_invite(workspace=ws_a, actor=owner, who="me2@example.org", link_for=LINK)
    services.invitation_accept(token=link.split("/")[-2], user=owner)
    assert _role(ws_a, owner) == "owner"


def test_a_new_user_signs_up_through_an_invitation(owner, ws_a, django_user_model):
    _, _, link = services.member_invite(workspace=ws_a, actor=owner, who="Eve@Example.org", link_for=LINK)
    user, m = services.invitation_accept_new_user(token=link.split("/")[-2], username="eve", password="eve-pass-123!")
    assert user.email == "Eve@example.org" and user.check_password("eve-pass-123!") and m.workspace == ws_a
    # a taken username is a field error, and nothing is half made
    _, _, link = services.member_invite(workspace=ws_a, actor=owner, who="f@example.org", link_for=LINK)
    with pytest.raises(ValidationError) as e:
        services.invitation_accept_new_user(token=link.split("/")[-2], username="EVE", password="x-pass-123!")
    assert "username" in e.value.message_dict
    assert django_user_model.objects.filter(username__iexact="eve").count() == 1
