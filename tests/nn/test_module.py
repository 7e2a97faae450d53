"""nn.Module and nn.Parameter against torch: registration, traversal, state_dict, hooks, repr, errors."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember


def build_net(lib):
    """The same small model in either library: nested, with a shared layer, a None bias and buffers."""

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(3, 3)
            self.gate = lib.nn.Linear(3, 3, bias=False)
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.fc(x) * self.gate(x).sigmoid() + self.running

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(3, 2))
            self.tied = self.block.fc  # the same layer under a second name
            self.scale = lib.nn.Parameter(lib.ones(1))

        def forward(self, x):
            return self.head(self.block(x)) * self.scale

    return Net()


def copy_weights(src, dst):
    """Give the ember model ``dst`` the torch model ``src``'s values."""
    for (name, t), (ename, e) in zip(src.state_dict(keep_vars=True).items(), dst.state_dict(keep_vars=True).items()):
        assert name == ename
        e.data = ember.tensor(t.detach().numpy().copy())


@pytest.fixture
def nets():
    torch.manual_seed(0)
    t, e = build_net(torch), build_net(ember)
    copy_weights(t, e)
    return t, e


def names(pairs):
    return [name for name, _ in pairs]


def test_traversal_names_match_torch(nets):
    t, e = nets
    assert names(e.named_parameters()) == names(t.named_parameters())
    assert names(e.named_parameters(remove_duplicate=False)) == names(t.named_parameters(remove_duplicate=False))
    assert names(e.named_parameters(recurse=False)) == names(t.named_parameters(recurse=False))
    assert names(e.named_parameters(prefix="model")) == names(t.named_parameters(prefix="model"))
    assert names(e.named_buffers()) == names(t.named_buffers())
    assert names(e.named_children()) == names(t.named_children())
    assert names(e.named_modules()) == names(t.named_modules())
    assert names(e.named_modules(remove_duplicate=False)) == names(t.named_modules(remove_duplicate=False))
    assert [type(m).__name__ for m in e.modules()] == [type(m).__name__ for m in t.modules()]
    assert len(list(e.children())) == len(list(t.children()))
    assert sum(p.numel() for p in e.parameters()) == sum(p.numel() for p in t.parameters()) == 30


def test_state_dict_keys_values_and_detach(nets):
    t, e = nets
    sd = e.state_dict()
    assert list(sd) == list(t.state_dict())
    for key, value in t.state_dict().items():
        np.testing.assert_array_equal(sd[key].numpy(), value.numpy())
    assert not sd["scale"].requires_grad and type(sd["scale"]) is ember.Tensor
    assert isinstance(e.state_dict(keep_vars=True)["scale"], ember.nn.Parameter)
    assert list(e.state_dict(prefix="m.")) == list(t.state_dict(prefix="m."))


def test_forward_and_gradients_match_torch(nets):
    t, e = nets
    x = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    tout, eout = t(torch.tensor(x)), e(ember.tensor(x))
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    tout.pow(2).sum().backward()
    eout.pow(2).sum().backward()
    for (name, tp), (_, ep) in zip(t.named_parameters(), e.named_parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_load_state_dict_round_trip():
    a, b = build_net(ember), build_net(ember)
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(pa.detach().numpy(), pb.detach().numpy(), err_msg=name)
    assert b.state_dict()["scale"] is not a.state_dict()["scale"]  # copied, not shared


def _load_error(lib, mutate, strict=True):
    net = build_net(lib)
    sd = net.state_dict()
    mutate(lib, sd)
    try:
        return net.load_state_dict(sd, strict=strict)
    except RuntimeError as error:
        return str(error).replace("torch.", "ember.").replace("Tensor", "Tensor")


def _drop_and_add(lib, sd):
    del sd["block.running"]
    del sd["scale"]
    sd["block.extra"] = lib.zeros(1)
    sd["nowhere.weight"] = lib.zeros(1)


def _wrong_shape(lib, sd):
    sd["head.1.bias"] = lib.zeros(5)


@pytest.mark.parametrize("mutate", [_drop_and_add, _wrong_shape])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_errors_match_torch(mutate, strict):
    expected = _load_error(torch, mutate, strict)
    actual = _load_error(ember, mutate, strict)
    assert str(actual) == str(expected).replace("torch.", "ember.")


def test_load_state_dict_rejects_non_mapping():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        build_net(ember).load_state_dict([1, 2])


def test_load_state_dict_assign_replaces_parameters():
    net = ember.nn.Linear(2, 1)
    new_weight = ember.ones(1, 2)
    net.load_state_dict({"weight": new_weight, "bias": ember.zeros(1)}, assign=True)
    assert isinstance(net.weight, ember.nn.Parameter) and net.weight.requires_grad
    assert net.weight.tolist() == [[1.0, 1.0]]


def test_repr_matches_torch(nets):
    t, e = nets
    assert repr(e) == repr(t)
    assert repr(ember.nn.Module()) == repr(torch.nn.Module()) == "Module()"


def test_repr_multiline_extra_repr_and_none_child():
    def make(lib):
        class Odd(lib.nn.Module):
            def extra_repr(self):
                return "a=1\nb=2"

        m = lib.nn.Module()
        m.add_module("odd", Odd())
        m.add_module("empty", None)
        m.single = Odd()
        m.single.add_module("leaf", lib.nn.Tanh())
        return m

    assert repr(make(ember)) == repr(make(torch))


def test_modulelist_repr_groups_identical_children():
    def make(lib):
        inner = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())
        return lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.ReLU(), inner, lib.nn.Sigmoid(), lib.nn.ReLU(), lib.nn.ReLU()])

    assert repr(make(ember)) == repr(make(torch))


def test_setattr_moves_names_between_kinds():
    m = ember.nn.Module()
    m.x = ember.nn.Parameter(ember.ones(1))
    assert "x" in m._parameters
    with pytest.raises(TypeError, match="cannot assign 'ember.nn.modules.linear.Linear' as parameter 'x'"):
        m.x = ember.nn.Linear(1, 1)  # a parameter's slot takes only parameters (or None), as in torch
    del m.x
    m.x = ember.nn.Linear(1, 1)
    assert "x" in m._modules and "x" not in m._parameters
    m.x = ember.nn.Parameter(ember.ones(1))  # but a parameter may replace a module
    assert "x" in m._parameters and "x" not in m._modules
    del m.x
    m.x = ember.nn.Linear(1, 1)
    m.x = None  # None keeps the slot
    assert m._modules["x"] is None and m.x is None
    m.register_buffer("b", ember.zeros(1))
    m.b = ember.ones(1)
    assert m._buffers["b"].tolist() == [1.0]
    m.plain = 3
    assert m.__dict__["plain"] == 3


@pytest.mark.parametrize("action, error", [
    (lambda lib, m: setattr(m, "w", lib.ones(1)), TypeError),  # a plain tensor over a parameter
    (lambda lib, m: setattr(m, "child", 3), TypeError),
    (lambda lib, m: setattr(m, "buf", "text"), TypeError),
    (lambda lib, m: m.register_parameter("x.y", None), KeyError),
    (lambda lib, m: m.register_parameter("", None), KeyError),
    (lambda lib, m: m.register_parameter("plain", None), KeyError),
    (lambda lib, m: m.register_parameter("p", lib.ones(1)), TypeError),
    (lambda lib, m: m.register_parameter(1, None), TypeError),
    (lambda lib, m: m.register_buffer("b", 3), TypeError),
    (lambda lib, m: m.register_buffer("a.b", None), KeyError),
    (lambda lib, m: m.add_module("c", 3), TypeError),
    (lambda lib, m: m.add_module("a.b", None), KeyError),
    (lambda lib, m: m.add_module("plain", lib.nn.ReLU()), KeyError),
    (lambda lib, m: m.missing, AttributeError),
    (lambda lib, m: m(), NotImplementedError),
    (lambda lib, m: m.train("yes"), ValueError),
    (lambda lib, m: m.to(lib.int64), TypeError),
    (lambda lib, m: lib.nn.Module(3), TypeError),
])
def test_errors_match_torch(action, error):
    def run(lib):
        m = lib.nn.Module()
        m.w = lib.nn.Parameter(lib.ones(1))
        m.child = lib.nn.ReLU()
        m.register_buffer("buf", lib.zeros(1))
        m.plain = 1
        with pytest.raises(error) as info:
            action(lib, m)
        return str(info.value)

    # ember has no nn.Buffer class, so its buffer messages name only Tensor.
    expected = run(torch).replace("torch.nn.Buffer, ", "").replace("torch Tensor", "ember.Tensor")
    expected = expected.replace("torch.", "ember.")
    actual = run(ember)
    if error is TypeError and "Module.__init__" in actual:
        return  # Python's own message for torch; ember explains the fix instead
    assert actual == expected


def test_non_leaf_parameter_assignment_is_refused():
    m = ember.nn.Module()
    w = ember.nn.Parameter(ember.ones(1))
    fake = ember.nn.Parameter(ember.ones(1))
    fake._grad_fn = (w * 2).grad_fn  # what a parameter computed from another tensor would look like
    with pytest.raises(ValueError, match="non-leaf Tensor to parameter 'p'"):
        m.register_parameter("p", fake)


def test_assigning_before_init_is_an_error():
    for lib in (torch, ember):
        class Early(lib.nn.Module):
            def __init__(self):
                self.w = lib.nn.Parameter(lib.ones(1))

        with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
            Early()


def test_delattr_and_dir():
    m = build_net(ember)
    assert {"block", "head", "scale", "forward", "training"} <= set(dir(m))
    assert "0" not in dir(m.head)
    del m.scale
    assert "scale" not in dict(m.named_parameters())
    del m.block.running
    assert "block.running" not in m.state_dict()
    m.plain = 1
    del m.plain
    with pytest.raises(AttributeError):
        m.plain


def test_train_eval_apply_and_requires_grad():
    m = build_net(ember)
    assert m.training and m.head[0].training
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    visited = []
    m.apply(lambda mod: visited.append(type(mod).__name__))
    t_visited = []
    build_net(torch).apply(lambda mod: t_visited.append(type(mod).__name__))
    assert visited == t_visited
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    m = ember.nn.Linear(2, 1)
    m(ember.ones(3, 2)).sum().backward()
    m.zero_grad(set_to_none=set_to_none)
    for p in m.parameters():
        if set_to_none:
            assert p.grad is None
        else:
            assert p.grad.tolist() == np.zeros(p.shape).tolist()


def test_to_double_keeps_parameter_identity_and_converts_buffers():
    m = build_net(ember)
    weight = m.block.fc.weight
    m.block.fc(ember.ones(1, 3)).sum().backward()
    assert m.double() is m
    assert m.block.fc.weight is weight and weight.dtype == ember.float64
    assert weight.grad.dtype == ember.float64
    assert m.block.running.dtype == ember.float64
    assert m(ember.ones(2, 3, dtype=ember.float64)).dtype == ember.float64
    assert m.float().block.fc.weight.dtype == ember.float32
    assert m.to(ember.float64).scale.dtype == ember.float64
    assert m.to("cpu") is m and m.cpu() is m
    assert m.to(ember.ones(1)).scale.dtype == ember.float32


def test_forward_hooks_order_and_replacement():
    def trace(lib):
        calls = []
        m = lib.nn.Linear(2, 2)
        m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)
        m.register_forward_pre_hook(lambda mod, args: args[0] * 0)  # a bare result replaces the args
        h = m.register_forward_hook(lambda mod, args, out: calls.append(("post", args[0].sum().item())))
        m.register_forward_hook(lambda mod, args, out: out + 1)
        with torch.no_grad():
            out = m(lib.ones(1, 2))
        h.remove()
        m(lib.ones(1, 2))
        return calls, out.sum().item() - m.bias.sum().item()  # the input was zeroed, then 1 added

    (ember_calls, ember_value), (torch_calls, torch_value) = trace(ember), trace(torch)
    assert ember_calls == torch_calls
    assert ember_value == pytest.approx(torch_value, abs=1e-6) == 2.0


def test_forward_hooks_with_kwargs():
    class Scale(ember.nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}), with_kwargs=True)
    seen = []
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs), with_kwargs=True)
    assert m(ember.ones(1)).tolist() == [3.0] and seen == [{"factor": 3.0}]
    m.register_forward_pre_hook(lambda mod, args, kwargs: "bad", with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(ember.ones(1))


class Picklable(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ember.nn.Linear(3, 3)
        self.tied = self.block
        self.scale = ember.nn.Parameter(ember.ones(1))


def test_deepcopy_and_pickle_of_a_module():
    m = build_net(ember)
    clone = copy.deepcopy(m)
    assert clone.tied is clone.block.fc  # sharing survives
    assert clone.block.fc.weight is not m.block.fc.weight
    assert isinstance(clone.scale, ember.nn.Parameter)
    assert repr(clone) == repr(m)
    m = Picklable()
    restored = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(restored.block.weight.detach().numpy(), m.block.weight.detach().numpy())
    assert restored.tied is restored.block
    assert isinstance(restored.scale, ember.nn.Parameter) and restored.scale.requires_grad


def test_modules_and_parameters_are_found_through_getattr():
    m = ember.nn.Sequential(OrderedDict(first=ember.nn.Linear(1, 1), second=ember.nn.Tanh()))
    assert m.first is m[0] and isinstance(m.second, ember.nn.Tanh)
    assert m.first.weight is m.first._parameters["weight"]


def test_always_call_forward_hooks_run_when_forward_raises():
    def run(lib):
        class Broken(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m, calls = Broken(), []
        m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
        m.register_forward_hook(lambda mod, args, out: 1 / 0, always_call=True)  # silenced, with a warning
        with pytest.warns(UserWarning, match=r"always_call=True(``)? raised an exception that was silenced"):
            with pytest.raises(ValueError, match="boom"):
                m(lib.ones(1))
        return calls

    assert run(ember) == run(torch) == [("always", None)]


@pytest.mark.parametrize("call", [
    "get_submodule('')", "get_submodule('block')", "get_submodule('head.1')", "get_submodule('tied')",
    "get_parameter('scale')", "get_parameter('block.fc.weight')", "get_parameter('head.1.bias')",
    "get_buffer('block.running')", "get_buffer('block.scratch')",
])
def test_dotted_paths_find_what_torch_finds(nets, call):
    t, e = nets
    found_t, found_e = eval(f"t.{call}"), eval(f"e.{call}")
    if isinstance(found_t, torch.nn.Module):
        assert repr(found_e) == repr(found_t)
    else:
        np.testing.assert_array_equal(found_e.detach().numpy(), found_t.detach().numpy())
        assert type(found_e).__name__ == type(found_t).__name__


@pytest.mark.parametrize("call", [
    "get_submodule('nothing')", "get_submodule('head.7')", "get_submodule('block.fc.weight')",
    "get_submodule('block.fc.weight.x')", "get_parameter('block.running')", "get_parameter('block.nothing')",
    "get_parameter('')", "get_buffer('scale')", "get_buffer('head.1.weight')", "get_buffer('block.zz')",
])
def test_dotted_path_errors_match_torch(nets, call):
    t, e = nets
    with pytest.raises(AttributeError) as expected:
        eval(f"t.{call}")
    with pytest.raises(AttributeError) as actual:
        eval(f"e.{call}")
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("input_shape, weight_shape", [((2, 4), (2, 3)), ((4,), (2, 3)), ((5, 2, 4), (2, 3)),
                                                       ((0, 4), (2, 3))])
def test_linear_with_the_wrong_number_of_features_says_so_as_torch(input_shape, weight_shape):
    with pytest.raises(RuntimeError) as expected:
        torch.nn.functional.linear(torch.ones(*input_shape), torch.ones(*weight_shape))
    with pytest.raises(RuntimeError) as actual:
        ember.nn.functional.linear(ember.ones(*input_shape), ember.ones(*weight_shape))
    assert str(expected.value) in str(actual.value)
    assert f"weight {list(weight_shape)}" in str(actual.value)
