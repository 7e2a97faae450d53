"""ember.save / ember.load against torch.save / torch.load on the same programs: arguments, errors and what
comes through a checkpoint."""
import io
import os
import pickle
import warnings

import pytest
import torch

import ember


def saved(library, obj, **kwargs) -> io.BytesIO:
    buffer = io.BytesIO()
    library.save(obj, buffer, **kwargs)
    buffer.seek(0)
    return buffer


def outcome(call):
    """``("ok", result)`` or ``("error", exception type name)``."""
    try:
        return "ok", call()
    except Exception as error:  # the type is what is compared
        return "error", type(error).__name__


# ---- load's arguments


def test_a_pickle_module_without_weights_only_loads_any_pickle_as_torch_does():
    # torch: weights_only left unset defaults to False when a pickle_module is named
    assert torch.load(saved(torch, {"f": os.getcwd}), pickle_module=pickle)["f"] is os.getcwd
    assert ember.load(saved(ember, {"f": os.getcwd}), pickle_module=pickle)["f"] is os.getcwd


def test_a_pickle_module_with_weights_only_true_is_refused_as_torch_refuses_it():
    for library in (torch, ember):
        with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
            library.load(saved(library, library.ones(1)), pickle_module=pickle, weights_only=True)


def test_encoding_with_a_weights_only_load_warns_and_loads():
    for library in (torch, ember):
        with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
            loaded = library.load(saved(library, library.arange(3.0)), encoding="utf-8")
        assert loaded.tolist() == [0.0, 1.0, 2.0]


def test_an_unknown_unpickler_argument_with_a_weights_only_load_is_a_type_error():
    for library in (torch, ember):
        with warnings.catch_warnings(), pytest.raises(TypeError):
            warnings.simplefilter("ignore")
            library.load(saved(library, library.ones(1)), not_an_argument=1)


def test_mmap_of_a_file_object_without_a_file_is_a_value_error():
    for library in (torch, ember):
        with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
            library.load(saved(library, library.ones(1)), mmap=True)


# ---- what a checkpoint keeps


def tensor_with_attributes(library):
    t = library.arange(3.0)
    t.note, t.scale = "kept", 2.5
    return t


@pytest.mark.parametrize("writer, reader", [(ember, torch), (torch, ember), (ember, ember)])
def test_attributes_set_on_a_tensor_are_saved_with_it(writer, reader):
    loaded = reader.load(saved(writer, tensor_with_attributes(writer)))
    expected = torch.load(saved(torch, tensor_with_attributes(torch)))
    assert type(loaded).__name__ == type(expected).__name__ == "Tensor"
    assert (loaded.note, loaded.scale, loaded.tolist()) == (expected.note, expected.scale, expected.tolist())


def test_ember_keeps_its_own_tensor_state_out_of_a_checkpoint():
    with ember.inference_mode():
        t = ember.ones(2)  # ember marks it as an inference tensor in its __dict__
    loaded = torch.load(saved(ember, t))
    assert type(loaded) is torch.Tensor and loaded.__dict__ == torch.load(saved(torch, torch.ones(2))).__dict__
