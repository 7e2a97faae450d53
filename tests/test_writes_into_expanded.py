"""Writes into an expanded tensor and into views of it, against torch.

An expanded tensor shows some elements more than once. torch refuses a write whose result would depend on
which of those elements is written last (``add_``, ``copy_``, ``x[0] = row``), and lets through the writes
that are the same whatever the order: into a view that shows each element once (``x[:, 0]``, ``x[0, 0]``),
``fill_`` and ``zero_``, and writes at positions (``index_put_``, ``masked_fill_``, ``index_fill_``, advanced
``x[key] = v``, with a deprecation warning). ember does the same.
"""
import warnings

import numpy as np
import pytest

import ember
import torch
from twins import assert_same, both


def _expanded(lib):
    """A [3, 1] tensor seen as [3, 4]: row i shows element i of ``base`` four times."""
    base = lib.arange(3.0).reshape(3, 1)
    return base, base.expand(3, 4)


# each writes into the expanded tensor ``x``; its outcome is what ``base`` holds then, or the error
WRITES = {
    "x[0, 0] = 5": lambda lib, x: x.__setitem__((0, 0), 5.0),
    "x[1, -1] = tensor(5)": lambda lib, x: x.__setitem__((1, -1), lib.tensor(5.0)),
    "x[tensor(1), 0] = 5": lambda lib, x: x.__setitem__((lib.tensor(1), 0), 5.0),
    "x[0, 0, ...] = 5": lambda lib, x: x.__setitem__((0, 0, Ellipsis), 5.0),
    "x[:, 0] = ones(3)": lambda lib, x: x.__setitem__((slice(None), 0), lib.ones(3)),
    "x[0, 0] = tensor(6)": lambda lib, x: x.__setitem__((0, 0), lib.tensor(6.0)),
    "x[0] = 5": lambda lib, x: x.__setitem__(0, 5.0),
    "x[0] = ones(4)": lambda lib, x: x.__setitem__(0, lib.ones(4)),
    "x[...] = 2": lambda lib, x: x.__setitem__(Ellipsis, 2.0),
    "x[x > 0.5] = 5": lambda lib, x: x.__setitem__(x > 0.5, 5.0),
    "x[[0, 2], [1, 1]] = 5": lambda lib, x: x.__setitem__(([0, 2], [1, 1]), 5.0),
    "x[tensor([0, 2])] = values": lambda lib, x: x.__setitem__((lib.tensor([0, 2]),), lib.tensor([7.0, 8.0, 9.0, 10.0])),
    "fill_(7)": lambda lib, x: x.fill_(7.0),
    "fill_(tensor(7))": lambda lib, x: x.fill_(lib.tensor(7.0)),
    "zero_()": lambda lib, x: x.zero_(),
    "index_put_ accumulate": lambda lib, x: x.index_put_((lib.tensor([0]), lib.tensor([1])), lib.tensor(9.0), True),
    "index_put_": lambda lib, x: x.index_put_((lib.tensor([0, 0]), lib.tensor([1, 2])), lib.tensor([3.0, 4.0])),
    "masked_fill_": lambda lib, x: x.masked_fill_(lib.ones(3, 4, dtype=lib.bool), 4.0),
    "masked_fill_(tensor)": lambda lib, x: x.masked_fill_(x > 0.5, lib.tensor(4.0)),
    "index_fill_": lambda lib, x: x.index_fill_(1, lib.tensor([0]), 4.0),
    "x[:, 1].add_(1)": lambda lib, x: x[:, 1].add_(1),
    "x.t()[2].mul_(3)": lambda lib, x: x.t()[2].mul_(3),
    "x[0, 0].fill_(3)": lambda lib, x: x[0, 0].fill_(3.0),
    "x[0].zero_()": lambda lib, x: x[0].zero_(),
    "add_(1)": lambda lib, x: x.add_(1.0),
    "copy_": lambda lib, x: x.copy_(lib.ones(3, 4)),
    "copy_(expanded)": lambda lib, x: x.copy_(lib.zeros(3, 1).expand(3, 4)),
    "relu_()": lambda lib, x: x.relu_(),
    "exp_()": lambda lib, x: x.exp_(),
    "uniform_()": lambda lib, x: x.uniform_(),
    "masked_scatter_": lambda lib, x: x.masked_scatter_(x > 0.5, lib.ones(12)),
    "index_copy_": lambda lib, x: x.index_copy_(1, lib.tensor([0]), lib.ones(3, 1)),
    "index_add_": lambda lib, x: x.index_add_(1, lib.tensor([0]), lib.ones(3, 1)),
    "scatter_": lambda lib, x: x.scatter_(1, lib.tensor([[0], [0], [0]]), 2.0),
    "put_": lambda lib, x: x.put_(lib.tensor([0]), lib.tensor([2.0])),
}


def _outcome(lib, write):
    base, x = _expanded(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            write(lib, x)
        except RuntimeError as error:
            assert "more than one element of the written-to tensor refers to a single memory location" in str(error)
            return "refused"
    deprecated = sorted({str(w.message).split(" on expanded")[0] for w in caught if "expanded" in str(w.message)})
    return base.flatten().tolist(), deprecated


@pytest.mark.parametrize("name", list(WRITES))
def test_a_write_into_an_expanded_tensor_is_let_through_or_refused_as_torch(name):
    mine, theirs = _outcome(ember, WRITES[name]), _outcome(torch, WRITES[name])
    if mine != "refused" and theirs != "refused" and len(theirs[1]) > 1:
        theirs = (theirs[0], theirs[1][:1])  # x[mask] = v: torch warns of index_put_ and of masked_fill_, ember once
        mine = (mine[0], mine[1][:1])
    assert mine == theirs


def _recorded(lib, change):
    """A change of the expanded view of a tensor that requires grad: (values, the leaf's gradient) or the error."""
    m = lib.arange(1.0, 4.0, dtype=lib.float64).reshape(3, 1).requires_grad_()
    y = (m * 1).expand(3, 4)
    try:  # (torch refuses some of these when the backward reaches the write, ember at the write)
        y = change(lib, m, y)
        (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum().backward()
    except RuntimeError as error:
        return "refused" if "more than one element" in str(error) else str(error)
    return y, m.grad


def _column_set(lib, m, y):
    y[:, 2] = m[:, 0] * 10
    return y


def _element_add(lib, m, y):
    y[1, 1].add_(5)
    return y


def _through_transpose(lib, m, y):
    y.t()[0].exp_()
    return y


def _all_columns_set(lib, m, y):
    y[:, 0] = 5.0
    y[1, 1] = 7.0
    return y


def _fill(lib, m, y):
    return y.fill_(2.0)


def _masked_fill(lib, m, y):
    return y.masked_fill_(y > 1.5, 2.0)


def _under_no_grad(lib, m, y):
    with lib.no_grad():
        y.fill_(4.0)
    return y


@pytest.mark.parametrize("change", [_column_set, _element_add, _through_transpose, _all_columns_set, _fill,
                                    _masked_fill, _under_no_grad])
def test_a_recorded_write_into_an_expanded_view_has_torchs_values_and_gradients(change):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the deprecation warnings are compared above)
        both(lambda lib: _recorded(lib, change))


def test_memory_read_only_where_it_is_owned_stays_unwritten():
    owned = np.zeros(3)
    owned.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (from_numpy of a read-only array warns)
        x = ember.from_numpy(owned).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element"):
        x.fill_(1.0)
    assert_same(np.zeros(3), owned)


def test_the_shared_gradient_seed_is_never_written():
    """``loss.backward()`` starts from a shared read-only one (``seed_one``), seen in shapes through read-only
    views (``one_everywhere``): memory read-only where it is owned, which no write may reach."""
    from ember._ops._support import wrap
    from ember._ops.reduction import one_everywhere, seed_one

    dtype = np.dtype(np.float32)
    seen = wrap(one_everywhere((2, 3), dtype))
    for write in (lambda: seen.fill_(5.0), lambda: seen[0, 0].fill_(5.0), lambda: seen.__setitem__((1, 1), 5.0)):
        with pytest.raises(RuntimeError, match="more than one element"):
            write()
    assert float(seed_one(dtype)) == 1.0
