from __future__ import annotations

from tests.webapp import (  # noqa: F401  (fixtures)
    _eager_celery,
    _media,
    _no_read_cache,
    _plain_static,
    admin_user,
    alice,
    bob,
    import_files,
    run_tasks,
    ws_a,
    ws_b,
)

from .fixtures import collection_files, faults, stored, thesis  # noqa: F401  (fixtures)
