"""utils.weak against torch.utils.weak: identity-keyed weak dictionaries of tensors and WeakIdRef."""
import copy
import gc

import pytest
import torch

import ember


def story(lib, weak):
    """What a program observes of a WeakTensorKeyDictionary as tensors come and go."""
    a, b, c = lib.zeros(2), lib.zeros(2), lib.ones(3)  # a and b have equal elements: still two keys
    table = weak.WeakTensorKeyDictionary()
    table[a], table[b] = "a", "b"
    seen = [len(table), table[a], table[b], a in table, c in table, 5 in table, table.get(c, "none")]
    seen.append(table.setdefault(c, "c"))
    seen.append(table.setdefault(c, "other"))
    seen.append(sorted(table.values()))
    duplicate = table.copy()
    seen.append((type(duplicate).__name__, len(duplicate), duplicate[a]))
    del b
    gc.collect()
    seen.append((len(table), sorted(table.values()), len(duplicate)))
    seen.append(table.pop(c))
    seen.append(table.pop(c, "gone"))
    with pytest.raises(KeyError):
        table[c]
    seen.append([key is a for key in table])  # keys are the tensors themselves
    ref, same = weak.WeakIdRef(a), weak.WeakIdRef(a)
    seen.append((ref == same, hash(ref) == id(a), ref() is a, weak.WeakIdRef(c) == ref))
    merged = table | {c: "c again"}
    seen.append((len(merged), merged[c], len(table)))
    table |= {c: "in place"}
    seen.append(sorted(table.values()))
    del a
    gc.collect()
    seen.append(sorted(table.values()))
    seen.append((ref() is None, ref == same, ref == ref))
    table.clear()
    seen.append(len(table))
    return seen


def test_weak_tensor_key_dictionary_as_torch():
    import torch.utils.weak
    import ember.utils.weak

    assert story(ember, ember.utils.weak) == story(torch, torch.utils.weak)


def test_an_entry_dying_while_iterating_is_dropped_after_the_iteration():
    from ember.utils.weak import WeakIdKeyDictionary

    keep, doomed = ember.ones(1), [ember.ones(1)]
    table = WeakIdKeyDictionary({keep: 1, doomed[0]: 2})
    for key in table:
        doomed.clear()
        gc.collect()
        assert len(table) == 1
    assert list(table.values()) == [1] and len(table.data) == 1


def test_tensor_weak_ref_as_torch():
    from ember.utils.weak import TensorWeakRef

    for lib, make in ((torch, torch.utils.weak.TensorWeakRef), (ember, TensorWeakRef)):
        t = lib.ones(1)
        ref = make(t)
        assert ref() is t
        del t
        gc.collect()
        assert ref() is None


def test_copy_module_copies_the_mapping():
    from ember.utils.weak import WeakIdKeyDictionary

    t = ember.ones(1)
    table = WeakIdKeyDictionary({t: 1})
    assert copy.copy(table)[t] == 1 and copy.copy(table) is not table
