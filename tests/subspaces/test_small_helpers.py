"""Helpers of nn.utils.rnn, optim, random and utils.checkpoint against torch's."""
import warnings

import pytest
import torch

import ember


@pytest.mark.parametrize("perm", [[2, 0, 1], [0], [3, 1, 0, 2], []])
def test_invert_permutation_as_torch(perm):
    mine = ember.nn.utils.rnn.invert_permutation(ember.tensor(perm, dtype=ember.int64))
    theirs = torch.nn.utils.rnn.invert_permutation(torch.tensor(perm, dtype=torch.int64))
    assert mine.tolist() == theirs.tolist() and str(mine.dtype) == str(theirs.dtype).replace("torch", "ember")
    assert ember.nn.utils.rnn.invert_permutation(None) is None is torch.nn.utils.rnn.invert_permutation(None)


def test_packed_sequence_base_and_bind_as_torch():
    for lib in (torch, ember):
        rnn = lib.nn.utils.rnn
        assert issubclass(rnn.PackedSequence, rnn.PackedSequence_) and issubclass(rnn.PackedSequence_, tuple)
        assert rnn.PackedSequence_._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        assert rnn.bind(None, len) is None and rnn.bind([1, 2], len) == 2


def _swap_run(lib, state_of):
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.Adam([p], lr=0.1)
    p.grad = lib.tensor([0.5, 0.25])
    opt.step()
    before_groups = [dict(g) for g in opt.param_groups]
    live_state = opt.state
    other = lib.nn.Parameter(lib.tensor([3.0, 4.0]))
    other.grad = lib.tensor([1.0, 1.0])
    given = state_of(opt, lib)
    with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, given):
        assert opt.param_groups[0]["params"][0] is other
        opt.step()
    assert opt.state is live_state and [dict(g) for g in opt.param_groups] == before_groups
    return other.tolist(), p.tolist(), given["param_groups"][0]["lr"]


def _changed_lr(opt, lib):
    given = opt.state_dict()
    given["param_groups"][0] = dict(given["param_groups"][0], lr=1.0)
    return given


@pytest.mark.parametrize("state_of", [lambda opt, lib: opt.state_dict(), _changed_lr], ids=["same", "lr"])
def test_swap_in_optimizer_params_and_state_as_torch(state_of):
    mine, theirs = _swap_run(ember, state_of), _swap_run(torch, state_of)
    assert mine[0] == pytest.approx(theirs[0]) and mine[1] == pytest.approx(theirs[1]) and mine[2] == theirs[2]


@pytest.mark.parametrize("broken", [
    lambda opt: "not a dict",
    lambda opt: {"state": {}, "param_groups": "x"},
    lambda opt: {"state": [], "param_groups": opt.state_dict()["param_groups"]},
    lambda opt: {"state": {0: {}, 7: {}}, "param_groups": opt.state_dict()["param_groups"]},
    lambda opt: {"state": {}, "param_groups": []},
])
def test_swap_in_refuses_what_torch_refuses(broken):
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        with pytest.raises(RuntimeError):  # no state yet
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, opt.state_dict()):
                pass
        p.grad = lib.ones(2)
        opt.step()
        with pytest.raises(RuntimeError):
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, broken(opt)):
                pass


def test_random_names_as_torch():
    assert ember.random.default_generator is ember.default_generator
    assert torch.random.default_generator is torch.default_generator
    assert ember.random.thread_safe_generator() is None is torch.random.thread_safe_generator()
    assert set(torch.random.__all__) <= set(ember.random.__all__)


def test_checkpoint_helpers_as_torch():
    for lib in (torch, ember):
        cp = lib.utils.checkpoint
        x = lib.ones(2, requires_grad=True) * 2
        y, n = cp.detach_variable((x, 3))
        assert y.requires_grad and y.grad_fn is None and n == 3
        with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
            cp.detach_variable([x])
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            cp.check_backward_validity([lib.ones(1), 2])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cp.check_backward_validity([x])
        assert cp.get_device_states(lib.ones(1), [lib.zeros(2)]) == ([], [])
        assert cp.set_device_states([], []) is None
        forward, recompute = cp.noop_context_fn()
        with forward, recompute:
            pass
        assert cp.DefaultDeviceType.get_device_type() == "cpu"
        cp.DefaultDeviceType.set_device_type("meta")
        assert cp.DefaultDeviceType.get_device_type() == "meta"
        cp.DefaultDeviceType.set_device_type("cpu")
    assert [(m.name, m.value) for m in ember.utils.checkpoint.CheckpointPolicy] == \
        [(m.name, m.value) for m in torch.utils.checkpoint.CheckpointPolicy]


def test_checkpoint_runs_with_noop_context_fn_as_torch():
    grads = []
    for lib in (torch, ember):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False,
                                              context_fn=lib.utils.checkpoint.noop_context_fn)
        out.backward()
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1])
