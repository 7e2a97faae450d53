"""DLPack and NumPy interop: memory shared both ways with NumPy and torch, no copies."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember._ops._support import wrap
from ember.utils.dlpack import to_dlpack

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def sample(dtype: str, shape=(2, 3)) -> np.ndarray:
    return np.asarray((np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_and_ember_share_memory_both_ways(dtype):
    mine = ember.from_numpy(sample(dtype))
    theirs = torch.from_dlpack(mine)
    assert str(theirs.dtype) == f"torch.{dtype}" and theirs.data_ptr() == mine.data_ptr()
    np.testing.assert_array_equal(theirs.numpy(), mine.numpy())

    source = torch.from_numpy(sample(dtype))
    back = ember.from_dlpack(source)
    assert back.dtype is getattr(ember, dtype) and back.data_ptr() == source.data_ptr()
    np.testing.assert_array_equal(back.numpy(), source.numpy())


def test_writes_show_on_the_other_side():
    t = torch.zeros(3)
    e = ember.from_dlpack(t)
    e[1] = 5.0
    assert t[1].item() == 5.0
    back = torch.from_dlpack(e)
    back[2] = 7.0
    assert e[2].item() == 7.0


@pytest.mark.parametrize("make", [lambda lib: lib.arange(12.0).view(3, 4).t(),
                                  lambda lib: lib.arange(12.0)[1::3],
                                  lambda lib: lib.tensor(2.5),
                                  lambda lib: lib.zeros(0, 3)])
def test_layouts_keep_their_strides(make):
    mine, theirs = torch.from_dlpack(make(ember)), ember.from_dlpack(make(torch))
    reference = make(torch)
    for result in (mine, theirs):
        assert tuple(result.shape) == tuple(reference.shape)
        np.testing.assert_array_equal(result.numpy(), reference.numpy())
    if reference.numel() > 1:
        assert mine.stride() == reference.stride() and theirs.stride() == reference.stride()


def test_negative_strides_are_exported_as_a_copy():
    reversed_ = wrap(np.arange(4.0)[::-1])  # torch has no negative strides (from_numpy refuses them, as torch's)
    np.testing.assert_array_equal(torch.from_dlpack(reversed_).numpy(), [3.0, 2.0, 1.0, 0.0])
    with pytest.raises(BufferError, match="negative strides"):
        reversed_.__dlpack__(copy=False)


def test_numpy_consumes_and_produces():
    a = np.arange(3.0)
    t = ember.from_dlpack(a)
    t[0] = -1.0
    assert a[0] == -1.0
    b = np.from_dlpack(t)
    b[1] = 9.0
    assert t[1].item() == 9.0
    assert np.asarray(t) is t._data  # np.asarray shares, np.array copies
    copied = np.array(t)
    copied[2] = 100.0
    assert t[2].item() == 2.0


def test_capsules_as_torch_utils_dlpack():
    t = torch.arange(3.0)
    np.testing.assert_array_equal(ember.from_dlpack(torch.utils.dlpack.to_dlpack(t)).numpy(), [0.0, 1.0, 2.0])
    e = ember.arange(3.0)
    theirs = torch.utils.dlpack.from_dlpack(to_dlpack(e))
    theirs[0] = 4.0
    assert e[0].item() == 4.0


def test_a_tensor_over_a_capsule_is_writable_as_torch_s():
    t = torch.arange(3.0)
    over_torch = ember.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    e = ember.arange(4)
    over_ember = ember.from_dlpack(to_dlpack(e))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no read-only warning either
        over_torch[0] = -9.0
        over_ember[1:3] = -1
    assert t[0].item() == -9.0
    assert e.tolist() == [0, -1, -1, 3]
    del e, over_ember  # the alias keeps the memory alive on its own
    np.testing.assert_array_equal(ember.from_dlpack(to_dlpack(ember.arange(2) + 1)).numpy(), [1, 2])


def test_device_and_refusals():
    assert ember.ones(1).__dlpack_device__() == torch.ones(1).__dlpack_device__() == (1, 0)
    with pytest.raises(RuntimeError, match="require gradient"):
        torch.from_dlpack(ember.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="__dlpack__"):
        ember.from_dlpack([1, 2])
    with pytest.raises(RuntimeError, match="CPU only"):
        ember.from_dlpack(np.ones(2), device="cuda")
    copied = ember.from_dlpack(np.ones(2), copy=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copied[0] = 3.0  # a copy of its own, writable
