"""ember.types against torch.types: the same aliases, over ember's own classes."""
import typing

import torch
import torch.types

import ember
import ember.types


def _in_ember_terms(alias) -> str:
    return str(alias).replace("torch", "ember")


def test_public_names_as_torch():
    assert ember.types.__all__ == torch.types.__all__
    assert ember.types is ember.__getattr__("types")


def test_aliases_name_the_same_types():
    for name in ("Number", "Device", "FileLike", "_size", "_TensorOrTensors", "_TensorOrOptionalTensors"):
        assert str(getattr(ember.types, name)) == _in_ember_terms(getattr(torch.types, name)), name
    assert ember.types._Number == torch.types._Number
    for name in ("_int", "_float", "_bool", "_complex", "_str", "_bytes"):
        assert getattr(ember.types, name) is getattr(torch.types, name)


def test_aliases_map_to_embers_classes():
    assert ember.types._device is ember.device and ember.types._dtype is ember.dtype
    assert ember.types._layout is ember.layout and ember.types._qscheme is ember.qscheme
    assert ember.types.Size is ember.Size and ember.types.Tensor is ember.Tensor
    assert set(typing.get_args(ember.types.Device)) == {ember.device, str, int, type(None)}


def test_annotations_with_the_aliases_resolve():
    def place(x: ember.Tensor, device: ember.types.Device = None, size: ember.types._size = (1,)) -> None:
        pass

    hints = typing.get_type_hints(place)
    assert hints["device"] == ember.types.Device and hints["size"] == ember.types._size


def test_without_symbolic_sizes_the_like_types_are_plain():
    assert (ember.types.IntLikeType, ember.types.FloatLikeType, ember.types.BoolLikeType) == (int, float, bool)
    assert ember.types.py_sym_types == ()
