"""The live stream (issue 17; docs/live.md): intake of NDJSON records as queued events, the consumers that apply
them in micro-batches, and the stream tokens.

* :mod:`.records`: reading and classifying one batch of lines (all or nothing);
* :mod:`.intake`: storing a checked batch as events (backpressure, wake-ups, rates);
* :mod:`.consumer`: ``manage.py stream_consume``, partitions, micro-batches, reclaiming a dead consumer's work;
* :mod:`.tokens`: the workspaces' append-only stream tokens;
* :mod:`.channel`: the optional Redis side (wake-ups, heartbeats, rate counters).
"""

from __future__ import annotations

from .intake import (
    Accepted,
    Backpressure,
    BodyTooLarge,
    InputError,
    StreamRefused,
    stream_accept,
    stream_accept_body,
    stream_backlog,
)
from .tokens import stream_token_create, stream_token_revoke

# apply_events lives in .apply (stream-apply)

__all__ = [
    "Accepted",
    "Backpressure",
    "BodyTooLarge",
    "InputError",
    "StreamRefused",
    "stream_accept",
    "stream_accept_body",
    "stream_backlog",
    "stream_token_create",
    "stream_token_revoke",
]
