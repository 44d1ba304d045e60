"""The API's OpenAPI schema class: every operation gets a summary (the one-line title Swagger UI and Redoc list
operations by): the view's own ``extend_schema(summary=...)`` where it gives one, else the first sentence of
the view's docstring."""

from __future__ import annotations

import re

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

_FIRST_SENTENCE = re.compile(r"^(.+?[.:])(\s|$)", re.S)


class AutoSchema(SpectacularAutoSchema):
    def get_summary(self) -> str | None:
        explicit = super().get_summary()
        if explicit:
            return explicit
        doc = (getattr(self.view, "__doc__", None) or "").strip()
        if not doc:
            return None
        first = " ".join(doc.split("\n\n", 1)[0].split())
        m = _FIRST_SENTENCE.match(first)
        return (m.group(1) if m else first).rstrip(".:")
