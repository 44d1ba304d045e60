"""A tweet's entities as two strings, its ``hashtags`` and its ``urls`` (the :class:`~compute.tables.TweetTable`
columns of the same names).

* ``hashtags``: the tweet's hashtags lowercased (``str.lower``), without ``#``, distinct, in order of first
  appearance, joined by one space;
* ``urls``: the tweet's linked URLs, expanded (v1.1: ``expanded_url``, else ``url``; v2: ``unwound_url``, else
  ``expanded_url``, else ``url``), distinct, in order, joined by one space;
* ``""`` when the tweet has none. A value holding whitespace (a URL, or a tag the API never sends) is dropped,
  so splitting on blanks always gives the values back.

Entities are decoration: a malformed one (``entities`` or its lists of the wrong JSON type, an item that is not
an object, a tag or URL that is not a string) is passed over silently, never a reason to reject the tweet.

The functions take a msgspec struct of :mod:`._msgspec_types`, an :class:`~._json.Obj` view or a plain ``dict``
(what ``json.loads`` gives), so code that parses tweets itself can call them on what it has:
:func:`v1_entities` for a v1.1 status, :func:`v2_entities` for a v2 tweet, :func:`tags_from_cell` /
:func:`urls_from_cell` for the tweets CSV's cells. :func:`v1_struct_entities` is the v1.1 reader's fast path
(msgspec structs only).
"""

from __future__ import annotations

import re

__all__ = [
    "NO_ENTITIES",
    "join_tags",
    "join_urls",
    "tags_from_cell",
    "urls_from_cell",
    "v1_entities",
    "v1_struct_entities",
    "v2_entities",
]

#: ``(hashtags, urls)`` of a tweet that has none.
NO_ENTITIES = ("", "")


def _get(o, name: str):
    """``o[name]`` of a dict, ``o.name`` of a struct or view; ``None`` when missing or ``o`` is no object."""
    if type(o) is dict:
        return o.get(name)
    return getattr(o, name, None)


def _clean(values: dict) -> str:
    """The keys of ``values`` (an insertion-ordered set of non-empty strings) joined by one space, dropping the
    ones holding whitespace. One ``split`` of the joined string tells whether any does: the common case."""
    s = " ".join(values)
    parts = s.split()
    if len(parts) == len(values) and " ".join(parts) == s:
        return s
    return " ".join(v for v in values if v.split() == [v])


def join_tags(tags) -> str:
    """Hashtags (raw values; those that are not strings are passed over) as the ``hashtags`` string."""
    seen: dict[str, None] = {}
    for t in tags:
        if type(t) is str:
            t = t.lower()
            if t.startswith("#"):
                t = t.lstrip("#")
            if t:
                seen[t] = None
    return _clean(seen) if seen else ""


def join_urls(urls) -> str:
    """URLs (raw values; those that are not non-empty strings are passed over) as the ``urls`` string."""
    seen = {u: None for u in urls if type(u) is str and u}
    return _clean(seen) if seen else ""


def _v1_url(u) -> object:
    e = _get(u, "expanded_url")
    return e if type(e) is str and e else _get(u, "url")


def _v2_url(u) -> object:
    for name in ("unwound_url", "expanded_url"):
        e = _get(u, name)
        if type(e) is str and e:
            return e
    return _get(u, "url")


def _items(ent, name: str) -> list:
    v = _get(ent, name)
    return v if type(v) is list else []


def v1_entities(status) -> tuple[str, str]:
    """``(hashtags, urls)`` of a v1.1 status (struct, :class:`~._json.Obj` or dict), from
    ``extended_tweet.entities`` when the status has them (a long tweet's whole text), else ``entities``.

    Of the status itself only: for a retweet, pass its ``retweeted_status`` to get the original's."""
    ent = _get(_get(status, "extended_tweet"), "entities")
    if ent is None:
        ent = _get(status, "entities")
        if ent is None:
            return NO_ENTITIES
    return (
        join_tags([_get(h, "text") for h in _items(ent, "hashtags")]),
        join_urls([_v1_url(u) for u in _items(ent, "urls")]),
    )


#: Memos of the fast path: raw tag texts (one, or a tuple of several) -> ``hashtags``; picked URLs -> ``urls``.
#: The same original comes back in every retweet line that embeds it, so most lines are one lookup each, and the
#: rows of one tweet share one string. A pure function's memo: what it holds never changes a result (the
#: parallel reader's workers each have their own). Emptied when it reaches ``_MEMO_MAX`` entries, so each holds
#: a few MB at most.
_TAG_MEMO: dict = {}
_URL_MEMO: dict = {}
_MEMO_MAX = 1 << 14


def _memo(memo: dict, key, join, values) -> str:
    """``join(values)``, remembered under ``key`` (which stands for ``values``) when it is hashable."""
    got = join(values)
    try:
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        memo[key] = got
    except TypeError:  # a key holding a list (a malformed value): not remembered
        pass
    return got


def v1_struct_entities(st) -> tuple[str, str]:
    """:func:`v1_entities` of a msgspec ``V1Status`` / ``V1Embedded``: the v1.1 reader's fast path, run once a
    line. The structs are typed (the lists and items are what they say); the values are looked up in memos
    keyed by the raw tag texts and the picked URLs, and only what is not there yet is worked out."""
    ext = st.extended_tweet
    ent = st.entities if ext is None or ext.entities is None else ext.entities
    if ent is None:
        return NO_ENTITIES
    hs, us = ent.hashtags, ent.urls
    if hs:
        if len(hs) == 1:
            key = hs[0].text
            values = [key]
        else:
            values = [h.text for h in hs]
            key = tuple(values)
        try:
            ht = _TAG_MEMO.get(key)
        except TypeError:
            ht = None
        if ht is None:
            ht = _memo(_TAG_MEMO, key, join_tags, values)
    else:
        ht = ""
    if us:
        if len(us) == 1:
            u = us[0]
            e = u.expanded_url
            key = e if type(e) is str and e else u.url
            values = [key]
        else:
            values = [e if type(e := u.expanded_url) is str and e else u.url for u in us]
            key = tuple(values)
        try:
            ur = _URL_MEMO.get(key)
        except TypeError:
            ur = None
        if ur is None:
            ur = _memo(_URL_MEMO, key, join_urls, values)
    else:
        ur = ""
    return ht, ur


def v2_entities(tweet) -> tuple[str, str]:
    """``(hashtags, urls)`` of a v2 tweet (struct, :class:`~._json.Obj` or dict): ``entities.hashtags[].tag``
    and ``entities.urls[]`` (``unwound_url``, else ``expanded_url``, else ``url``)."""
    ent = _get(tweet, "entities")
    if ent is None:
        return NO_ENTITIES
    return (
        join_tags([_get(h, "tag") for h in _items(ent, "hashtags")]),
        join_urls([_v2_url(u) for u in _items(ent, "urls")]),
    )


_TAG_SEP = re.compile(r"[\s,;#]+")
_ANY_SEP = re.compile(r"[,;]+")
# in a blank-free piece holding a URL, a comma or semicolon separates only before the next URL (or at the end):
# one inside a URL's path or query (``/a,b``, ``?q=1;2``) is part of it
_URL_SEP = re.compile(r"[,;]+(?=[A-Za-z][A-Za-z0-9+.\-]*://|www\.|$)")


def tags_from_cell(cell: str | None) -> str:
    """A tweets CSV ``hashtags`` cell (tags separated by blanks, commas or semicolons, each with or without
    ``#``: ``"#Covid, vaccine;#covid"``) as the ``hashtags`` string (``"covid vaccine"``)."""
    if not cell:
        return ""
    return join_tags(_TAG_SEP.split(cell))


def urls_from_cell(cell: str | None) -> str:
    """A tweets CSV ``urls`` cell (URLs separated by blanks, commas or semicolons) as the ``urls`` string.

    A comma or semicolon inside a URL (``https://maps.example/@40.7,-74.0``) stays part of it: in a blank-free
    piece that holds ``://``, they separate only where the next URL begins (a scheme such as ``https://``, or
    ``www.``) or at the end; in a piece without ``://`` (``a.example,b.example``) every one separates."""
    if not cell:
        return ""
    out: list[str] = []
    for piece in cell.split():
        out.extend((_URL_SEP if "://" in piece else _ANY_SEP).split(piece))
    return join_urls(out)
