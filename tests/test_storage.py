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


def _set_story(m) -> list:
    t = m.arange(6.)
    x = m.tensor([1.])
    story = [x.set_(t) is x, x.tolist(), x.data_ptr() == t.data_ptr()]
    x = m.tensor([1.])
    before = x._version
    x.set_(t.untyped_storage(), 2, (2, 2), (1, 2))
    story += [x.tolist(), x.stride(), x.storage_offset(), x._version - before]
    x = m.tensor([1.]).set_()
    story += [x.tolist(), tuple(x.shape)]
    x = m.tensor([1.]).set_(t.untyped_storage())
    x[0] = 7
    story.append(t[0].item())
    return story


def test_set_as_torch():
    assert _set_story(ember) == _set_story(torch)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_set_refuses_a_leaf_that_requires_grad_and_another_dtype(m):
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        m.ones(2, requires_grad=True).set_(m.zeros(3))
    with pytest.raises(RuntimeError, match="(?i)could not set (a )?tensor of type"):
        m.tensor([1]).set_(m.arange(6.))


def test_set_refuses_sizes_beyond_the_storage():
    with pytest.raises(RuntimeError, match="beyond the storage's 6 elements"):
        ember.tensor([1.]).set_(ember.arange(6.).untyped_storage(), 0, (7,))
