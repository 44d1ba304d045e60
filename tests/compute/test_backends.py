"""Backend choice, device naming and GPU out-of-memory detection: the parts that run without a GPU."""

from __future__ import annotations

import sys
import types

import pytest

from compute import backends


def test_it_resolves_cpu_and_refuses_an_unknown_backend():
    assert backends.resolve_backend("cpu") == "cpu"
    with pytest.raises(ValueError, match="backend must be one of auto, cpu, gpu, not 'tpu'"):
        backends.resolve_backend("tpu")


def test_it_resolves_auto_to_cpu_where_the_gpu_is_disabled(monkeypatch):
    monkeypatch.setenv("SPREADWATCH_DISABLE_GPU", "1")
    backends._gpu_probe.cache_clear()
    try:
        assert backends.resolve_backend("auto") == "cpu"
        with pytest.raises(backends.BackendUnavailable, match="disabled by SPREADWATCH_DISABLE_GPU"):
            backends.resolve_backend("gpu")
    finally:
        backends._gpu_probe.cache_clear()


@pytest.mark.parametrize(
    "text", ["cudaErrorMemoryAllocation: out of memory", "CUDA_ERROR_OUT_OF_MEMORY: out of memory"]
)
def test_it_tells_a_cuda_allocation_failure_by_its_message(text):
    assert backends.is_device_oom(RuntimeError(text))


@pytest.mark.parametrize("exc", [MemoryError(), RuntimeError("a kernel bug"), ValueError("cuda")])
def test_it_does_not_take_other_errors_for_a_gpu_out_of_memory(exc):
    assert not backends.is_device_oom(exc)


def test_it_knows_cupys_out_of_memory_error_when_cupy_is_loaded(monkeypatch):
    class OutOfMemoryError(Exception):
        pass

    fake = types.SimpleNamespace(
        cuda=types.SimpleNamespace(memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError))
    )
    monkeypatch.setitem(sys.modules, "cupy", fake)
    assert backends.is_device_oom(OutOfMemoryError("no message that names CUDA"))
    assert not backends.is_device_oom(RuntimeError("a kernel bug"))


def test_it_frees_the_device_memory_pool_only_where_cupy_is_loaded(monkeypatch):
    freed = []
    pool = types.SimpleNamespace(free_all_blocks=lambda: freed.append(True))
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    backends.free_device_memory()  # no CuPy: nothing to free, and nothing imported
    assert "cupy" not in sys.modules and freed == []
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(get_default_memory_pool=lambda: pool))
    backends.free_device_memory()
    assert freed == [True]


def test_it_names_the_cpu_with_its_cores():
    name = backends.device_name("cpu")
    assert name.startswith("CPU (") and "cores" in name


def test_it_tells_whether_cupy_is_installed_without_importing_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    loaded = "cupy" in sys.modules
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cupy" else real(name, *a))
    assert not backends.gpu_package_installed()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "cupy" else real(name, *a))
    assert backends.gpu_package_installed() and ("cupy" in sys.modules) == loaded


@pytest.mark.gpu
def test_it_knows_a_real_gpu_out_of_memory_and_names_the_device():
    from tests.conftest import _gpu_skip_reason

    if reason := _gpu_skip_reason():
        pytest.skip(reason)
    import cupy

    with pytest.raises(Exception) as caught:  # whichever error CuPy raises: telling it apart is the point
        cupy.empty(1 << 50, dtype=cupy.uint8)  # a petabyte: no GPU holds it
    assert backends.is_device_oom(caught.value), repr(caught.value)
    backends.free_device_memory()
    assert cupy.get_default_memory_pool().total_bytes() == 0
    assert backends.device_name("gpu").startswith("GPU 0: ")


@pytest.mark.parametrize(
    "visible,index,physical", [("", 0, "0"), ("1", 0, "1"), ("2,3", 1, "3"), (" 1 , 0", 1, "0"), ("1", 2, "2")]
)
def test_a_pinned_worker_names_the_machine_s_gpu(monkeypatch, visible, index, physical):
    # a worker started with CUDA_VISIBLE_DEVICES=1 computes on its device 0, the machine's GPU 1
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert backends._physical_gpu(index) == physical
