"""Claims: saved tweet searches an analyst follows.

A :class:`Claim` is a query of the tweet search (:mod:`monitor.selectors.claims`: words, a "quoted phrase",
``#hashtag``, a URL or a domain) saved under a name in one workspace. Its tweets are the workspace's tweets the
query matches *when it is read*, so a claim follows new uploads without being recomputed. ``tracked`` lists the
accounts the analyst watches for this claim (account primary keys); the alert rule "a tracked account spreads this
claim" reads it. Deleting a workspace deletes its claims.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .core import Workspace

#: the most accounts one claim tracks (each is one probe of the retweets when its alert rule is evaluated)
MAX_TRACKED = 200


class Claim(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="claims")
    name = models.CharField(max_length=200)
    query = models.CharField(max_length=500, help_text="the tweet search that finds the claim's tweets")
    tracked = models.JSONField(default=list, blank=True, help_text="account keys the analyst tracks for this claim")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="claim_unique_name")]

    def __str__(self) -> str:
        return self.name
