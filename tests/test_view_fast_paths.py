"""The usual calls of the view ops (``x.view(16)``, ``x.reshape(2, 8)``, ``m.expand(4, 4)``, ``x.permute(1, 0)``,
``x.t()``, ``x.unsqueeze(0)``, ``x[1]``) take short paths: each must give what torch gives, as the general path
does — values, shape, strides, ``_base``, the shared version counter, the node of a recorded call, the errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

CALLS = [
    "x.view(16)", "x.view(2, 8)", "x.view(4, 2, 2)", "x.view(1, 16)", "x.view(-1)", "x.view((16,))",
    "x.reshape(2, 8)", "x.reshape(16)", "x.reshape(-1, 4)", "x.t().reshape(2, 8)", "x.t().reshape(4, 2, 2)",
    "x[1:].reshape(12)", "x.t().view(4, 4)",
    "m.expand(4, 4)", "m.expand(2, 4, 4)", "m.expand(-1, 3)", "m.t().expand(4, 4)", "x.expand(4, 4)",
    "x[:, :1].expand(4, 3)", "x.expand(1, 4, 4)",
    "x.permute(1, 0)", "x.permute(0, 1)", "x.permute(-1, 0)", "c.permute(2, 0, 1)", "c.permute((1, 2, 0))",
    "c.permute(dims=(2, 1, 0))", "x.t()", "x[0].t()", "x.unsqueeze(0)", "x.unsqueeze(2)", "x.unsqueeze(-1)",
    "x[1]", "x[-1]", "x[0][2]", "c[1]", "x.t()[3]",
]


def _inputs(lib, requires_grad: bool = False, dtype=None) -> dict:
    rng = np.random.default_rng(0)
    values = {"x": rng.standard_normal((4, 4)), "m": rng.standard_normal((4, 1)), "c": rng.standard_normal((2, 3, 4))}
    dtype = dtype or lib.float32
    return {name: lib.tensor(v, dtype=dtype, requires_grad=requires_grad) for name, v in values.items()}


def _run(lib, call: str, **options):
    inputs = _inputs(lib, **options)
    return inputs, eval(call, {}, inputs)


def _layout(t) -> tuple:
    return tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous()


@pytest.mark.parametrize("call", CALLS)
def test_usual_calls_give_torchs_view(call):
    (e_inputs, e), (t_inputs, t) = _run(ember, call), _run(torch, call)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert _layout(e) == _layout(t)
    assert (e._base is None) == (t._base is None)
    root = call.split(".")[0].split("[")[0]
    if t._base is not None:
        assert e._base is e_inputs[root]
    # a view shares memory and the version counter with its base, in both directions
    if t._base is not None and not e._data.flags.writeable:  # an expanded view that repeats elements
        e_inputs[root].add_(1.0)
        t_inputs[root].add_(1.0)
    else:
        e.add_(1.0)
        t.add_(1.0)
    np.testing.assert_array_equal(e_inputs[root].numpy(), t_inputs[root].numpy())
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert e._version == t._version and e_inputs[root]._version == t_inputs[root]._version


@pytest.mark.parametrize("call", CALLS)
def test_usual_calls_record_torchs_node(call):
    (_, e), (_, t) = _run(ember, call, requires_grad=True), _run(torch, call, requires_grad=True)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    e.sum().backward()
    t.sum().backward()


@pytest.mark.parametrize("call", CALLS)
def test_usual_calls_differentiate(call):
    inputs = _inputs(ember, requires_grad=True, dtype=ember.float64)
    names = sorted(inputs)

    def f(*tensors):
        return eval(call, {}, dict(zip(names, tensors)))

    assert gradcheck(f, tuple(inputs[n] for n in names))
    assert gradgradcheck(f, tuple(inputs[n] for n in names))


@pytest.mark.parametrize("call", CALLS)
def test_usual_calls_of_a_view_stay_views_of_its_base(call):
    """A view of a view has the first view's base, and the replay that recreates it from there."""
    def of_view(lib):
        inputs = _inputs(lib)
        inputs = {name: t.view(t.shape) for name, t in inputs.items()}  # views of the tensors made above
        return inputs, eval(call, {}, inputs)

    (e_inputs, e), (_, t) = of_view(ember), of_view(torch)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert _layout(e) == _layout(t)
    root = call.split(".")[0].split("[")[0]
    if t._base is not None:
        assert e._base is e_inputs[root]._base
        from ember._ops.views import replay
        again = replay(e._base, e._view_replay)
        assert _layout(again) == _layout(e) and again.data_ptr() == e.data_ptr()


ERRORS = [
    "x.permute()", "x.permute(1)", "x.permute(0, 0)", "x.permute(1, 2)", "x.permute(1.0, 0)", "x.permute(True, False)",
    "x.permute(0, 1, 2)", "x.view(3, 5)", "x.view(16.0)", "x.view(True, 16)", "x.view(-2, -8)", "x.t().view(16)",
    "x.reshape(3, 5)", "x.reshape(-2, -8)", "x.reshape(2.0, 8)", "m.expand(4.0, 4)", "m.expand(True, 4)",
    "m.expand(4, 3, 2)", "m.expand(4)", "x[4]", "x[-5]", "x[0][4]", "x.unsqueeze(3)", "x.unsqueeze(1.0)",
    "c.t()",
]


@pytest.mark.parametrize("call", ERRORS)
def test_refused_calls_raise_torchs_error(call):
    errors = []
    for lib in (torch, ember):
        inputs = _inputs(lib)
        with pytest.raises(Exception) as info:
            eval(call, {}, inputs)
        errors.append(info.type)
    t_error, e_error = errors
    assert issubclass(e_error, t_error) or (t_error is TypeError and issubclass(e_error, TypeError))


def test_index_of_a_zero_dim_tensor_is_refused_as_torch_refuses_it():
    with pytest.raises(IndexError, match="0-dim tensor"):
        ember.tensor(1.0)[0]
    with pytest.raises(IndexError):
        torch.tensor(1.0)[0]


def test_expand_of_a_strided_tensor_with_the_strides_of_a_contiguous_one():
    """A (4, 1) float32 column made by unsqueeze is contiguous with strides (4, 0); a (4, 1) int8 column of every
    fourth element has the same shape and strides but is not contiguous: expanding one, then the other, must not
    take the first one's layout for the second."""
    results = []
    for lib in (torch, ember):
        column = lib.arange(4, dtype=lib.float32)[:, None]
        strided = lib.arange(16, dtype=lib.int8)[::4][:, None]
        results.append((column.expand(4, 4), strided.expand(4, 4)))
    (t_column, t_strided), (e_column, e_strided) = results
    np.testing.assert_array_equal(e_column.numpy(), t_column.numpy())
    np.testing.assert_array_equal(e_strided.numpy(), t_strided.numpy())
    assert e_strided.stride() == t_strided.stride()


def test_expand_that_repeats_no_element_stays_writable_and_one_that_does_is_refused():
    e, t = ember.ones(4, 1), torch.ones(4, 1)
    e.expand(4, 1).add_(1.0)
    t.expand(4, 1).add_(1.0)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    with pytest.raises(RuntimeError):
        torch.ones(4, 1).expand(4, 4).add_(1.0)
    with pytest.raises(RuntimeError):
        ember.ones(4, 1).expand(4, 4).add_(1.0)


def test_permute_of_many_dims_takes_every_reordering():
    rng = np.random.default_rng(1)
    values = rng.standard_normal((2, 3, 1, 4, 2, 3))
    for order in [(5, 4, 3, 2, 1, 0), (0, 2, 4, 1, 3, 5), (3, -1, 0, 1, 2, 4)]:
        e = ember.tensor(values).permute(*order)
        t = torch.tensor(values).permute(*order)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
        assert e.stride() == t.stride()
    e = ember.ones(*(1,) * 7).permute(6, 5, 4, 3, 2, 1, 0)  # beyond the reorderings taken as they are
    assert tuple(e.shape) == (1,) * 7


def test_view_ops_dispatch_through_torch_function():
    """The short paths are inside the ops: a mode still sees each public call (and the tensor-likes theirs)."""
    names = []

    class Names(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x, m = ember.randn(4, 4), ember.randn(4, 1)
    with Names():
        x.view(16), x.reshape(2, 8), m.expand(4, 4), x.permute(1, 0), x.t(), x.unsqueeze(0), x[1], x[:, 1:3]
    assert names == ["view", "reshape", "expand", "permute", "t", "unsqueeze", "__getitem__", "__getitem__"]
