"""Checkpoints written by ember and read by torch 2.13 (weights_only=True), and written by torch and read by ember.

Every test writes a real file in tmp_path with one library and reads it with the other.
"""
import collections
import contextlib
import io
import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember._ops._support import wrap

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def values(dtype: str, shape=(2, 3)) -> np.ndarray:
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5 - 2
    return np.asarray((data > 0) if dtype == "bool" else data.astype(np.uint8 if dtype == "uint8" else dtype))


def same(a, b) -> None:
    """a (ember or torch) and b (the other) hold the same values, shape and dtype name."""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def via_torch(obj, tmp_path):
    path = tmp_path / "from_ember.pt"
    ember.save(obj, path)
    return torch.load(path)  # weights_only=True, torch 2.13's default


def via_ember(obj, tmp_path, **kwargs):
    path = tmp_path / "from_torch.pt"
    torch.save(obj, path)
    return ember.load(path, **kwargs)


# ---- tensors of every dtype, shapes and layouts

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (3, 0, 2)])
def test_every_dtype_and_shape_both_ways(dtype, shape, tmp_path):
    data = values(dtype, shape)
    same(via_torch(ember.from_numpy(data.copy()), tmp_path), torch.from_numpy(data))
    same(via_ember(torch.from_numpy(data.copy()), tmp_path), ember.from_numpy(data))


@pytest.mark.parametrize("mmap", [False, True])
def test_views_share_their_storage_after_loading(mmap, tmp_path):
    base = torch.arange(12.0).view(3, 4)
    loaded = via_ember({"base": base, "row": base[1], "col": base[:, 2], "t": base.t()}, tmp_path, mmap=mmap)
    loaded["row"][0] = 100.0
    loaded["col"][0] = -1.0
    assert loaded["base"][1, 0].item() == 100.0 and loaded["t"][2, 0].item() == -1.0
    assert loaded["col"].stride() == (4,) and loaded["col"].storage_offset() == 2

    e_base = ember.arange(12.0).view(3, 4)
    back = via_torch({"base": e_base, "row": e_base[1], "col": e_base[:, 2], "t": e_base.t()}, tmp_path)
    back["row"][0] = 100.0
    assert back["base"][1, 0].item() == 100.0
    assert back["col"].stride() == (4,) and back["col"].storage_offset() == 2
    assert back["t"].untyped_storage().data_ptr() == back["base"].untyped_storage().data_ptr()


def test_layouts_that_torch_lacks_are_saved_as_copies(tmp_path):
    a = np.arange(6.0)
    reversed_ = wrap(a[::-1])  # negative strides: torch has none (and from_numpy refuses them, as torch's)
    expanded = ember.arange(3.0).expand(2, 3)  # stride 0: torch has it
    loaded = via_torch({"r": reversed_, "e": expanded}, tmp_path)
    same(loaded["r"], reversed_)
    same(loaded["e"], expanded)
    assert loaded["e"].stride() == (0, 1)


def test_views_as_another_dtype_are_refused_as_torch_refuses(tmp_path):
    x = ember.zeros(4)
    as_int = ember.from_numpy(x.numpy().view(np.int32))
    with pytest.raises(RuntimeError, match="view the same memory"):
        ember.save([x, as_int], tmp_path / "x.pt")
    ember.save([as_int], tmp_path / "y.pt")  # alone, a reinterpreted view is fine
    assert torch.load(tmp_path / "y.pt")[0].dtype == torch.int32


def test_plain_values_and_containers_both_ways(tmp_path):
    def obj(lib):
        nested = collections.OrderedDict(epoch=3, lr=1e-3, name="run", done=None, flag=True, big=2**70)
        return {"nested": nested, "list": [lib.ones(2), (1, "a"), -5], "bytes": b"\x00\xff", "set": {1, 2},
                "size": lib.Size([2, 3]), "dtype": lib.float16, "complex": 1 + 2j}

    for loaded, other in ((via_torch(obj(ember), tmp_path), torch), (via_ember(obj(torch), tmp_path), ember)):
        assert loaded["nested"] == obj(other)["nested"] and type(loaded["nested"]) is collections.OrderedDict
        assert loaded["list"][1:] == [(1, "a"), -5] and loaded["bytes"] == b"\x00\xff" and loaded["set"] == {1, 2}
        assert loaded["size"] == other.Size([2, 3]) and type(loaded["size"]) is other.Size
        assert loaded["dtype"] is other.float16 and loaded["complex"] == 1 + 2j
        same(loaded["list"][0], obj(other)["list"][0])


def test_parameters_and_requires_grad_both_ways(tmp_path):
    def obj(lib):
        leaf = lib.ones(2, requires_grad=True)
        return {"p": lib.nn.Parameter(lib.ones(3)), "frozen": lib.nn.Parameter(lib.zeros(1), requires_grad=False),
                "leaf": leaf, "plain": lib.ones(1)}

    for loaded, kind in ((via_torch(obj(ember), tmp_path), torch), (via_ember(obj(torch), tmp_path), ember)):
        assert type(loaded["p"]) is kind.nn.Parameter and loaded["p"].requires_grad
        assert type(loaded["frozen"]) is kind.nn.Parameter and not loaded["frozen"].requires_grad
        assert type(loaded["leaf"]) is kind.Tensor and loaded["leaf"].requires_grad and loaded["leaf"].is_leaf
        assert not loaded["plain"].requires_grad


def test_file_objects_and_paths(tmp_path):
    buffer = io.BytesIO()
    ember.save(ember.ones(3), buffer)
    same(torch.load(io.BytesIO(buffer.getvalue())), torch.ones(3))
    buffer = io.BytesIO()
    torch.save(torch.ones(3), buffer)
    buffer.seek(0)
    same(ember.load(buffer), ember.ones(3))
    with open(tmp_path / "f.pt", "wb") as f:
        ember.save(ember.zeros(2), f)
    with open(tmp_path / "f.pt", "rb") as f:
        same(ember.load(f), ember.zeros(2))
    same(ember.load(str(tmp_path / "f.pt")), ember.zeros(2))


def test_mmap_maps_instead_of_reading(tmp_path):
    x = torch.randn(1000)
    loaded = via_ember({"x": x}, tmp_path, mmap=True)
    same(loaded["x"], ember.from_numpy(x.numpy()))
    assert not loaded["x"]._data.flags.owndata  # a view of the mapped file
    loaded["x"][0] = 5.0  # private to this process: the file is unchanged
    assert ember.load(tmp_path / "from_torch.pt")["x"][0].item() == x[0].item()


@pytest.mark.parametrize("map_location", ["cpu", torch.device("cpu"), {"cuda:0": "cpu"},
                                          lambda storage, location: storage, None])
def test_map_location_forms(map_location, tmp_path):
    if isinstance(map_location, torch.device):
        map_location = ember.device("cpu")
    same(via_ember(torch.ones(2), tmp_path, map_location=map_location), ember.ones(2))


def test_map_location_to_a_device_ember_lacks_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="CPU only"):
        via_ember(torch.ones(2), tmp_path, map_location="cuda:0")


def test_dtypes_ember_lacks_name_the_dtype_and_the_key(tmp_path):
    with pytest.raises(TypeError, match=r"\['w'\] is a tensor of torch.float8_e5m2"):
        via_ember({"ok": torch.ones(1), "w": torch.ones(2, dtype=torch.float8_e5m2)}, tmp_path)
    with pytest.raises(TypeError, match=r"\['c'\]\[1\] is a tensor of torch.complex32"):
        via_ember({"c": [torch.ones(1), torch.ones(2, dtype=torch.complex32)]}, tmp_path)


def test_legacy_format_written_by_torch(tmp_path):
    path = tmp_path / "legacy.pt"
    base = torch.arange(6.0)
    torch.save({"a": base, "view": base[2:4], "i": torch.tensor([1, 2], dtype=torch.int16),
                "p": torch.nn.Parameter(torch.ones(2))}, path, _use_new_zipfile_serialization=False)
    loaded = ember.load(path)
    same(loaded["a"], ember.arange(6.0))
    same(loaded["i"], ember.tensor([1, 2], dtype=ember.int16))
    assert type(loaded["p"]) is ember.nn.Parameter
    loaded["view"][0] = -1.0
    assert loaded["a"][2].item() == -1.0
    with pytest.raises(RuntimeError, match="legacy format"):
        ember.load(path, mmap=True)


@pytest.mark.parametrize("protocol", [2, 4])
def test_legacy_format_written_by_ember(protocol, tmp_path):
    path = tmp_path / "legacy.pt"
    base = ember.arange(6.0)
    ember.save({"a": base, "view": base[2:4], "i": ember.tensor([1, 2], dtype=ember.int16),
                "p": ember.nn.Parameter(ember.ones(2)), "many": [ember.ones(1) * k for k in range(11)]}, path,
               _use_new_zipfile_serialization=False, pickle_protocol=protocol)
    readers = [lambda: ember.load(path), lambda: torch.load(path, weights_only=False)]
    if protocol == 2:  # (torch's weights-only reader lacks FRAME, which protocol 4 writes)
        readers.append(lambda: torch.load(path))
    for read in readers:
        loaded = read()
        same(loaded["a"], torch.arange(6.0))
        same(loaded["i"], torch.tensor([1, 2], dtype=torch.int16))
        assert type(loaded["p"]).__name__ == "Parameter"
        assert [t.item() for t in loaded["many"]] == list(range(11))
        loaded["view"][0] = -1.0
        assert loaded["a"][2].item() == -1.0


def test_legacy_format_refuses_a_dtype_it_has_no_storage_class_for(tmp_path):
    # torch writes such a file and then fails to read it
    with pytest.raises(RuntimeError, match="legacy format has no storage class for ember.uint16"):
        ember.save(ember.tensor([1], dtype=ember.uint16), io.BytesIO(), _use_new_zipfile_serialization=False)


def test_saving_into_a_missing_directory_raises_torchs_error(tmp_path):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Parent directory .*missing does not exist"):
            lib.save(lib.ones(1), tmp_path / "missing" / "x.pt")
    buffer = io.BytesIO()
    ember.save(ember.ones(1), buffer, _disable_byteorder_record=True)
    same(torch.load(io.BytesIO(buffer.getvalue())), torch.ones(1))


def test_weights_only_false_reads_trusted_objects(tmp_path):
    path = tmp_path / "trusted.pt"
    ember.save({"f": collections.namedtuple, "t": ember.ones(1)}, path)
    with pytest.raises(ember.serialization.UnpicklingError, match="collections.namedtuple"):
        ember.load(path)
    assert ember.load(path, weights_only=False)["f"] is collections.namedtuple
    with ember.serialization.safe_globals([collections.namedtuple]):
        assert ember.load(path)["f"] is collections.namedtuple
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        ember.load(path, pickle_module=pickle, weights_only=True)
    assert ember.load(path, pickle_module=pickle)["f"] is collections.namedtuple  # unset: False, as in torch
    assert ember.load(path, pickle_module=pickle, weights_only=False)["f"] is collections.namedtuple


def test_tensor_subclasses_keep_their_class_when_allowed(tmp_path):
    path = tmp_path / "sub.pt"
    tagged = Tagged._make_subclass(Tagged, ember.ones(2))
    tagged.tag = "mine"
    ember.save(tagged, path)
    with pytest.raises(ember.serialization.UnpicklingError, match="Tagged"):
        ember.load(path)
    with ember.serialization.safe_globals([Tagged]):
        loaded = ember.load(path)
    assert type(loaded) is Tagged and loaded.tag == "mine"


class Tagged(ember.Tensor):
    pass


class Plain:
    """A class of the user's with no __setstate__: a load sets its attributes, and its slots."""

    def __init__(self):
        self.weight = torch.ones(2)
        self.note = "kept"


class Slotted:
    __slots__ = ("weight", "note")

    def __init__(self):
        self.weight = torch.ones(2)
        self.note = "kept"


@pytest.mark.parametrize("cls", [Plain, Slotted])
def test_an_allowed_class_without_setstate_gets_its_attributes_back(cls, tmp_path):
    path = tmp_path / "plain.pt"
    torch.save([cls()], path)
    with pytest.raises(ember.serialization.UnpicklingError, match=cls.__name__):
        ember.load(path)
    with ember.serialization.safe_globals([cls]):
        loaded = ember.load(path)[0]
    assert type(loaded) is cls and loaded.note == "kept"
    same(loaded.weight, torch.ones(2))


def test_save_refuses_what_it_cannot_write(tmp_path):
    with pytest.raises(ValueError, match="pickle_module"):
        ember.save(ember.ones(1), tmp_path / "x.pt", pickle_module=object())
    with pytest.raises(TypeError, match="path or a binary file"):
        ember.save(ember.ones(1), 3)
    with pytest.raises(TypeError, match="path or a binary file"):
        ember.load(3)




def _local_class():
    class Local:
        pass

    return Local


def _holding_a_lambda(lib):
    return {"weight": lib.ones(2), "activation": lambda x: x}


def _raised(save, obj):
    with pytest.raises(Exception) as caught:
        save(obj, io.BytesIO())
    return caught.value


@pytest.mark.parametrize("make", [lambda lib: _local_class()(), lambda lib: [_local_class()], _holding_a_lambda],
                         ids=["instance-of-a-local-class", "local-class", "lambda"])
def test_unpicklable_globals_raise_what_torch_raises(make):
    # torch pickles with Python's C pickler, whose error for a local object is not the pure-Python
    # pickler's (on Python 3.11: AttributeError, where the Python one raises PicklingError)
    want = _raised(torch.save, make(torch))
    got = _raised(ember.save, make(ember))
    assert (type(got), str(got)) == (type(want), str(want))


@st.composite
def views_of_one_block(draw):
    """A block of memory and views of it: slices with steps, transposes, single elements, reshapes."""
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    dtype = draw(st.sampled_from(DTYPES))
    picks = []
    for _ in range(draw(st.integers(1, 4))):
        dim = draw(st.integers(0, len(shape) - 1))
        start = draw(st.integers(0, shape[dim] - 1))
        picks.append((dim, start, draw(st.integers(1, 2)), draw(st.booleans())))
    return shape, dtype, picks


def take(block, dim, start, step, transpose):
    view = block.narrow(dim, start, 1) if step == 1 else block.movedim(dim, 0)[start::step]
    return view.t() if transpose and view.dim() == 2 else view


@settings(max_examples=40, deadline=None)
@given(views_of_one_block())
def test_random_views_keep_values_layout_and_sharing_both_ways(case):
    import tempfile
    shape, dtype, picks = case
    data = values(dtype, tuple(shape))
    with tempfile.TemporaryDirectory() as directory:
        for writer, reader in ((ember, torch), (torch, ember)):
            block = writer.from_numpy(data.copy())
            path = f"{directory}/v.pt"
            writer.save({"block": block, "views": [take(block, *p) for p in picks]}, path)
            loaded = reader.load(path)
            expected = [take(reader.from_numpy(data.copy()), *p) for p in picks]
            for got, want in zip(loaded["views"], expected):
                same(got, want)
                assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()
            if reader is ember:  # every view still lies in the loaded block's memory
                assert all(np.shares_memory(v.numpy(), loaded["block"].numpy()) for v in loaded["views"])


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_protocols(protocol, tmp_path):
    """ember reads every protocol; torch's weights-only reader stops at 3 (it lacks FRAME), for its own files too."""
    torch.save({"x": torch.ones(2)}, tmp_path / "t.pt", pickle_protocol=protocol)
    same(ember.load(tmp_path / "t.pt")["x"], ember.ones(2))
    x = ember.arange(4.0)
    ember.save({"x": x, "v": x[1:], "s": ember.Size([2])}, tmp_path / "e.pt", pickle_protocol=protocol)
    loaded = ember.load(tmp_path / "e.pt")
    same(loaded["v"], ember.arange(1.0, 4.0))
    assert loaded["s"] == ember.Size([2])
    if protocol <= 3:
        with pytest.warns(UserWarning) if protocol == 3 else contextlib.nullcontext():
            same(torch.load(tmp_path / "e.pt")["v"], torch.arange(1.0, 4.0))
