"""WSGI entry point (gunicorn monitor.wsgi:application)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
application = get_wsgi_application()
