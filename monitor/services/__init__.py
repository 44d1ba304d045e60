"""Every write to the database goes through a function here (``<entity>_<action>(*, ...)``)."""

from __future__ import annotations

from .claims import claim_create, claim_delete, claim_track, claim_untrack, claim_update
from .collections import (
    collection_cancel,
    collection_create,
    collection_ingest,
    collection_retry,
)
from .recovery import notice_dismiss, stalled_requeue
from .runs import compute_batch_run, compute_run_cancel, compute_run_retry, compute_run_start
from .search_pairs import search_pairs_drop, search_pairs_refresh
from .tokens import api_token_create, api_token_revoke
from .workspaces import (
    invitation_accept,
    invitation_accept_new_user,
    invitation_create,
    invitation_revoke,
    member_invite,
    member_remove,
    member_set_role,
    membership_add,
    workspace_create,
    workspace_leave,
    workspace_purge,
)

__all__ = [
    "api_token_create",
    "api_token_revoke",
    "claim_create",
    "claim_delete",
    "claim_track",
    "claim_untrack",
    "claim_update",
    "collection_cancel",
    "collection_retry",
    "collection_create",
    "collection_ingest",
    "compute_batch_run",
    "compute_run_cancel",
    "compute_run_retry",
    "compute_run_start",
    "invitation_accept",
    "invitation_accept_new_user",
    "invitation_create",
    "invitation_revoke",
    "member_invite",
    "member_remove",
    "member_set_role",
    "membership_add",
    "notice_dismiss",
    "search_pairs_drop",
    "search_pairs_refresh",
    "stalled_requeue",
    "workspace_create",
    "workspace_leave",
    "workspace_purge",
]
