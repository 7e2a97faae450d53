"""``overrides.redispatch_function`` and ``enable_reentrant_dispatch``, each compared with torch."""
from __future__ import annotations

import pytest
import torch

import ember


def logging_subclass(lib, log: list):
    """A Tensor subclass whose handler logs each call and redispatches it."""

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return lib.overrides.redispatch_function(func, types, args, kwargs)

    return Logged


def scaled_mul_of(lib):
    """A function of the user's own that joins the protocol by hand."""
    overrides = lib.overrides

    def scaled_mul(a, b):
        if overrides.has_torch_function((a, b)):
            return overrides.handle_torch_function(scaled_mul, (a, b), a, b)
        return a * b + 1

    return scaled_mul


def subclass_program(lib):
    log: list = []
    logged = logging_subclass(lib, log)
    x = lib.tensor([3.0]).as_subclass(logged)
    y = lib.tensor([4.0]).as_subclass(logged)
    results = [lib.add(x, 1), x.sum(), lib.nn.functional.relu(x), scaled_mul_of(lib)(x, y)]
    return log, [(type(r).__name__, r.tolist()) for r in results]


def test_redispatch_from_a_subclass_handler_skips_that_handler_once_as_torch():
    assert subclass_program(ember) == subclass_program(torch)


def mode_program(lib):
    class Logging(lib.overrides.TorchFunctionMode):
        def __init__(self):
            self.log = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.log.append(func.__name__)
            with self:  # the calls the function makes are seen too
                return lib.overrides.redispatch_function(func, types, args, kwargs)

    with Logging() as mode:
        result = scaled_mul_of(lib)(lib.tensor([3.0]), lib.tensor([4.0]))
        zeros = lib.zeros(1)
    return mode.log, result.tolist(), zeros.tolist(), len(lib.overrides._get_current_function_mode_stack())


def test_redispatch_from_a_mode_reaches_the_calls_inside_as_torch():
    assert mode_program(ember) == mode_program(torch)


def first_call_consumes_program(lib):
    """The skip goes to the first call that consults the protocol, even one on plain tensors."""
    log: list = []

    class Plain(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    x = lib.tensor([3.0]).as_subclass(Plain)

    def plain_call_first(a):
        lib.add(lib.ones(1), 1)
        return lib.mul(a, 2)

    def check_first(a):
        checked = lib.overrides.has_torch_function((a,))
        return checked, lib.overrides.has_torch_function((a,))

    first = redispatched_type(lib, plain_call_first, x)
    direct = redispatched_type(lib, lib.mul, x, 2)
    return log, first, direct, lib.overrides.redispatch_function(check_first, (), (x,), None)


def redispatched_type(lib, func, *args) -> str:
    return type(lib.overrides.redispatch_function(func, (), args, None)).__name__


def test_the_first_call_after_redispatch_takes_the_skip_as_torch():
    assert first_call_consumes_program(ember) == first_call_consumes_program(torch)


def test_redispatch_keywords_as_torch():
    for lib in (ember, torch):
        result = lib.overrides.redispatch_function(lib.add, (), (lib.ones(1),), {"other": lib.ones(1), "alpha": 3})
        assert result.tolist() == [4.0]


def test_redispatch_of_a_function_that_never_dispatches_raises_runtime_error_as_torch():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="has_torch_function"):
            lib.overrides.redispatch_function(lambda a: a, (), (3,), None)
        assert lib.overrides._get_current_function_mode_stack() == []  # the unused skip is gone
        assert type(lib.add(lib.ones(1), 1)) is lib.Tensor


def test_an_error_inside_redispatch_reaches_the_caller_and_leaves_no_skip_behind():
    def failing(a):
        raise ValueError("inside")

    for lib in (ember, torch):
        with pytest.raises(ValueError, match="inside"):
            lib.overrides.redispatch_function(failing, (), (1,), None)
        log: list = []
        x = lib.ones(1).as_subclass(logging_subclass(lib, log))
        lib.neg(x)
        assert log == ["neg"]


def test_enable_reentrant_dispatch_outside_torch_dispatch_raises_as_torch():
    for lib in (ember, torch):
        assert "enable_reentrant_dispatch" in lib.overrides.__all__
        assert "redispatch_function" in lib.overrides.__all__
        with pytest.raises(RuntimeError, match="outside of '__torch_dispatch__'"):
            with lib.overrides.enable_reentrant_dispatch():
                pass
