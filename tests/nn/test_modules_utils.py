"""ember.nn.modules.utils against torch.nn.modules.utils: the size normalizers custom layers import, and the
state-dict prefix stripping for checkpoints of wrapped models."""
from collections import OrderedDict

import pytest
import torch
import torch.nn.modules.utils as theirs

import ember.nn.modules.utils as ours

SIZES = [3, (3, 5), [1, 2, 3], "ab", None, 2.5, range(2)]


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("value", SIZES, ids=repr)
def test_ntuple_helpers_as_torch(name, value):
    assert getattr(ours, name)(value) == getattr(theirs, name)(value)
    assert getattr(ours, name).__name__ == getattr(theirs, name).__name__


def test_ntuple_of_any_length_and_an_iterator():
    assert ours._ntuple(5, "five")(7) == theirs._ntuple(5, "five")(7)
    assert ours._ntuple(2)(iter([4, 6])) == theirs._ntuple(2)(iter([4, 6]))
    assert ours._ntuple(2).__name__ == theirs._ntuple(2).__name__


@pytest.mark.parametrize("values,n", [((1, 2), 2), ((1, 2, 3), 1), ((), 3), ((4,), 0)])
def test_reverse_repeat_tuple_as_torch(values, n):
    assert ours._reverse_repeat_tuple(values, n) == theirs._reverse_repeat_tuple(values, n)


@pytest.mark.parametrize("out_size,defaults", [
    (5, [1, 2, 3]), ([None, 4], [1, 2, 7, 9]), ([3, None], [8, 6, 5]), ([None, None, None], [2, 3, 4, 5]),
])
def test_list_with_default_as_torch(out_size, defaults):
    assert ours._list_with_default(out_size, defaults) == theirs._list_with_default(out_size, defaults)


def test_list_with_default_rejects_too_few_dims_as_torch():
    with pytest.raises(ValueError) as expected:
        theirs._list_with_default([None, 2], [3, 4])
    with pytest.raises(ValueError, match=str(expected.value)):
        ours._list_with_default([None, 2], [3, 4])


def _wrapped_state():
    state = OrderedDict([("module.weight", 1), ("module.bias", 2), ("head.weight", 3)])
    state._metadata = OrderedDict([("", {"v": 1}), ("module", {"v": 2}), ("module.inner", {"v": 3})])
    return state


def test_consume_prefix_strips_keys_and_metadata_as_torch():
    mine, reference = _wrapped_state(), _wrapped_state()
    ours.consume_prefix_in_state_dict_if_present(mine, "module.")
    theirs.consume_prefix_in_state_dict_if_present(reference, "module.")
    assert list(mine.items()) == list(reference.items())
    assert list(mine._metadata.items()) == list(reference._metadata.items())
    assert ours.__all__ == theirs.__all__


def test_consume_prefix_lets_a_bare_model_load_a_wrapped_state_dict():
    import ember

    wrapped = ember.nn.DataParallel(ember.nn.Linear(2, 3))
    state = wrapped.state_dict()
    ours.consume_prefix_in_state_dict_if_present(state, "module.")
    bare = ember.nn.Linear(2, 3)
    bare.load_state_dict(state)
    assert ember.equal(bare.weight, wrapped.module.weight)


def test_reachable_as_an_attribute_as_in_torch():
    import ember

    assert ember.nn.modules.utils is ours
    assert torch.nn.modules.utils is theirs
