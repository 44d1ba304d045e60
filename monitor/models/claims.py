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

from .core import Tweet, Workspace

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


class TweetDocument(models.Model):
    """A tweet's search document alone (PostgreSQL): its key, workspace, time and status id, and the ``search``
    tsvector of ``monitor_tweet`` (a column of this table that the model leaves out, as it does the tweet's).

    Written by PostgreSQL, never by Django: triggers on ``monitor_tweet`` (migration 0038) insert a row for each
    tweet inserted, in the same statement and order, update it when the tweet's text, entities, time or ids
    change, and delete it with the tweet. The tweet search walks this table instead of the tweets' when it tests
    the newest tweets one by one (a phrase of common words: 232,000 tested at 10M tweets): its rows are never
    updated, so they lie densely in the order they were written, about 300 bytes each, where the tweets' table
    leaves half of each page free for the compute's updates in place (benchmarks/claims.md). On SQLite (the
    embedded default) it stays empty: the search there matches by regular expressions."""

    tweet = models.OneToOneField(
        Tweet, on_delete=models.DO_NOTHING, primary_key=True, db_constraint=False, related_name="+"
    )
    workspace_id = models.BigIntegerField()
    created_at = models.DateTimeField()
    status_id = models.BigIntegerField(help_text="the tweet's Twitter status id")

    class Meta:
        indexes = [models.Index(fields=["workspace_id", "created_at", "status_id"], name="tweetdocument_walk")]


class SearchPairs(models.Model):
    """A workspace's index of adjacent word pairs (PostgreSQL): which common words it pairs, and the index's name.

    A phrase of two common words is the search's slowest query: its words are each in a few per cent of the tweets,
    so PostgreSQL's estimate of the phrase (an AND of them) is tens of times its real matches, and the newest
    matches are found by testing the newest documents one by one (232,000 at 10M tweets). Once a workspace holds
    enough documents, the service ``services.search_pairs`` builds a GIN index of each of its documents' adjacent
    pairs of *common* words with its week (``monitor_lexeme_pairs(search, created_at, <lexemes>)``, migration
    0039; a partial index on this workspace's rows of ``monitor_tweetdocument``), and the search reads a phrase of
    common words through it (``selectors.claims``). The words are fixed for the index's life (they are part of its
    expression): when new words become common, a new index is built beside it and this row switched to it, so the
    search never reads an index that lacks a document's pairs. ``index_name`` empty: the workspace was checked and
    needs none."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, primary_key=True, related_name="+")
    lexemes = models.JSONField(default=list, help_text="the common words the index pairs, sorted")
    index_name = models.CharField(max_length=63, blank=True)
    documents = models.BigIntegerField(default=0, help_text="the workspace's documents when it was checked")
    checked_version = models.BigIntegerField(default=-1, help_text="the workspace's data version when checked")
    built_at = models.DateTimeField(null=True, blank=True)
    build_seconds = models.FloatField(default=0.0)

    class Meta:
        verbose_name = "search pairs index"
        verbose_name_plural = "search pairs indexes"

    def __str__(self) -> str:
        return self.index_name or f"no pairs index for workspace {self.workspace_id}"
