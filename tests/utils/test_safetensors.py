"""safetensors files written by ember and read by safetensors.torch, and back."""
import numpy as np
import pytest
import torch
from safetensors.torch import load_file as torch_load_file, save_file as torch_save_file

import ember
from ember.utils import safetensors as st

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def sample(dtype: str, shape=(2, 3)) -> np.ndarray:
    return np.asarray((np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 4)])
def test_every_dtype_both_ways(dtype, shape, tmp_path):
    data = sample(dtype, shape)
    st.save_file({"x": ember.from_numpy(data.copy())}, tmp_path / "e.safetensors")
    theirs = torch_load_file(tmp_path / "e.safetensors")["x"]
    assert str(theirs.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(theirs.numpy(), data)

    torch_save_file({"x": torch.from_numpy(data.copy())}, tmp_path / "t.safetensors")
    mine = st.load_file(tmp_path / "t.safetensors")["x"]
    assert mine.dtype is getattr(ember, dtype)
    np.testing.assert_array_equal(mine.numpy(), data)


def test_a_state_dict_loads_into_a_module_both_ways(tmp_path):
    source = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    torch_save_file(source.state_dict(), tmp_path / "m.safetensors", metadata={"epoch": "3"})
    target = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    target.load_state_dict(st.load_file(tmp_path / "m.safetensors"))
    for key, value in source.state_dict().items():
        np.testing.assert_array_equal(target.state_dict()[key].numpy(), value.numpy())

    st.save_file(target.state_dict(), tmp_path / "back.safetensors", metadata={"epoch": "4"})
    again = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    again.load_state_dict(torch_load_file(tmp_path / "back.safetensors"))
    from safetensors import safe_open
    with safe_open(tmp_path / "back.safetensors", "pt") as f:
        assert f.metadata() == {"epoch": "4"}


def test_bytes_round_trip():
    data = st.save({"a": ember.arange(3.0), "b": ember.tensor([True])})
    loaded = st.load(data)
    np.testing.assert_array_equal(loaded["a"].numpy(), [0.0, 1.0, 2.0])
    loaded["a"][0] = 5.0  # a tensor of its own, writable
    from safetensors.torch import load
    assert load(data)["a"].tolist() == [0.0, 1.0, 2.0]


def test_refusals_match_safetensors_torch(tmp_path):
    x = ember.arange(4.0)
    path = tmp_path / "x.safetensors"
    with pytest.raises(RuntimeError, match="share memory"):
        st.save_file({"a": x, "b": x[1:]}, path)
    st.save_file({"a": x[:2], "b": x[2:]}, path)  # disjoint parts of one block are fine, as in safetensors.torch
    with pytest.raises(ValueError, match="non contiguous tensor: `a`"):
        st.save_file({"a": x.view(2, 2).t()}, path)
    with pytest.raises(ValueError, match="Key `a` is invalid"):
        st.save_file({"a": 3}, path)
    with pytest.raises(TypeError, match="keys must be str"):
        st.save_file({1: x}, path)


def test_dtypes_ember_lacks_name_the_key(tmp_path):
    path = tmp_path / "f8.safetensors"
    torch_save_file({"ok": torch.ones(1), "w": torch.ones(2, dtype=torch.float8_e5m2)}, path)
    with pytest.raises(TypeError, match="'w' is a tensor of F8_E5M2"):
        st.load_file(path)
    from safetensors.torch import save
    loaded = st.load(save({"u": torch.tensor([1, 2 ** 16 - 1], dtype=torch.uint16)}))  # the wide unsigned types load
    assert loaded["u"].dtype is ember.uint16 and loaded["u"].tolist() == [1, 2 ** 16 - 1]
    with pytest.raises(RuntimeError, match="CPU only"):
        st.load_file(path, device="cuda")


def test_without_the_package_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "safetensors", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'ember\[safetensors\]'"):
        st.save_file({"a": ember.ones(1)}, tmp_path / "a.safetensors")
