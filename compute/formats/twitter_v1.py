"""Twitter API v1.1 JSONL: one status per line (what the streaming and REST APIs, twarc1 and tweepy write).

A status with ``retweeted_status`` is a retweet: it yields the retweet row *and* a row for the embedded original
(id, author, time and the author's follower count as the retweet saw them); downstream keeps one row per
original tweet id. Stream notices (``delete``, ``limit``, ...) are skipped and counted, not errors.

Entities (:mod:`._entities`): a status's ``hashtags`` and ``urls`` come from ``extended_tweet.entities`` when it
has them (a long tweet's whole text, as the text comes from ``extended_tweet.full_text``), else from
``entities``. A retweet line's two rows both get the *original's* (``retweeted_status``): a retweet spreads the
original's hashtags and links, and its own entities are those of the truncated ``RT @...`` text (so the same
strings serve both rows, at no extra cost). Malformed entities are passed over, never a bad record.

Speed: with msgspec each line decodes into small structs that name only the fields used, so the decoder skips
the user mentions, the entities' indices, the other ~36 user fields and so on without building objects for
them, and parses and range-checks the ids in C. The common line then costs a few attribute reads, one call for
the entities and a tuple append (the *fast path*); any line that is not plainly well formed goes through the
*careful path*, which checks every field in Python and names the bad one exactly as the orjson / json backends
do (so messages do not depend on what is installed). Times are parsed a chunk at a time, in a compiled pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from ..tables import NO_TWEET
from ._entities import v1_entities, v1_struct_entities
from ._fields import Bad, Ctx, to_count, to_id
from ._io import LineBlocks
from ._json import Obj, backend, dict_loads
from ._report import LongLines
from ._tweets import TweetBuilder
from .limits import FOLLOWERS_MAX

__all__ = ["read_v1", "v1_builder", "v1_chunks", "V1Counts", "json_decoder", "sniff_json", "V1_KEYS"]

_AT = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_ID_MAX = (1 << 63) - 1
_NOTICES = ("delete", "limit", "scrub_geo", "status_withheld", "user_withheld", "disconnect", "warning")


def json_error(exc: BaseException) -> tuple[str | None, str, str | None]:
    """``(field, kind, detail)`` for a decoder exception (msgspec, orjson or json)."""
    if isinstance(exc, UnicodeDecodeError):
        return None, "undecodable bytes (not UTF-8)", None
    name = type(exc).__name__
    msg = str(exc)
    if name == "ValidationError":
        m = _AT.match(msg)
        path = (m["path"] or "").lstrip(".") if m else ""
        return path or None, "wrong type", m["msg"] if m else msg
    if msg.startswith("'utf-8' codec") or "UTF-8" in msg:
        return None, "undecodable bytes (not UTF-8)", None
    return None, "invalid JSON", msg


def json_decoder(kind: str):
    """``(decode, errors, wrap)`` for the best backend: ``decode(bytes)`` gives a struct (msgspec) or a dict;
    ``wrap`` turns the latter into an attribute view."""
    name = backend()
    if name == "msgspec":
        import msgspec

        from . import _msgspec_types as T

        dec = T.v1_decoder() if kind == "v1" else T.v2_decoder()
        return dec.decode, (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError), None
    loads, errors = dict_loads(name)
    return loads, errors, Obj


def _text(st) -> str | None:
    ext = st.extended_tweet
    if ext is not None and type(getattr(ext, "full_text", None)) is str:
        return ext.full_text
    if type(st.full_text) is str:
        return st.full_text
    return st.text if type(st.text) is str else None


class _Names:
    """Field names of a status or of the embedded one, built once rather than per line."""

    def __init__(self, prefix: str) -> None:
        for f in ("id", "id_str", "user", "user.id", "user.id_str", "user.followers_count", "created_at",
                  "timestamp_ms"):  # fmt: skip
            setattr(self, f.replace(".", "_"), prefix + f)


_TOP, _EMBEDDED = _Names(""), _Names("retweeted_status.")


def _status_fields(st, nm: _Names):
    """(tweet id, user id, raw time, time field, followers, screen name) of a status or embedded status.

    The common case (``id_str`` of at most 19 ASCII digits, an int follower count) is tested inline: this runs
    once or twice per line, so every call saved counts.
    """
    v = st.id_str
    if type(v) is str and len(v) < 20 and v.isascii() and v.isdigit():
        tid = int(v)
        if tid > _ID_MAX:
            tid = to_id(v, nm.id_str)
    elif v is not None:
        tid = to_id(v, nm.id_str)
    else:
        tid = to_id(st.id, nm.id)
    user = st.user
    if user is None:
        raise Bad(nm.user, "missing required field")
    if not hasattr(user, "followers_count"):
        raise Bad(nm.user, "wrong type", "expected an object")
    v = user.id_str
    if type(v) is str and len(v) < 20 and v.isascii() and v.isdigit():
        uid = int(v)
        if uid > _ID_MAX:
            uid = to_id(v, nm.user_id_str)
    elif v is not None:
        uid = to_id(v, nm.user_id_str)
    else:
        uid = to_id(user.id, nm.user_id)
    fc = user.followers_count
    fol = float(fc) if type(fc) is int and 0 <= fc <= FOLLOWERS_MAX else to_count(fc, nm.user_followers_count)
    t = st.created_at
    if t is not None:
        tfield = nm.created_at
    else:
        t = st.timestamp_ms
        tfield = nm.created_at if t is None else nm.timestamp_ms
    sn = user.screen_name
    return tid, uid, t, tfield, fol, sn if type(sn) is str else None


def _careful_rows(st, line: int) -> list[tuple] | None:
    """Rows of one decoded status, every field checked (raises ``Bad`` naming it); ``None`` for a stream notice.

    Works on msgspec structs and on dict views alike: it is the whole reader for the dict backends and the
    fallback of the msgspec fast path for any line that path does not take.
    """
    if st.id_str is None and st.id is None and any(getattr(st, n) is not None for n in _NOTICES):
        return None
    tid, uid, t, tf, fol, sn = _status_fields(st, _TOP)
    rs = st.retweeted_status
    if rs is None:
        return [(line, line, tid, NO_TWEET, uid, t, tf, fol, sn, _text(st), *v1_entities(st))]
    if not hasattr(rs, "user"):
        raise Bad("retweeted_status", "wrong type", "expected an object")
    otid, ouid, ot, otf, ofol, osn = _status_fields(rs, _EMBEDDED)
    ht, ur = v1_entities(rs)  # both rows: the original's (module docstring)
    return [
        (line, line, tid, otid, uid, t, tf, fol, sn, _text(st), ht, ur),
        (line, line, otid, NO_TWEET, ouid, ot, otf, ofol, osn, _text(rs), ht, ur),
    ]


def v1_builder(sink, seen=None, cls: type[TweetBuilder] = TweetBuilder) -> TweetBuilder:
    return cls(sink, text=True, entities=True, seen=seen, id_field="id_str")


def read_v1(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    builder = v1_builder(sink, ctx.seen)
    sink.before_raise = builder.flush
    longs = LongLines(sink, ctx.max_record)
    blocks = LineBlocks(path, ctx.progress, max_line=ctx.max_record, too_long=longs)
    counts = V1Counts()
    for table in v1_chunks(blocks.lines(), sink, builder, ctx.chunk_size, counts):
        yield "tweets", table
    if not counts.nonblank and not longs.n:
        sink.bad_file("empty file")
    table = builder.flush()
    if table is not None:
        yield "tweets", table
    sink.before_raise = None


class V1Counts:
    """What :func:`v1_chunks` counted besides rows: the lines that were not blank (set at the end)."""

    def __init__(self) -> None:
        self.nonblank = 0


def v1_chunks(lines, sink, builder: TweetBuilder, chunk: int, counts: V1Counts) -> Iterator[object]:
    """The line loop of :func:`read_v1`: rows into ``builder``, ``builder.flush()`` after the line that brings
    it to ``chunk`` rows or more (the last, partial chunk is the caller's); bad lines to ``sink`` as they come.
    ``lines`` yields ``(line number, bytes)`` (:meth:`LineBlocks.lines`)."""
    decode, errors, wrap = json_decoder("v1")
    fast = wrap is None  # msgspec: ids arrive as checked ints, the common line needs no per-field Python
    if fast:
        import msgspec

        invalid = msgspec.ValidationError
    else:
        invalid = ()
    rows = builder.rows
    add = rows.append
    nonblank = 0
    for line, raw in lines:
        redo = False
        try:
            st = decode(raw)
        except invalid:
            # msgspec refused a typed field: decode the line again as plain JSON so the careful path can name
            # the field and value the way every backend does
            redo = True
            try:
                st = json.loads(bytes(raw))
            except (ValueError, UnicodeDecodeError) as exc:
                nonblank += 1
                sink.bad(line, *json_error(exc))
                continue
        except errors as exc:
            if bytes(raw).isspace():
                continue
            nonblank += 1
            sink.bad(line, *json_error(exc))
            continue
        nonblank += 1
        if fast and not redo:
            # the common line: everything present and of the usual type; anything else takes the careful path.
            # String ids must be plain ASCII digits (checked inline: a helper call cost 6% of the line); the text
            # is read inline where it is the plain one, the count kept an int (its column is made of floats):
            # each call saved here is saved twice per retweet line
            u = st.user
            tid = st.id_str
            tid = st.id if tid is None else (int(tid) if len(tid) < 20 and tid.isdigit() and tid.isascii() else None)
            t = st.created_at
            if u is not None and tid is not None and tid <= _ID_MAX and t is not None:
                uid = u.id_str
                uid = u.id if uid is None else (int(uid) if len(uid) < 20 and uid.isdigit() and uid.isascii() else None)
                fc = u.followers_count
                if uid is not None and uid <= _ID_MAX and type(fc) is int and 0 <= fc <= FOLLOWERS_MAX:
                    sn = u.screen_name
                    if type(sn) is not str:
                        sn = None
                    tx = st.text
                    if type(tx) is not str or st.full_text is not None or st.extended_tweet is not None:
                        tx = _text(st)
                    rs = st.retweeted_status
                    if rs is None:
                        ht, ur = v1_struct_entities(st)
                        add((line, line, tid, NO_TWEET, uid, t, "created_at", fc, sn, tx, ht, ur))
                        if len(rows) >= chunk:
                            yield builder.flush()
                            rows = builder.rows
                            add = rows.append
                        continue
                    ou = rs.user
                    otid = rs.id_str
                    otid = (
                        rs.id
                        if otid is None
                        else (int(otid) if len(otid) < 20 and otid.isdigit() and otid.isascii() else None)
                    )
                    ot = rs.created_at
                    if ou is not None and otid is not None and otid <= _ID_MAX and ot is not None:
                        ouid = ou.id_str
                        ouid = (
                            ou.id
                            if ouid is None
                            else (int(ouid) if len(ouid) < 20 and ouid.isdigit() and ouid.isascii() else None)
                        )
                        ofc = ou.followers_count
                        if ouid is not None and ouid <= _ID_MAX and type(ofc) is int and 0 <= ofc <= FOLLOWERS_MAX:
                            osn = ou.screen_name
                            if type(osn) is not str:
                                osn = None
                            otx = rs.text
                            if type(otx) is not str or rs.full_text is not None or rs.extended_tweet is not None:
                                otx = _text(rs)
                            ht, ur = v1_struct_entities(rs)
                            add((line, line, tid, otid, uid, t, "created_at", fc, sn, tx, ht, ur))
                            add((line, line, otid, NO_TWEET, ouid, ot, "retweeted_status.created_at", ofc,
                                 osn, otx, ht, ur))  # fmt: skip
                            if len(rows) >= chunk:
                                yield builder.flush()
                                rows = builder.rows
                                add = rows.append
                            continue
        else:
            if type(st) is not dict:
                sink.bad(line, None, "wrong type", "expected a JSON object")
                continue
            st = Obj(st)
        try:
            got = _careful_rows(st, line)
        except Bad as b:
            sink.bad(line, b.field, b.kind, b.detail)
            continue
        if got is None:
            sink.report.n_skipped += 1
            continue
        rows.extend(got)
        if len(rows) >= chunk:
            yield builder.flush()
            rows = builder.rows
            add = rows.append
    counts.nonblank = nonblank


#: Fields only a v1.1 status has (``user`` for its author, ``id_str`` beside ``id``...).
V1_KEYS = ("user", "retweeted_status", "id_str", "timestamp_ms", "favorite_count", "in_reply_to_status_id")


def sniff_json(obj: dict) -> bool:
    """Detection (:mod:`.detect`): a JSON line with v1.1 status fields and no v2 page (``data`` / ``includes``).

    Stream notices (``delete``, ``limit``...) say nothing either way: the next line decides."""
    return "data" not in obj and "includes" not in obj and any(k in obj for k in V1_KEYS)
