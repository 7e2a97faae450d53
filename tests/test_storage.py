"""Storages (untyped_storage, the deprecated storage) and the memory-placement queries, against torch."""
import warnings

import pytest
import torch

import ember


def _storage_story(m) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = m.arange(6.).view(2, 3)
        v = t[1, 1:]
        s = v.untyped_storage()
        typed = v.storage()
    story = [s.nbytes(), s.size(), len(s), s.data_ptr() == t.data_ptr(), v.storage_offset(), str(s.device),
             s.element_size(), s[0], s[6], s.tolist()[:8], repr(s).split("\n")[-1].split(".storage.")[1],
             str(typed.dtype).split(".")[1], typed.size(), typed.tolist(), typed[2], typed.element_size(),
             typed.nbytes(), repr(typed).split("\n")[-1].split(".storage.")[1].replace(m.__name__, "M"),
             t.is_shared(), t.is_pinned(), s.is_shared()]
    a = m.zeros(3)
    story += [a.untyped_storage().data_ptr() == a[1:].untyped_storage().data_ptr(),
              m.zeros(3).untyped_storage().data_ptr() == a.untyped_storage().data_ptr()]
    for k, byte in enumerate((0, 0, 0x80, 0x3F)):  # the bytes of 1.0 in single precision, little-endian
        s[k] = byte
    story.append(t[0, 0].item())
    story.append(m.UntypedStorage(8).nbytes())
    return story


def test_storages_as_torch():
    assert _storage_story(ember) == _storage_story(torch)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_pin_memory_is_refused_without_an_accelerator(m):
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        m.ones(2).pin_memory()


def test_storage_warns_that_typed_storage_is_deprecated():
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        ember.ones(2).storage()
