"""Top-level program API: constants, legacy tensor types, threads, determinism, ember.random."""
import math
import time

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ember
from twins import both, both_raise, normalise

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "ByteTensor",
          "CharTensor", "BoolTensor"]


def test_constants():
    both(lambda lib: (lib.inf, lib.pi, lib.e, lib.newaxis, math.isnan(lib.nan)))
    assert ember.ones(2)[ember.newaxis].shape == (1, 2)


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_type_from_data_and_sizes(name):
    def program(lib):
        cls = getattr(lib, name)
        data = cls([1, 0, 1])
        return data, data.dtype, cls(2, 3).shape, cls().shape, cls(lib.Size([4])).shape, data.type()

    both(program, prepare=normalise)


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_type_in_isinstance(name):
    def program(lib):
        cls = getattr(lib, name)
        samples = [lib.ones(2), lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.int64), lib.ones(2).bool(),
                   lib.ones(2, dtype=lib.uint8), lib.ones(2, dtype=lib.int8), lib.ones(2).half()]
        return [isinstance(s, cls) for s in samples] + [isinstance(3, cls), issubclass(cls, lib.Tensor)]

    both(program)


def test_type_converts_by_class_and_by_name():
    def program(lib):
        x = lib.tensor([1.5, -2.0])
        return x.type(lib.IntTensor), x.type(lib.DoubleTensor), x.type(f"{lib.__name__}.ShortTensor").dtype

    both(program, prepare=normalise)


def test_legacy_constructor_takes_the_same_tensor_and_refuses_another_dtype():
    x = ember.ones(2)
    assert ember.FloatTensor(x) is x
    with pytest.raises(TypeError, match="expected a tensor of dtype ember.float32, got ember.int64"):
        ember.FloatTensor(ember.ones(2, dtype=ember.int64))
    both_raise(lambda lib: lib.FloatTensor(2.5), TypeError, "must be a sequence")


def test_threads_resize_numpys_blas_pool():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        pools = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert pools and all(p["num_threads"] == 1 for p in pools)
        assert ember.get_num_threads() == 1
    finally:
        ember.set_num_threads(before)
    assert ember.get_num_threads() == before


def test_threads_resize_a_blas_library_loaded_after_the_first_look(monkeypatch):
    """MKL loaded once threadpoolctl has looked at the process (here by ember's products, then let go of by
    EMBER_MKL=0 while it stays in the process): set_num_threads still resizes its pool."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from ember import _blas

    if _blas._installed_file("mkl", "mkl_rt") is None:
        pytest.skip("needs the mkl extra")
    before = ember.get_num_threads()  # threadpoolctl's look
    try:
        monkeypatch.setenv("EMBER_MKL", "1")
        assert _blas.reload()
        monkeypatch.setenv("EMBER_MKL", "0")
        assert not _blas.reload()
        ember.set_num_threads(1)
        pools = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert any(p["internal_api"] == "mkl" for p in pools)
        assert all(p["num_threads"] == 1 for p in pools)
    finally:
        ember.set_num_threads(before)
        monkeypatch.undo()
        _blas.reload()


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_set_num_threads_checks_like_torch(bad):
    both_raise(lambda lib: lib.set_num_threads(bad), RuntimeError, "set_num_threads expects")


def test_interop_threads_are_reported():
    assert ember.get_num_interop_threads() >= 1
    with pytest.raises(RuntimeError, match="set_num_interop_threads expects a positive integer"):
        ember.set_num_interop_threads(0)


def test_deterministic_switch():
    def program(lib):
        seen = [lib.are_deterministic_algorithms_enabled()]
        lib.use_deterministic_algorithms(True, warn_only=True)
        seen += [lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
                 lib.get_deterministic_debug_mode()]
        lib.set_deterministic_debug_mode("error")
        seen += [lib.get_deterministic_debug_mode(), lib.is_deterministic_algorithms_warn_only_enabled()]
        lib.use_deterministic_algorithms(False)
        return seen + [lib.get_deterministic_debug_mode()]

    both(program)
    both_raise(lambda lib: lib.use_deterministic_algorithms("yes"), TypeError, "must be bool, not str")


@given(st.integers(0, 2 ** 32))
def test_fork_rng_restores_the_generator(seed):
    def program(lib):
        lib.manual_seed(seed)
        with lib.random.fork_rng():
            lib.rand(5)
        after_fork = lib.rand(3)
        lib.manual_seed(seed)
        return bool((after_fork == lib.rand(3)).all())

    both(program)


def test_seed_reseeds_and_reports():
    def program(lib):
        s = lib.seed()
        return s == lib.initial_seed(), lib.random.initial_seed() == s

    both(program)


def test_float32_matmul_precision_is_kept_and_checked():
    def program(lib):
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("fast")
        seen = [lib.get_float32_matmul_precision()]
        lib.set_float32_matmul_precision("medium")
        seen.append(lib.get_float32_matmul_precision())
        lib.set_float32_matmul_precision("highest")
        return seen

    both(program)
