"""Loading a file someone sent you runs no code, and a damaged file fails with an error that says what is wrong."""
import builtins
import collections
import errno
import io
import os
import pickle
import subprocess
import zipfile

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember.serialization import UnpicklingError

LOAD_ERRORS = (pickle.UnpicklingError, RuntimeError, TypeError, EOFError)  # (EOFError: an empty file, as torch)


class Payload:
    """An object whose unpickling calls ``call(*args)``."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def checkpoint(data_pkl: bytes, records: dict | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", data_pkl)
        archive.writestr("archive/byteorder", "little")
        for name, data in (records or {}).items():
            archive.writestr(f"archive/{name}", data)
        archive.writestr("archive/version", "3\n")
    return buffer.getvalue()


def rewritten(original: bytes, changes: dict) -> bytes:
    """A copy of a checkpoint with some records replaced (bytes) or dropped (None)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(original)) as source, zipfile.ZipFile(buffer, "w") as target:
        for name in source.namelist():
            short = name.split("/", 1)[1]
            data = changes.get(short, source.read(name))
            if data is not None:
                target.writestr(name, data)
    return buffer.getvalue()


def saved(obj, lib=ember) -> bytes:
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    return buffer.getvalue()


def payloads(marker):
    return {
        "os.system": Payload(os.system, f"touch {marker}"),
        "builtins.eval": Payload(builtins.eval, f"open({str(marker)!r}, 'w').close()"),
        "subprocess.Popen": Payload(subprocess.Popen, ["touch", str(marker)]),
        "builtins.exec": Payload(builtins.exec, f"open({str(marker)!r}, 'w').close()"),
    }


@pytest.mark.parametrize("name", ["os.system", "builtins.eval", "subprocess.Popen", "builtins.exec"])
def test_a_malicious_checkpoint_runs_nothing(name, tmp_path):
    marker = tmp_path / "pwned"
    evil = {"epoch": 3, "x": payloads(marker)[name]}
    path = tmp_path / "evil.pt"
    path.write_bytes(checkpoint(pickle.dumps(evil, protocol=2)))
    with pytest.raises(UnpicklingError, match="add_safe_globals") as error:
        ember.load(path)
    assert name.split(".")[-1] in str(error.value)
    assert not marker.exists()


def test_the_payload_is_real_when_the_file_is_trusted(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    path.write_bytes(checkpoint(pickle.dumps(payloads(marker)["builtins.eval"], protocol=2)))
    ember.load(path, weights_only=False)  # the caller said the file is trusted
    assert marker.exists()


def test_a_malicious_legacy_checkpoint_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "legacy.pt"
    torch.save(torch.ones(2), path, _use_new_zipfile_serialization=False)
    parts = path.read_bytes()
    header = b"".join(pickle.dumps(v, protocol=2) for v in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}))
    path.write_bytes(header + pickle.dumps(payloads(marker)["os.system"], protocol=2) + parts[len(header):])
    with pytest.raises(UnpicklingError, match="system"):
        ember.load(path)
    assert not marker.exists()


@pytest.mark.parametrize("data_pkl, message", [
    (b"\x80\x02ctorch\nTensor\nJ\x00\x10\xa5\xd4\x85R.", "allocate"),  # Tensor(10**12) would allocate
    (b"\x80\x02c__builtin__\nbytearray\nJ\x00\x10\xa5\xd4\x85R.", "only bytes"),  # so would bytearray(n)
    (b"\x80\x02ccollections\nOrderedDict\n)R(K\x01K\x02ta.", "APPEND applied to OrderedDict"),
    (b"\x80\x02}}b.", "BUILD of dict"),
    (b"\x80\x02]r\xff\xff\xff\x7f.", None),  # a memo index of 2**31: no table of that size is made
    (b"\x80\x02X\xff\xff\xff\x7fabc.", "truncated"),
    (b"\x80\x02cnumpy\nload\n.", "numpy.load"),
    (b"\x80\x02(((((((", "truncated"),
    (b"\x80\x02i__main__\nX\n.", "unsupported pickle opcode"),
])
def test_abuse_of_allowed_names_and_opcodes(data_pkl, message):
    if message is None:
        assert ember.load(io.BytesIO(checkpoint(data_pkl))) == []
        return
    with pytest.raises(UnpicklingError, match=message):
        ember.load(io.BytesIO(checkpoint(data_pkl)))


def test_safe_globals_api_matches_torch():
    ember.serialization.clear_safe_globals()
    ember.serialization.add_safe_globals([collections.namedtuple, (Payload, "elsewhere.Payload")])
    assert ember.serialization.get_safe_globals() == [collections.namedtuple, (Payload, "elsewhere.Payload")]
    with ember.serialization.safe_globals([os.getcwd]):
        assert os.getcwd in ember.serialization.get_safe_globals()
    assert os.getcwd not in ember.serialization.get_safe_globals()
    ember.serialization.clear_safe_globals()
    assert ember.serialization.get_safe_globals() == []
    with pytest.raises(TypeError, match="list of globals"):
        ember.serialization.add_safe_globals(os.getcwd)
    assert issubclass(UnpicklingError, pickle.UnpicklingError)


@pytest.mark.parametrize("protocol", [2, 3, 4])
def test_unsafe_globals_in_a_checkpoint_are_listed_without_running_it(protocol, tmp_path):
    marker = tmp_path / "ran"
    obj = {"t": torch.ones(1), "nt": collections.namedtuple, "p": payloads(marker)["os.system"],
           "od": collections.OrderedDict(a=1)}
    data = io.BytesIO()
    torch.save(obj, data, pickle_protocol=protocol)
    listed = ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data.getvalue()))
    assert listed == ["collections.namedtuple", f"{os.system.__module__}.system"]
    if protocol < 4:  # (torch's own reader of the pickle stops at protocol 3)
        assert sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data.getvalue()))) == listed
    assert not marker.exists()
    with ember.serialization.safe_globals([collections.namedtuple]):
        assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data.getvalue())) == listed[1:]
    legacy = io.BytesIO()
    torch.save(torch.ones(1), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(legacy.getvalue()))


# ---- damaged files

def test_damaged_files_say_what_is_wrong():
    good = saved({"w": ember.arange(4.0), "n": ember.tensor(3)})
    cases = {
        "truncated": (good[: len(good) // 2], "not a readable zip"),
        "missing storage": (rewritten(good, {"data/0": None}), "no record 'archive/data/0'"),
        "short storage": (rewritten(good, {"data/0": b"\x00" * 8}), "should hold 4 elements"),
        "byte order": (rewritten(good, {"byteorder": b"middle"}), "byteorder record says"),
        "random bytes": (b"garbage" + os.urandom(64), "not a checkpoint"),
        "no pickle": (rewritten(good, {"data.pkl": None}), "no '<name>/data.pkl'"),
    }
    for name, (data, message) in cases.items():
        with pytest.raises(LOAD_ERRORS, match=message):
            ember.load(io.BytesIO(data))


@pytest.mark.parametrize("data", [b"", b"garbage"], ids=["empty", "not a pickle"])
def test_a_file_that_is_no_checkpoint_raises_torchs_error_type(data):
    errors = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as error:
            lib.load(io.BytesIO(data), weights_only=False)
        errors.append(error.type)
    assert issubclass(errors[1], errors[0])


def test_a_header_that_lies_about_sizes():
    good = saved(ember.ones(2))
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        pickled = archive.read("archive/data.pkl")
    assert pickled.count(b"K\x02\x85") == 1  # the size (2,): make it (9,)
    with pytest.raises(UnpicklingError, match="holds 2 elements of float32 but the tensor of size \\[9\\]"):
        ember.load(io.BytesIO(rewritten(good, {"data.pkl": pickled.replace(b"K\x02\x85", b"K\x09\x85")})))
    lying_count = pickled.replace(b"K\x02t", b"K\x07t")  # the storage's element count in its id
    with pytest.raises(RuntimeError, match="should hold 7 elements"):
        ember.load(io.BytesIO(rewritten(good, {"data.pkl": lying_count})))


def test_a_flipped_byte_in_a_storage_fails_its_crc():
    values = np.arange(64, dtype=np.float32)
    good = bytearray(saved(ember.from_numpy(values)))
    position = bytes(good).index(values.tobytes())  # where the storage's bytes are
    good[position + 30] ^= 1
    with pytest.raises(RuntimeError, match="CRC"):
        ember.load(io.BytesIO(bytes(good)))


def test_a_big_endian_file_is_swapped_as_torch_swaps_it(tmp_path):
    values = np.array([1.5, -2.0, 3.25], np.float32)
    big = rewritten(saved(ember.from_numpy(values)), {"byteorder": b"big", "data/0": values.byteswap().tobytes()})
    np.testing.assert_array_equal(ember.load(io.BytesIO(big)).numpy(), values)
    np.testing.assert_array_equal(torch.load(io.BytesIO(big)).numpy(), values)


def mutate(data: bytes, edits) -> bytes:
    data = bytearray(data)
    for kind, where, value in edits:
        where %= max(len(data), 1)
        if kind == "set":
            data[where:where + 1] = bytes([value])
        elif kind == "cut":
            del data[where:where + value]
        else:
            data[where:where] = bytes([value]) * 3
    return bytes(data)


VALID = {"ember": saved({"w": ember.arange(6.0).view(2, 3), "b": ember.ones(3, dtype=ember.int64), "e": 1}),
         "torch": saved({"w": torch.arange(6.0).view(2, 3), "b": torch.ones(3, dtype=torch.int64), "e": 1}, torch)}


@settings(max_examples=300, deadline=None)
@given(which=st.sampled_from(sorted(VALID)),
       edits=st.lists(st.tuples(st.sampled_from(["set", "cut", "insert"]), st.integers(0, 1 << 16),
                                st.integers(0, 255)), min_size=1, max_size=3))
def test_fuzzed_checkpoints_load_exactly_or_fail_cleanly(which, edits):
    """A mutated checkpoint either loads as the original (the bytes changed were unused) or raises a load error."""
    try:
        loaded = ember.load(io.BytesIO(mutate(VALID[which], edits)))
    except LOAD_ERRORS:
        return
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(loaded["b"].numpy(), np.ones(3, np.int64))
    assert loaded["e"] == 1


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_fail_cleanly(data):
    with pytest.raises(LOAD_ERRORS):
        ember.load(io.BytesIO(data))


# ---- a save that fails half-way

class FullDisk:
    """A file that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, f, room: int):
        self.f, self.room = f, room

    def write(self, data) -> int:
        self.room -= len(memoryview(data).cast("B"))
        if self.room < 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.f.write(data)

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


@pytest.mark.parametrize("room", [10, 2000, 5000])
def test_a_save_that_fails_half_way_leaves_the_old_file(room, tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    ember.save({"w": ember.zeros(3)}, path)
    open_temporary = ember.serialization._open_temporary

    def failing(target):
        f, name = open_temporary(target)
        return FullDisk(f, room), name

    monkeypatch.setattr(ember.serialization, "_open_temporary", failing)
    with pytest.raises(OSError, match="No space left"):
        ember.save({"w": ember.ones(1000)}, path)
    assert os.listdir(tmp_path) == ["model.pt"]  # no temporary file left behind
    np.testing.assert_array_equal(ember.load(path)["w"].numpy(), np.zeros(3, np.float32))


def test_a_compressed_record_is_refused_before_it_inflates():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02]" + b"N" * (1 << 20) + b".")  # inflates 1000-fold
    with pytest.raises(RuntimeError, match="compressed"):
        ember.load(io.BytesIO(buffer.getvalue()))


PICKLES = {name: zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl") for name, data in VALID.items()}


@settings(max_examples=300, deadline=None)
@given(which=st.sampled_from(sorted(VALID)),
       edits=st.lists(st.tuples(st.sampled_from(["set", "cut", "insert"]), st.integers(0, 1 << 12),
                                st.integers(0, 255)), min_size=1, max_size=4))
def test_fuzzed_pickles_with_valid_crcs_fail_cleanly(which, edits):
    """A mutated pickle in an otherwise valid file (the CRC made to fit) loads or raises a load error: it never
    crashes, runs anything or builds a tensor that reaches outside its storage."""
    damaged = rewritten(VALID[which], {"data.pkl": mutate(PICKLES[which], edits)})
    try:
        loaded = ember.load(io.BytesIO(damaged))
    except LOAD_ERRORS:
        return
    tensors = [v for v in (loaded.values() if isinstance(loaded, dict) else []) if isinstance(v, ember.Tensor)]
    for tensor in tensors:
        tensor.numpy().sum()  # every element is readable


def test_a_checkpoint_saved_from_a_gpu_loads_onto_the_cpu():
    good = saved({"w": ember.arange(3.0)})
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        pickled = archive.read("archive/data.pkl")
    on_gpu = rewritten(good, {"data.pkl": pickled.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")})
    assert on_gpu != good
    for map_location in (None, "cpu", {"cuda:0": "cpu"}, lambda storage, location: storage):
        np.testing.assert_array_equal(ember.load(io.BytesIO(on_gpu), map_location=map_location)["w"].numpy(),
                                      [0.0, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="CPU only"):
        ember.load(io.BytesIO(on_gpu), map_location={"cuda:0": "cuda:1"})


def legacy_bytes() -> bytes:
    buffer = io.BytesIO()
    base = torch.arange(6.0)
    torch.save({"w": base, "v": base[2:], "n": 3}, buffer, _use_new_zipfile_serialization=False)
    return buffer.getvalue()


LEGACY = legacy_bytes()


@settings(max_examples=200, deadline=None)
@given(edits=st.lists(st.tuples(st.sampled_from(["set", "cut", "insert"]), st.integers(0, 1 << 12),
                                st.integers(0, 255)), min_size=1, max_size=3))
def test_fuzzed_legacy_checkpoints_fail_cleanly(edits):
    """The legacy format has no checksums, so changed bytes may load as other values; but never anything else."""
    try:
        ember.load(io.BytesIO(mutate(LEGACY, edits)))
    except LOAD_ERRORS:
        pass
