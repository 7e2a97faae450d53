"""The settings of save and load (skip_data, the fallback byte order, mmap's flags), and torch's files written
with them, against torch."""
import mmap
import zipfile

import numpy as np
import pytest
import torch

import ember


def _names(path) -> list:
    return sorted(name.split("/", 1)[1] for name in zipfile.ZipFile(path).namelist())


@pytest.fixture
def torch_crc_off():
    torch.serialization.set_crc32_options(False)
    yield
    torch.serialization.set_crc32_options(True)


def test_torchs_checkpoints_without_crc_load(torch_crc_off, tmp_path):
    path = tmp_path / "nocrc.pt"
    torch.save({"w": torch.arange(6.0).view(2, 3), "step": 3}, path)
    assert {i.CRC for i in zipfile.ZipFile(path).infolist()} == {0}  # (what the test relies on)
    loaded = ember.load(path)
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(6.0).reshape(2, 3))
    assert loaded["step"] == 3


def test_a_damaged_record_still_fails_its_crc(tmp_path):
    path = tmp_path / "x.pt"
    ember.save(ember.arange(1000.0), path)
    raw = bytearray(path.read_bytes())
    start = raw.index(np.arange(1000.0, dtype=np.float32).tobytes()[:64])
    raw[start + 100] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(RuntimeError, match="fails its CRC check"):
        ember.load(path)


def _checkpoint(lib):
    w = lib.arange(12.0).view(3, 4)
    return {"w": w, "row": w[1], "i": lib.arange(5, dtype=lib.int32) + 7, "note": "kept"}


@pytest.mark.parametrize("writer", [torch, ember])
@pytest.mark.parametrize("reader", [torch, ember])
def test_skip_data_writes_the_layout_and_zeros(writer, reader, tmp_path):
    path = tmp_path / "skipped.pt"
    with writer.serialization.skip_data():
        writer.save(_checkpoint(writer), path)
    loaded = reader.load(path)
    assert loaded["note"] == "kept"
    assert loaded["w"].shape == (3, 4) and loaded["i"].dtype == reader.int32
    assert not loaded["w"].any() and not loaded["i"].any()
    if reader is ember:
        loaded["row"][0] = 5.0  # the view shares its storage with w, as in the full checkpoint
        assert loaded["w"][1, 0] == 5.0


def test_skip_data_loads_shapes_without_reading(tmp_path):
    path = tmp_path / "full.pt"
    ember.save(_checkpoint(ember), path)
    with ember.serialization.skip_data():
        loaded = ember.load(path)
    assert loaded["w"].shape == (3, 4) and not loaded["w"].any()
    assert ember.load(path)["i"].tolist() == [7, 8, 9, 10, 11]  # outside the block, the data again


def test_skip_data_refuses_the_legacy_format_as_torch(tmp_path):
    for lib in (torch, ember):
        with lib.serialization.skip_data(), pytest.raises(RuntimeError, match="Cannot use skip_data=True"):
            lib.save(lib.ones(2), tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)


def test_skip_data_ends_with_its_block(tmp_path):
    with ember.serialization.skip_data():
        pass
    ember.save(ember.ones(2), tmp_path / "x.pt")
    assert ember.load(tmp_path / "x.pt").tolist() == [1.0, 1.0]


def _without_byteorder(source, target) -> None:
    """A copy of a checkpoint without its byteorder record, as files written before the record existed."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as new:
        for info in old.infolist():
            if not info.filename.endswith("/byteorder"):
                new.writestr(info.filename, old.read(info))


@pytest.mark.parametrize("endianness", [None, "LITTLE", "BIG", "NATIVE"])
def test_a_checkpoint_without_byteorder_reads_as_the_default_says(endianness, tmp_path):
    torch.save(torch.tensor([1.0, 2.5], dtype=torch.float64), tmp_path / "full.pt")
    path = tmp_path / "old.pt"
    _without_byteorder(tmp_path / "full.pt", path)
    results = []
    for lib in (torch, ember):
        setting = None if endianness is None else getattr(lib.serialization.LoadEndianness, endianness)
        lib.serialization.set_default_load_endianness(setting)
        try:
            assert lib.serialization.get_default_load_endianness() is setting
            results.append(lib.load(path).numpy().tobytes())
        finally:
            lib.serialization.set_default_load_endianness(None)
    assert results[0] == results[1]


def test_load_endianness_refuses_other_values():
    for lib in (torch, ember):
        with pytest.raises(TypeError, match="Invalid argument type in function set_default_load_endianness"):
            lib.serialization.set_default_load_endianness("big")


def _mapped_then_changed(lib, path) -> float:
    loaded = lib.load(path, mmap=True)
    loaded[0] = 42.0
    del loaded
    return float(lib.load(path, mmap=True)[0])  # (a shared change leaves the record's CRC stale: see below)


@pytest.mark.parametrize("flags", ["MAP_PRIVATE", "MAP_SHARED"])
def test_mmap_options_decide_whether_writes_reach_the_file(flags, tmp_path):
    seen = []
    for lib in (torch, ember):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(lib.ones(4), path)
        with lib.serialization.set_default_mmap_options(getattr(mmap, flags)):
            seen.append(_mapped_then_changed(lib, path))
        assert lib.serialization.get_default_mmap_options() == mmap.MAP_PRIVATE
    assert seen[0] == seen[1] == (42.0 if flags == "MAP_SHARED" else 1.0)


def test_mmap_options_refuse_other_flags():
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="expected mmap.MAP_PRIVATE or mmap.MAP_SHARED"):
            lib.serialization.set_default_mmap_options(12345)


def test_a_record_changed_through_a_shared_map_says_how_to_load_it(tmp_path):
    path = tmp_path / "x.pt"
    ember.save(ember.ones(4), path)
    with ember.serialization.set_default_mmap_options(mmap.MAP_SHARED):
        _mapped_then_changed(ember, path)
    with pytest.raises(RuntimeError, match="fails its CRC check .* load it with mmap=True"):
        ember.load(path)
