"""The collector paused for one unit of stream work (monitor.services.stream._gc)."""

from __future__ import annotations

import gc

import pytest

from monitor.services.stream._gc import collector_paused


def test_the_collector_is_off_inside_and_on_again_after_even_when_the_block_raises():
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: still off, and the inner block does not turn it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_already_off_is_left_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
