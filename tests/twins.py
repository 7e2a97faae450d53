"""Run the same program with torch and with ember, and compare what comes out.

A test writes its program once, against a module argument ``lib``, and hands it
to :func:`both`; the program runs with ``lib = torch`` (the oracle) and with
``lib = ember`` and the two results must agree: same nesting of tuples and
lists, same array shapes, dtypes and values, other values equal::

    def test_exp():
        both(lambda lib: leaf(lib, [0.0, 1.0]).exp())

:func:`both_raise` does the same for a program that must fail.

Results are turned into plain values before they are compared. :func:`to_numpy`
only turns tensors into arrays, so a torch name such as ``torch.float64`` never
equals its ember twin; :func:`normalise` also reads dtypes, sizes, devices and
strings in ember's spelling, for tests that compare exactly those (pass
``prepare=normalise`` to :func:`both`).

tests/ is on ``sys.path`` for every test file, so ``from twins import both``
works anywhere under tests/.
"""
import re
from typing import Callable

import numpy as np
import pytest
import torch

import ember

LIBS = (torch, ember)


def to_numpy(value):
    """Tensors (nested in tuples/lists) as NumPy arrays; other values unchanged."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return np.array(value.detach().numpy())
    if isinstance(value, (tuple, list)):
        return _same_kind(value, [to_numpy(v) for v in value])
    return value


def normalise(value):
    """As :func:`to_numpy`, and dtypes / sizes / devices / strings in ember's spelling ('torch.' read as 'ember.')."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return np.array(value.detach().numpy())
    if isinstance(value, (torch.dtype, ember.dtype, torch.Size, ember.Size, torch.device, ember.device)):
        return repr(value).replace("torch.", "ember.")
    if isinstance(value, str):
        return value.replace("torch.", "ember.")
    if isinstance(value, (tuple, list)):
        return _same_kind(value, [normalise(v) for v in value])
    return value


def _same_kind(value, items: list):
    """``items`` as a list or a tuple, as ``value`` is (a named tuple of either library, torch's
    ``return_types`` included, becomes a plain tuple: the two libraries' kinds cannot be compared)."""
    return items if isinstance(value, list) else tuple(items)


def assert_same(expected, actual, path: str = "result") -> None:
    """Same structure, same values (float64 tolerance), same shapes and dtypes; ``path`` names the failing part."""
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{path}: expected an array, got {actual!r}"
        assert expected.shape == actual.shape, f"{path}: shape {actual.shape} != {expected.shape}"
        assert expected.dtype == actual.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-9, err_msg=path)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), f"{path}: {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same(e, a, f"{path}[{i}]")
    else:
        assert expected == actual, f"{path}: {actual!r} != {expected!r}"


def both(program: Callable, prepare: Callable = to_numpy):
    """Run ``program(lib)`` with torch and with ember; the results must agree. Returns ember's, prepared."""
    expected = prepare(program(torch))
    actual = prepare(program(ember))
    assert_same(expected, actual)
    return actual


def both_raise(program: Callable, error: type, *fragments: str) -> list:
    """``program(lib)`` raises ``error`` in torch and in ember, both messages matching every regex of ``fragments``.

    Returns the two messages, torch's first.
    """
    messages = []
    for lib in LIBS:
        with pytest.raises(error) as info:
            program(lib)
        message = str(info.value)
        for fragment in fragments:
            assert re.search(fragment, message), f"{lib.__name__}: {fragment!r} not in {message!r}"
        messages.append(message)
    return messages


def leaf(lib, values, dtype: str = "float64"):
    """A leaf tensor of ``lib`` that requires grad (float64 by default, for gradient checks)."""
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


def grad_fn_name(t) -> str | None:
    """The node's name; torch's C++ nodes carry a namespace (torch::autograd::CopySlices) that ember's don't."""
    return None if t.grad_fn is None else t.grad_fn.name().replace("torch::autograd::", "")


def assert_same_outcome(mine, theirs, what: str) -> bool:
    """True if both produced results (to compare further); if torch raised, ember must raise the same type."""
    if isinstance(theirs, Exception):
        assert isinstance(mine, type(theirs)), f"{what}: torch raises {theirs!r}, ember gave {mine!r}"
        return False
    if isinstance(mine, Exception):
        raise mine
    return True
