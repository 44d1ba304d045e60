"""How who-amplifies-whom's scores read: 3 significant digits, plain between 0.001 and 1,000, scientific outside,
relative to the list's first, the exact float kept in the markup."""

from __future__ import annotations

import pytest

from frontend.templatetags.wtf_scores import exact, ppr_error_bound, relative_score, sig3


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (100.0, "100"),
        (43.123, "43.1"),
        (50, "50.0"),
        (99.96, "100"),
        (0.5, "0.500"),
        (0.00123, "0.00123"),
        (0.000123, "1.23 × 10⁻⁴"),
        (0.0009996, "1.00 × 10⁻³"),
        (1.2e-5, "1.20 × 10⁻⁵"),
        (12345, "1.23 × 10⁴"),
        (0, "0"),
        (None, "—"),
    ],
)
def test_it_shows_3_significant_digits(value, shown):
    assert sig3(value) == shown


def test_it_shows_a_score_relative_to_the_first_and_keeps_the_exact_one():
    assert relative_score(1.0775e-5, 0.431, "Money relevance") == (
        '<data value="1.0775e-05" title="Money relevance: 1.0775e-05 exactly; 43.1 % of the first account\'s">'
        "43.1</data>"
    )


def test_a_row_without_its_relative_score_shows_the_score_itself():
    # a row cached by code that did not compute ``relative``: the template passes "" for the missing key
    assert relative_score(2.5e-5, "", "Money relevance") == relative_score(2.5e-5, None, "Money relevance")
    assert relative_score(2.5e-5, "", "Money relevance").endswith(">2.50 × 10⁻⁵</data>")
    assert exact(4.2e-6, "PPR ") == '<data value="4.2e-06" title="PPR 4.2e-06 exactly">4.20 × 10⁻⁶</data>'


def test_the_pagerank_bound_is_2_times_the_damping_to_the_iterations():
    assert ppr_error_bound(100) == "1.75 × 10⁻⁷"
    assert ppr_error_bound(0) == "2.00"
