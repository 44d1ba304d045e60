"""Twitter API v2 JSONL as twarc2 writes it.

Two line shapes, possibly mixed in one file:

* a *page* ``{"data": [tweet, ...], "includes": {"users": [...], "tweets": [...]}, "meta": ...}`` (what
  ``twarc2 search`` writes; ``data`` may also be a single tweet object);
* one *tweet* per line (what ``twarc2 flatten`` writes): the tweet object with ``author`` expanded and each
  ``referenced_tweets`` entry expanded into the referenced tweet.

A tweet is a retweet when ``referenced_tweets`` holds ``{"type": "retweeted", "id": ...}``. The author's
follower count comes from ``author.public_metrics.followers_count`` (flattened) or from the matching user in
``includes.users``; unknown is NaN. Originals that retweets reference and that the line carries (in
``includes.tweets`` or expanded in ``referenced_tweets``) are emitted as original rows too. Each tweet is one
record: a bad tweet on a page drops that tweet, not the page.

Entities (:func:`._entities.v2_entities`): every row's ``hashtags`` and ``urls`` are its own tweet's
(``entities.hashtags[].tag``; ``entities.urls[]``: ``unwound_url``, else ``expanded_url``, else ``url``), a
retweet's too (the API gives a retweet the entities of its ``RT @...`` text). Malformed entities are passed
over, never a bad record: a line msgspec refuses for its entities alone is decoded again as plain JSON.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from ..tables import NO_TWEET
from ._entities import v2_entities
from ._fields import Bad, Ctx, to_count, to_id
from ._io import LineBlocks
from ._json import Obj
from ._report import LongLines
from ._tweets import TweetBuilder
from .twitter_v1 import V1_KEYS, json_decoder, json_error

__all__ = ["read_v2", "sniff_json"]


def _is_obj(x) -> bool:
    return hasattr(x, "id") and not isinstance(x, (str, bytes, list))


def _author(tw, users: dict, prefix: str):
    """(user id, followers, username) of a tweet's author."""
    a = tw.author
    if a is not None and not _is_obj(a):
        raise Bad(prefix + "author", "wrong type", "expected an object")
    if tw.author_id is not None:
        uid = to_id(tw.author_id, prefix + "author_id")
    elif a is not None and a.id is not None:
        uid = to_id(a.id, prefix + "author.id")
    else:
        raise Bad(prefix + "author_id", "missing required field")
    where = prefix + "author"
    if a is None or a.public_metrics is None:
        u = users.get(uid)
        if u is not None:
            a, where = u
    if a is None:
        return uid, float("nan"), None
    pm = a.public_metrics
    if pm is not None and not hasattr(pm, "followers_count"):
        raise Bad(where + ".public_metrics", "wrong type", "expected an object")
    fol = float("nan") if pm is None else to_count(pm.followers_count, where + ".public_metrics.followers_count")
    return uid, fol, a.username if type(a.username) is str else None


def _retweeted(tw, prefix: str):
    """(original id, (index, referenced entry)) when ``tw`` is a retweet, else (NO_TWEET, None)."""
    refs = tw.referenced_tweets
    if not refs:
        return NO_TWEET, None
    if not isinstance(refs, list):
        raise Bad(prefix + "referenced_tweets", "wrong type", "expected a list")
    for k, ref in enumerate(refs):
        if _is_obj(ref) and ref.type == "retweeted":
            return to_id(ref.id, f"{prefix}referenced_tweets[{k}].id"), (k, ref)
    return NO_TWEET, None


def _includes_problem(inc) -> str | None:
    """The field of a page's ``includes`` that has the wrong JSON type, if any (the dict backends see any)."""
    if inc is None:
        return None
    if isinstance(inc, (str, int, float, list)) or not hasattr(inc, "users"):
        return "includes"
    for name in ("users", "tweets"):
        v = getattr(inc, name)
        if v is not None and not isinstance(v, list):
            return f"includes.{name}"
    return None


def _entities_only(exc: BaseException, raw) -> Obj | None:
    """The line as a plain JSON view when msgspec refused it for a malformed ``entities`` (decoration: the dict
    backends pass over it, and so must this one); ``None`` for any other refusal."""
    field, kind, _ = json_error(exc)
    if kind != "wrong type" or field is None or ".entities." not in f".{field}.":
        return None
    try:
        obj = json.loads(bytes(raw))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return Obj(obj) if type(obj) is dict else None


def read_v2(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    builder = TweetBuilder(sink, text=True, entities=True, seen=ctx.seen, id_field="id")
    sink.before_raise = builder.flush
    decode, errors, wrap = json_decoder("v2")
    longs = LongLines(sink, ctx.max_record)
    blocks = LineBlocks(path, ctx.progress, max_line=ctx.max_record, too_long=longs)
    chunk = ctx.chunk_size
    rec = 0

    def tweet(tw, line: int, prefix: str, users: dict, rtid_known: int | None = None):
        """Add one tweet (a record); returns ((index, referenced entry) or None, retweeted id)."""
        nonlocal rec
        rec += 1
        try:
            if not _is_obj(tw):
                raise Bad(prefix.rstrip(".") or None, "wrong type", "expected a tweet object")
            tid = to_id(tw.id, prefix + "id")
            rtid, ref = _retweeted(tw, prefix) if rtid_known is None else (rtid_known, None)
            uid, fol, sn = _author(tw, users, prefix)
        except Bad as b:
            sink.bad(line, b.field, b.kind, b.detail)
            return None, NO_TWEET
        builder.add(
            rec,
            line,
            tid,
            rtid,
            uid,
            tw.created_at,
            prefix + "created_at",
            fol,
            sn,
            tw.text if type(tw.text) is str else None,
            *v2_entities(tw),
        )
        return ref, rtid

    nonblank = 0
    for line, raw in blocks.lines():
        try:
            obj = decode(raw)
        except errors as exc:
            if bytes(raw).isspace():
                continue
            obj = _entities_only(exc, raw) if wrap is None else None
            if obj is None:
                nonblank += 1
                sink.bad(line, *json_error(exc))
                continue
        nonblank += 1
        if wrap is not None:
            if type(obj) is not dict:
                sink.bad(line, None, "wrong type", "expected a JSON object")
                continue
            obj = wrap(obj)
        data = obj.data
        if data is None:
            if obj.id is None:
                sink.report.n_skipped += 1  # e.g. a twarc2 error or meta-only line
                continue
            ref, _ = tweet(obj, line, "", {})
            if ref is not None and (ref[1].author_id is not None or ref[1].author is not None):
                # twarc2 flatten expanded the original into the reference: emit it too
                tweet(ref[1], line, f"referenced_tweets[{ref[0]}].", {}, rtid_known=NO_TWEET)
        else:
            many = isinstance(data, list)
            tweets = data if many else [data]
            if not tweets:
                sink.report.n_skipped += 1  # an empty page (a search that found nothing)
                continue
            inc = obj.includes
            users: dict = {}
            originals: dict = {}
            problem = _includes_problem(inc)
            if problem is not None:
                sink.bad(
                    line, problem, "wrong type", "expected an object" if problem == "includes" else "expected a list"
                )
                continue
            if inc is not None:
                for j, u in enumerate(inc.users or ()):
                    # a user with a bad id matches no tweet; a tweet needing it reports its own field
                    if _is_obj(u) and u.id is not None:
                        with contextlib.suppress(Bad):
                            users[to_id(u.id, "")] = (u, f"includes.users[{j}]")
                for j, t in enumerate(inc.tweets or ()):
                    if _is_obj(t) and t.id is not None:
                        originals.setdefault(str(t.id), (j, t))
            emitted: set[str] = set()
            for i, tw in enumerate(tweets):
                _, rtid = tweet(tw, line, f"data[{i}]." if many else "data.", users)
                key = str(rtid)
                if rtid != NO_TWEET and key in originals and key not in emitted:
                    emitted.add(key)
                    j, t = originals[key]
                    tweet(t, line, f"includes.tweets[{j}].", users, rtid_known=NO_TWEET)
        if len(builder) >= chunk:
            yield "tweets", builder.flush()
    if not nonblank and not longs.n:
        sink.bad_file("empty file")
    table = builder.flush()
    if table is not None:
        yield "tweets", table
    sink.before_raise = None


#: Fields only a v2 tweet has; a line with these and v1.1 fields too is read as v1.1.
_V2_KEYS = (
    "author_id",
    "edit_history_tweet_ids",
    "public_metrics",
    "referenced_tweets",
    "author",
    "conversation_id",
    "possibly_sensitive",
    "reply_settings",
)


def sniff_json(obj: dict) -> bool:
    """Detection (:mod:`.detect`): a twarc2 page (``data`` / ``includes``), or a flattened tweet with v2-only
    fields and no v1.1 ones."""
    if "data" in obj or "includes" in obj:
        return True
    return not any(k in obj for k in V1_KEYS) and any(k in obj for k in _V2_KEYS)
