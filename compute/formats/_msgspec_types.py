"""msgspec struct types for the Twitter JSON readers (imported only when msgspec is installed).

Each struct declares just the fields a reader uses, so msgspec skips the rest of a 5 KB status without building
Python objects for it. Scalars are typed ``Any`` and validated by the reader, which can then name the field and
value in its message; nested objects are structs, and a value of the wrong JSON type there is reported by
msgspec's ``ValidationError`` with its ``$.path``.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

__all__ = ["V1Status", "V2Line", "v1_decoder", "v2_decoder"]

#: A numeric tweet or user id (``id``), range-checked by msgspec in C.
Id = Annotated[int, msgspec.Meta(ge=0, le=(1 << 63) - 1)]
#: A string id (``id_str``) stays a string: the reader accepts only plain ASCII digits (``"1e3"`` and ``"1.0"``
#: are refused as the orjson / json backends refuse them; a lax int conversion would take them) and converts
#: with ``int()``. A ``pattern`` constraint did the same through Python's ``re``, 10% more instructions per
#: line. Anything else sends the line to the careful path, which names the problem.
IdStr = str


class V1User(msgspec.Struct, gc=False):
    id: Id | None = None
    id_str: IdStr | None = None
    screen_name: Any = None
    followers_count: Any = None


class V1Hashtag(msgspec.Struct, gc=False):
    text: Any = None


class V1Url(msgspec.Struct, gc=False):
    url: Any = None
    expanded_url: Any = None


class V1Entities(msgspec.Struct, gc=False):
    """The entities a reader keeps (:mod:`._entities`); a list or item of the wrong JSON type fails the
    decode and sends the line to the careful path, which passes over it."""

    hashtags: list[V1Hashtag] | None = None
    urls: list[V1Url] | None = None


class V1Extended(msgspec.Struct, gc=False):
    full_text: Any = None
    entities: V1Entities | None = None


class V1Embedded(msgspec.Struct, gc=False):
    """The status inside ``retweeted_status``."""

    id: Id | None = None
    id_str: IdStr | None = None
    created_at: Any = None
    timestamp_ms: Any = None
    user: V1User | None = None
    text: Any = None
    full_text: Any = None
    extended_tweet: V1Extended | None = None
    entities: V1Entities | None = None


class V1Status(msgspec.Struct, gc=False):
    id: Id | None = None
    id_str: IdStr | None = None
    created_at: Any = None
    timestamp_ms: Any = None
    user: V1User | None = None
    text: Any = None
    full_text: Any = None
    extended_tweet: V1Extended | None = None
    entities: V1Entities | None = None
    retweeted_status: V1Embedded | None = None
    # stream notices (not tweets): present means "skip this line"
    delete: Any = None
    limit: Any = None
    scrub_geo: Any = None
    status_withheld: Any = None
    user_withheld: Any = None
    disconnect: Any = None
    warning: Any = None


class V2Hashtag(msgspec.Struct, gc=False):
    tag: Any = None


class V2Url(msgspec.Struct, gc=False):
    url: Any = None
    expanded_url: Any = None
    unwound_url: Any = None


class V2Entities(msgspec.Struct, gc=False):
    """As :class:`V1Entities`; the v2 reader decodes a line that fails here again as plain JSON."""

    hashtags: list[V2Hashtag] | None = None
    urls: list[V2Url] | None = None


class V2Metrics(msgspec.Struct, gc=False):
    followers_count: Any = None


class V2User(msgspec.Struct, gc=False):
    id: Any = None
    username: Any = None
    public_metrics: V2Metrics | None = None


class V2Ref(msgspec.Struct, gc=False):
    """An entry of ``referenced_tweets``; twarc2 ``flatten`` expands it into the whole referenced tweet."""

    type: Any = None
    id: Any = None
    author_id: Any = None
    created_at: Any = None
    text: Any = None
    entities: V2Entities | None = None
    author: V2User | None = None


class V2Tweet(msgspec.Struct, gc=False):
    id: Any = None
    author_id: Any = None
    created_at: Any = None
    text: Any = None
    entities: V2Entities | None = None
    referenced_tweets: list[V2Ref] | None = None
    author: V2User | None = None


class V2Includes(msgspec.Struct, gc=False):
    users: list[V2User] | None = None
    tweets: list[V2Tweet] | None = None


class V2Line(msgspec.Struct, gc=False):
    """A twarc2 line: a page (``data`` + ``includes``) or one (flattened) tweet."""

    data: list[V2Tweet] | V2Tweet | None = None
    includes: V2Includes | None = None
    id: Any = None
    author_id: Any = None
    created_at: Any = None
    text: Any = None
    entities: V2Entities | None = None
    referenced_tweets: list[V2Ref] | None = None
    author: V2User | None = None


def v1_decoder() -> msgspec.json.Decoder:
    return msgspec.json.Decoder(V1Status)


def v2_decoder() -> msgspec.json.Decoder:
    return msgspec.json.Decoder(V2Line)
