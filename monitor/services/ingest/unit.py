"""The workspace's unit on an upload (issue 40; :mod:`monitor.services.units` has the rule): an upload whose rows
carry follower counts into a workspace that counts retweeters reached is refused whole, naming the file, the line
and the field of the first such row; an upload that brings a workspace its first tweets fixes its unit.

Checked at each part's merge (``_Parts._merge``) against the unit committed so far, and fixed at the last one,
inside the import's transaction: a refused import stores nothing and fixes nothing, and an import and a stream
that bring a new workspace its first data at the same time are serialised by the workspace's row (the second to
fix it reads the first's unit, and is refused if its data does not fit)."""

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
        """Before a part's merge: note this part's rows, fix the unit at the last part of a stored upload, and raise
        :class:`UploadError` when the upload carries counts and the workspace counts retweeters."""
        rows = st.tweets()
        if len(rows.tweet_id):
            self.has_tweets = True
            if self.first is None:
                counted = np.flatnonzero(~np.isnan(rows.followers))
                if len(counted):
                    src, line = st.where()
                    i = int(counted[0])
                    name = st.names[int(src[i])]
                    field = UPLOAD_COUNT_FIELDS.get(self.formats.get(name, ""), "followers_count")
                    self.first = BadRecord(name, int(line[i]) if line[i] >= 0 else None, field, refusal())
        if not self.has_tweets:
            return
        unit = unit_of(self.ws)
        if not unit and self.store and st.final:
            unit = unit_fix(self.ws, has_counts=self.first is not None)
        if unit == RETWEETERS and self.first is not None:
            raise UploadError(f"{self.first}; nothing was stored")
