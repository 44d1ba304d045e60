"""The package metadata builds without setuptools' deprecation warnings: ``project.license`` as a TOML table
(``{ text = ... }``) printed a 15-line warning on every install since setuptools 77, which wants an SPDX string
(``pip wheel --no-deps -w /tmp/w .`` shows it; the string form needs setuptools >= 77 to build)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())


def test_the_license_is_an_spdx_expression():
    license = PYPROJECT["project"]["license"]
    assert isinstance(license, str), "project.license must be an SPDX string, not a table (deprecated)"
    assert re.fullmatch(r"LicenseRef-[A-Za-z0-9.\-]+|[A-Za-z0-9.\-+ ()]+", license)


def test_the_build_asks_for_a_setuptools_that_reads_it():
    (setuptools,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    floor = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", setuptools.replace(" ", ""))
    assert floor and int(floor.group(1)) >= 77, setuptools
