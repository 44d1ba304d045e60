"""WSGI entry point (gunicorn monitor.wsgi:application). The process is primed (``monitor.boot``) before it
takes its first request."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
application = get_wsgi_application()

from monitor.boot import prime_web_process  # noqa: E402 - needs the settings and apps loaded above

prime_web_process()
