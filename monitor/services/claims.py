"""Claims: saving a tweet search under a name, changing it, deleting it, and the accounts it tracks.

Every write checks what the analyst typed and raises ``ValidationError`` keyed by the field at fault, so the form
and the API name it; nothing is written then. A claim's query must parse (``selectors.parse_query``); its tweets are
found when it is read, so saving one costs no search.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from ..models import Account, Claim, Workspace
from ..models.claims import MAX_TRACKED
from ..selectors.claims import QueryError, parse_query


def _clean(ws: Workspace, name: str, query: str, *, exclude: int | None = None) -> tuple[str, str]:
    name, query = (name or "").strip(), (query or "").strip()
    errors = {}
    if not name:
        errors["name"] = "give the claim a name"
    elif len(name) > Claim._meta.get_field("name").max_length:
        errors["name"] = "at most 200 characters"
    elif Claim.objects.filter(workspace=ws, name=name).exclude(pk=exclude).exists():
        errors["name"] = f"this workspace already has a claim named {name!r}"
    if len(query) > Claim._meta.get_field("query").max_length:
        errors["query"] = "at most 500 characters"
    else:
        try:
            parse_query(query)
        except QueryError as e:
            errors["query"] = str(e)
    if errors:
        raise ValidationError(errors)
    return name, query


def claim_create(*, workspace: Workspace, user, name: str, query: str) -> Claim:
    name, query = _clean(workspace, name, query)
    try:
        with transaction.atomic():
            return Claim.objects.create(workspace=workspace, name=name, query=query, created_by=user)
    except IntegrityError:  # the same name saved at the same moment
        raise ValidationError({"name": f"this workspace already has a claim named {name!r}"}) from None


def claim_update(*, claim: Claim, name: str | None = None, query: str | None = None) -> Claim:
    name, query = _clean(
        claim.workspace, claim.name if name is None else name, claim.query if query is None else query, exclude=claim.pk
    )
    claim.name, claim.query = name, query
    claim.save(update_fields=["name", "query"])
    return claim


def claim_delete(*, claim: Claim) -> None:
    claim.delete()


def claim_track(*, claim: Claim, account: Account) -> Claim:
    """Add ``account`` (of the claim's workspace) to the accounts the claim tracks; adding it twice is a no-op."""
    if account.workspace_id != claim.workspace_id:
        raise ValidationError({"account": "this account is not in the claim's workspace"})
    with transaction.atomic():
        claim = Claim.objects.select_for_update().get(pk=claim.pk)
        tracked = [int(x) for x in claim.tracked or []]
        if account.pk in tracked:
            return claim
        if len(tracked) >= MAX_TRACKED:
            raise ValidationError({"account": f"a claim tracks at most {MAX_TRACKED} accounts"})
        claim.tracked = [*tracked, account.pk]
        claim.save(update_fields=["tracked"])
    return claim


def claim_untrack(*, claim: Claim, account_pk: int) -> Claim:
    with transaction.atomic():
        claim = Claim.objects.select_for_update().get(pk=claim.pk)
        claim.tracked = [int(x) for x in claim.tracked or [] if int(x) != account_pk]
        claim.save(update_fields=["tracked"])
    return claim
