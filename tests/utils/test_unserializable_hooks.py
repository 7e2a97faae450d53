"""Saving a tensor drops its hooks, as torch does, and says so unless the hook is marked unserializable."""
import io
import pickle
import warnings

import pytest
import torch

import ember


def _warnings_of_saving(lib, mark: bool, save) -> list:
    t = lib.ones(2, requires_grad=True)
    hook = lambda g: g * 2  # noqa: E731
    t.register_hook(lib.utils.hooks.unserializable_hook(hook) if mark else hook)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        restored = save(lib, t)
    restored.sum().backward()
    messages = [" ".join(str(w.message).replace(lib.__name__, "LIB").split()) for w in caught]
    return [m.replace(repr(hook), "HOOK") for m in messages], restored.grad


SAVES = {"pickle": lambda lib, t: pickle.loads(pickle.dumps(t)),
         "save": lambda lib, t: (lambda b: (lib.save(t, b), b.seek(0), lib.load(b))[2])(io.BytesIO())}


@pytest.mark.parametrize("mark", [False, True], ids=["plain hook", "marked hook"])
@pytest.mark.parametrize("save", SAVES.values(), ids=SAVES.keys())
def test_saving_a_tensor_with_a_hook_warns_and_drops_it_as_torch(save, mark):
    (mine, my_grad), (theirs, their_grad) = _warnings_of_saving(ember, mark, save), _warnings_of_saving(torch, mark, save)
    assert mine == theirs
    assert my_grad.tolist() == their_grad.tolist() == [1.0, 1.0]  # the hook (which doubles) did not come back
    assert bool(mine) is not mark
