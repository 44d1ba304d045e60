"""The workspace's unit on an upload (issue 40; :mod:`monitor.services.units` has the rule): an upload whose rows
carry follower counts into a workspace that counts retweeters reached is refused whole, naming the file, the line
and the field of the first such row; an upload that stores a workspace's first tweets fixes its unit.

Checked before each part's merge (``_Parts._merge``) against the unit committed so far, and fixed after the last
one when the upload stored tweets, inside the import's transaction: a refused import stores nothing and fixes
nothing, and an import and a stream that bring a new workspace its first data at the same time are serialised by
the workspace's row (the second to fix it reads the first's unit, and is refused if its data does not fit)."""

from __future__ import annotations

import numpy as np

from compute.formats._report import BadRecord

from ..units import RETWEETERS, UPLOAD_COUNT_FIELDS, refusal, unit_fix, unit_of
from ..uploads import UploadError
from .stager import Stager

__all__ = ["UnitGuard"]


class UnitGuard:
    """The unit check of one import. ``formats``: each input's format by its shown name (names the count's field)."""

    def __init__(self, workspace_id: int, *, store: bool, formats: dict[str, str]) -> None:
        self.ws, self.store, self.formats = workspace_id, store, formats
        self.has_tweets = False
        self.first: BadRecord | None = None  # where the first row carrying a follower count was read

    def check(self, st: Stager) -> None:
        """Before a part's merge: note where this part's first row carrying a follower count was read, and raise
        :class:`UploadError` naming it when the workspace counts retweeters."""
        rows = st.tweets()
        if not len(rows.tweet_id):
            return
        self.has_tweets = True
        if self.first is None:
            counted = np.flatnonzero(~np.isnan(rows.followers))
            if len(counted):
                src, line = st.where()
                i = int(counted[0])
                name = st.names[int(src[i])]
                field = UPLOAD_COUNT_FIELDS.get(self.formats.get(name, ""), "followers_count")
                self.first = BadRecord(name, int(line[i]) if line[i] >= 0 else None, field, refusal())
        if self.first is not None and unit_of(self.ws) == RETWEETERS:
            raise UploadError(f"{self.first}; nothing was stored")

    def settle(self, *, stored: bool) -> None:
        """After the last merge of a stored upload (``stored``: whether it stored tweets): these being the workspace's
        first tweets, fix its unit, or, another writer having fixed it meanwhile to retweeters, refuse the upload."""
        if not (self.has_tweets and stored):
            return  # follows alone, or retweets of tweets the workspace does not have (skipped), fix nothing
        if unit_fix(self.ws, has_counts=self.first is not None) == RETWEETERS and self.first is not None:
            raise UploadError(f"{self.first}; nothing was stored")
