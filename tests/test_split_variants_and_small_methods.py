"""split_with_sizes, the unsafe_ splits, narrow_copy, map2_ and small Tensor methods against torch."""
import numpy as np
import pytest
import torch

import ember

X = np.arange(12.0).reshape(4, 3)
CASES = [("split_with_sizes", ([1, 3],)), ("split_with_sizes", ([1, 2], 1)), ("unsafe_split", (3,)),
         ("unsafe_chunk", (3,)), ("unsafe_split_with_sizes", ([2, 2],)),
         ("narrow_copy", (1, 1, 2))]


def _pieces(result):
    return [result] if isinstance(result, (torch.Tensor, ember.Tensor)) else list(result)


@pytest.mark.parametrize("name, args", CASES)
def test_as_torch_as_method_and_function(name, args):
    for call in (lambda lib: getattr(lib.tensor(X), name)(*args), lambda lib: getattr(lib, name)(lib.tensor(X), *args)):
        ours, theirs = _pieces(call(ember)), _pieces(call(torch))
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_unsafe_split_takes_an_int_as_torch():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="argument 'split_size' \\(position 1\\) must be int, not list"):
            lib.tensor(X).unsafe_split([1, 3])


def test_views_and_copies_and_gradients():
    x = ember.tensor(X, requires_grad=True)
    first, second = x.split_with_sizes([1, 3])
    (first.sum() * 2 + second.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.array([[2.0] * 3] + [[1.0] * 3] * 3))
    base = ember.tensor(X)
    base.unsafe_chunk(2)[0][0, 0] = -1.0  # a view, as torch's unsafe pieces share memory
    assert base[0, 0].item() == -1.0
    copied = base.narrow_copy(0, 0, 1)
    copied[0, 0] = 5.0
    assert base[0, 0].item() == -1.0


@pytest.mark.parametrize("sizes, message", [([1, 2], "split_sizes to sum exactly to 4"),
                                            ([5, -1], "split_sizes have only non-negative entries")])
def test_split_with_sizes_errors_as_torch(sizes, message):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match=message):
            lib.tensor(X).split_with_sizes(sizes)


def test_map2_new_empty_strided_const_data_ptr_prelu_hardshrink():
    for lib in (torch, ember):
        t = lib.ones(3)
        assert t.map2_(lib.arange(3.0), lib.full((3,), 2.0), lambda e, a, b: e + a * b).tolist() == [1.0, 3.0, 5.0]
    assert ember.ones(2, 3).new_empty_strided((2, 3), (1, 2)).stride() == (1, 2)
    assert ember.ones(2).new_empty_strided((2,), (1,), dtype=ember.float64).dtype == ember.float64
    x = ember.ones(2)
    assert x.const_data_ptr() == x.data_ptr()
    a, w = np.random.default_rng(0).standard_normal((2, 3, 4)), np.array([0.25, 0.5, 0.1])
    np.testing.assert_allclose(ember.tensor(a).prelu(ember.tensor(w)).numpy(),
                               torch.tensor(a).prelu(torch.tensor(w)).numpy())
    np.testing.assert_allclose(ember.tensor(a).hardshrink(0.7).numpy(), torch.tensor(a).hardshrink(0.7).numpy())
    with pytest.raises(RuntimeError, match="Can't call map2_\\(\\) on Variable that requires grad"):
        ember.ones(2, requires_grad=True).map2_(ember.ones(2), ember.ones(2), lambda *v: 0.0)


def test_under_vmap():
    from ember.func import vmap

    x = ember.randn(3, 4, 5)
    for fn in (lambda a: a.split_with_sizes([1, 3])[1], lambda a: a.unsafe_split(2, 1)[0],
               lambda a: a.unsafe_chunk(2)[1], lambda a: a.narrow_copy(1, 1, 3)):
        assert ember.allclose(vmap(fn)(x), ember.stack([fn(x[i]) for i in range(3)]))
