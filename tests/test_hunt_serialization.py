"""ember.save / ember.load against torch.save / torch.load on the same programs: arguments, errors and what
comes through a checkpoint."""
import contextlib
import importlib
import io
import mmap
import os
import pickle
import struct
import types
import warnings
import zipfile

import numpy as np
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


# ---- the settings: set_crc32_options and torch.utils.serialization.config


def records(buffer: io.BytesIO) -> dict:
    """Each record of a checkpoint: ``name -> (CRC field, offset of its data)``."""
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        infos = archive.infolist()
    data = buffer.getvalue()
    offsets = {}
    for info in infos:
        name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
        offsets[info.filename.split("/", 1)[1]] = (info.CRC, info.header_offset + 30 + name_length + extra_length)
    return offsets


@contextlib.contextmanager
def setting(library, section: str, name: str, value):
    config = importlib.import_module(f"{library.__name__}.utils.serialization.config")
    options = getattr(config, section)
    before = getattr(options, name)
    setattr(options, name, value)
    try:
        yield
    finally:
        setattr(options, name, before)


def test_set_crc32_options_false_writes_every_crc_as_zero_and_the_file_still_loads():
    written = {}
    for library in (torch, ember):
        assert library.serialization.get_crc32_options() is True
        library.serialization.set_crc32_options(False)
        try:
            assert library.serialization.get_crc32_options() is False
            written[library] = saved(library, {"w": library.arange(4.0)})
        finally:
            library.serialization.set_crc32_options(True)
    crcs = {library: {name: crc for name, (crc, _) in records(buffer).items() if name != ".data/serialization_id"}
            for library, buffer in written.items()}
    assert crcs[ember] == crcs[torch] and set(crcs[ember].values()) == {0}
    assert torch.load(written[ember])["w"].tolist() == ember.load(saved(ember, ember.arange(4.0))).tolist()


def test_config_save_storage_alignment_places_every_record_as_torch_does():
    layouts = {}
    for library in (torch, ember):
        with setting(library, "save", "storage_alignment", 128):
            buffer = saved(library, {"a": library.ones(3), "b": library.zeros(5, dtype=library.int64)})
        layouts[library] = {name: offset % 128 for name, (_, offset) in records(buffer).items()}
        with zipfile.ZipFile(buffer) as archive:
            assert archive.read("archive/.storage_alignment") == b"128"
        buffer.seek(0)
        assert torch.load(buffer)["b"].tolist() == [0] * 5
    assert layouts[ember] == layouts[torch]
    assert all(layouts[ember][name] == 0 for name in layouts[ember] if name.startswith("data/"))


def test_config_load_mmap_is_what_mmap_none_means():
    for library in (torch, ember):
        with setting(library, "load", "mmap", True), pytest.raises(ValueError, match="f must be a file path"):
            library.load(saved(library, library.ones(1)))


def test_the_serialization_setters_write_the_config():
    for library in (torch, ember):
        config = importlib.import_module(f"{library.__name__}.utils.serialization.config")
        library.serialization.set_default_load_endianness(library.serialization.LoadEndianness.BIG)
        try:
            assert config.load.endianness is library.serialization.LoadEndianness.BIG
        finally:
            library.serialization.set_default_load_endianness(None)
        assert config.load.endianness is None and config.load.mmap_flags == mmap.MAP_PRIVATE
        with library.serialization.set_default_mmap_options(mmap.MAP_SHARED):
            assert config.load.mmap_flags == mmap.MAP_SHARED
        assert (config.save.compute_crc32, config.save.storage_alignment, config.load.mmap) == (True, 64, False)


# ---- a .safetensors path


def test_load_of_a_safetensors_path_reads_the_safetensors_file_as_torch_does(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    path = tmp_path / "model.safetensors"
    safetensors_torch.save_file({"w": torch.arange(6.0).view(2, 3), "b": torch.tensor([1, 2])}, str(path))
    expected = torch.load(path)
    for map_location in (None, "cpu"):
        loaded = ember.load(path, map_location=map_location)
        assert {k: (v.tolist(), str(v.dtype)[6:]) for k, v in loaded.items()} == \
            {k: (v.tolist(), str(v.dtype)[6:]) for k, v in expected.items()}
    for map_location in ({"cpu": "cpu"}, lambda storage, location: storage):
        assert raised_message(lambda: ember.load(path, map_location=map_location)).split(" Use")[0] == \
            raised_message(lambda: torch.load(path, map_location=map_location)).split(" Use")[0]


def raised_message(call) -> str:
    with pytest.raises(RuntimeError) as info:
        call()
    return str(info.value)


# ---- allowed globals


def numpy_globals() -> list:
    """What torch's documentation lists for loading NumPy arrays and scalars with weights_only=True."""
    import numpy as np

    return [np._core.multiarray._reconstruct, np.ndarray, np.dtype, np._core.multiarray.scalar,
            type(np.dtype(np.int64)), type(np.dtype(np.float64))]


@pytest.mark.parametrize("writer", [torch, ember])
def test_numpy_arrays_load_once_their_globals_are_allowed(writer):
    import numpy as np

    checkpoint = {"a": np.arange(3), "s": np.float64(1.5)}
    results = []
    for reader in (torch, ember):
        with reader.serialization.safe_globals(numpy_globals()):
            results.append(reader.load(saved(writer, checkpoint)))
    for loaded in results:
        np.testing.assert_array_equal(loaded["a"], checkpoint["a"])
        assert loaded["a"].dtype == checkpoint["a"].dtype and loaded["s"] == checkpoint["s"]


@pytest.mark.parametrize("writer", [torch, ember])
def test_builtins_that_protocol_2_names_the_python_2_way_are_allowed_by_their_python_3_names(writer):
    # protocol 2 writes int as __builtin__.long and range as __builtin__.xrange
    for reader in (torch, ember):
        with pytest.raises(pickle.UnpicklingError, match=r"\bint\b"):
            reader.load(saved(writer, {"type": int}))
        with reader.serialization.safe_globals([int, range]):
            assert reader.load(saved(writer, {"type": int, "range": range})) == {"type": int, "range": range}


def test_saving_to_a_directory_is_a_runtime_error_naming_it(tmp_path):
    for library in (torch, ember):
        with pytest.raises(RuntimeError, match="Is a directory|is a directory"):
            library.save(library.ones(1), tmp_path)
    assert "is a directory" in raised_message(lambda: ember.save(ember.ones(1), tmp_path)).split(str(tmp_path))[1]


# ---- storages saved for themselves


def storage_checkpoint(library):
    x = library.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated, in both
        return {"t": x, "typed": x.storage(), "bytes": (library.arange(3, dtype=library.uint8).untyped_storage(),)}


def described_storage(storage) -> tuple:
    return type(storage).__name__, str(storage.dtype).split(".")[-1], storage.size(), storage.tolist()


@pytest.mark.parametrize("writer, reader", [(ember, torch), (torch, ember), (ember, ember)])
def test_storages_load_as_typed_storages_sharing_memory_with_their_tensors(writer, reader):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = reader.load(saved(writer, storage_checkpoint(writer)))
        expected = torch.load(saved(torch, storage_checkpoint(torch)))
        for got, want in ((loaded, expected), (loaded["bytes"], expected["bytes"])):
            key = "typed" if "typed" in got else 0
            assert described_storage(got[key]) == described_storage(want[key])
        loaded["t"][0] = 9.0  # the storage and the tensor are one block of memory
        assert loaded["typed"][0] == 9.0


# ---- whole models saved by torch, loaded with weights_only=False


MODELS = {
    "cnn": (lambda nn: nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.MaxPool2d(2),
                                     nn.Flatten(), nn.Linear(8, 3)), (2, 1, 6, 6)),
    "lstm": (lambda nn: nn.LSTM(3, 4, batch_first=True), (2, 5, 3)),
    "transformer_layer": (lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), (3, 2, 4)),
}


def first(output):
    return output[0] if isinstance(output, tuple) else output


def forward_hook_doubling(module, args, output):
    return output * 2


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_whole_model_saved_by_torch_loads_as_embers_layers_and_computes_the_same(name):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make(torch.nn).eval()
    loaded = ember.load(saved(torch, model), weights_only=False).eval()
    assert type(loaded).__name__ == type(model).__name__ and isinstance(loaded, ember.nn.Module)
    x = torch.rand(shape)
    with torch.no_grad():
        expected = first(model(x))
    result = first(loaded(ember.tensor(x.numpy())))
    np.testing.assert_allclose(result.detach().numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    first(loaded.train()(ember.tensor(x.numpy()))).sum().backward()  # and it trains
    assert all(p.grad is not None for p in loaded.parameters())


def test_hooks_of_a_model_saved_by_torch_run_in_ember():
    model = torch.nn.Linear(2, 2)
    model.register_forward_hook(forward_hook_doubling)
    loaded = ember.load(saved(torch, model), weights_only=False)
    x = torch.rand(1, 2)
    with torch.no_grad():
        expected = model(x)
    np.testing.assert_allclose(loaded(ember.tensor(x.numpy())).detach().numpy(), expected.numpy(), rtol=1e-6)


def test_a_torch_model_loads_weights_only_once_embers_classes_of_its_layers_are_allowed():
    model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    buffer = saved(torch, model)
    with pytest.raises(pickle.UnpicklingError, match=r"add_safe_globals\(\[ember\.nn\.modules\.container\.Sequential"):
        ember.load(buffer)
    layers = [ember.nn.Sequential, ember.nn.Linear, ember.nn.ReLU]
    with ember.serialization.safe_globals(layers), torch.serialization.safe_globals(
            [torch.nn.Sequential, torch.nn.Linear, torch.nn.ReLU]):
        assert ember.serialization.get_unsafe_globals_in_checkpoint(saved(torch, model)) == \
            torch.serialization.get_unsafe_globals_in_checkpoint(saved(torch, model)) == []
        loaded = ember.load(saved(torch, model))
    x = torch.rand(4, 2)
    with torch.no_grad():
        expected = model(x)
    np.testing.assert_allclose(loaded(ember.tensor(x.numpy())).detach().numpy(), expected.numpy(), rtol=1e-6)


# ---- the rest of torch.serialization's public names


def test_torch_serializations_other_public_names_answer_as_torchs_do_on_a_cpu_machine():
    for library in (torch, ember):
        module = library.serialization
        assert issubclass(module.SourceChangeWarning, Warning)
        assert module.location_tag(library.ones(2)) == "cpu"
        storage = library.ones(2).untyped_storage()
        assert module.default_restore_location(storage, "cpu") is storage
        with module.mkdtemp() as path:
            assert os.path.isdir(path)
        assert not os.path.exists(path)
    for call in (lambda m: m.validate_cuda_device("cuda:0"),
                 lambda m: m.default_restore_location(ember.ones(1).untyped_storage(), "cuda:0")):
        assert raised_message(lambda: call(ember.serialization)) == raised_message(lambda: call(torch.serialization))
    assert "tagged with foo" in raised_message(
        lambda: ember.serialization.default_restore_location(ember.ones(1).untyped_storage(), "foo"))
    for version, required in (("1.2.3", (1, 2)), ("1.2.3", (1, 3)), ("2.0", (1, 9, 9))):
        package = types.SimpleNamespace(__name__="pkg", __version__=version)
        assert outcome(lambda: ember.serialization.check_module_version_greater_or_equal(package, required)) == \
            outcome(lambda: torch.serialization.check_module_version_greater_or_equal(package, required))
    malformed = types.SimpleNamespace(__name__="pkg", __version__="1.x")
    assert raised_message(lambda: ember.serialization.check_module_version_greater_or_equal(malformed, (1, 2))) == \
        raised_message(lambda: torch.serialization.check_module_version_greater_or_equal(malformed, (1, 2)))
