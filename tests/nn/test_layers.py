"""Parameter, the layers, nn.functional and nn.init against torch."""
import copy
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember import nn
from ember.nn import functional as F
from ember.overrides import TorchFunctionMode, resolve_name


def both(array, requires_grad=False):
    """The same float64 values as an ember and a torch tensor."""
    array = np.asarray(array, dtype=np.float64)
    return (ember.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def close(e, t, **kw):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **{"rtol": 1e-10, "atol": 1e-12, **kw})


# ---------------------------------------------------------------------------------------------- Parameter


def test_parameter_repr_matches_torch():
    for args in [([1.0, 2.0],), ([[1.5]],), (3.0,)]:
        e = nn.Parameter(ember.tensor(*args))
        t = torch.nn.Parameter(torch.tensor(*args))
        assert repr(e) == repr(t)
    assert repr(nn.Parameter(ember.ones(2), requires_grad=False)) == repr(torch.nn.Parameter(torch.ones(2), False))
    assert repr(nn.Parameter()) == repr(torch.nn.Parameter())


def test_parameter_is_a_leaf_sharing_memory_and_ops_give_plain_tensors():
    data = ember.zeros(3)
    p = nn.Parameter(data)
    assert p.is_leaf and p.requires_grad and isinstance(p, ember.Tensor)
    data[0] = 5.0  # shares memory with the tensor it was made from
    assert p[0].item() == 5.0
    for result in (p * 2, p.data, p.detach(), p.clone(), ember.add(p, 1), p.t() if p.dim() == 2 else p.view(3)):
        assert type(result) is ember.Tensor
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Parameter([1.0, 2.0])


def test_parameter_skips_torch_function_dispatch():
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(types)
            return func(*args, **(kwargs or {}))

    p = nn.Parameter(ember.ones(2))
    with Spy():
        p + 1
    assert seen == [()]  # a mode still runs, but Parameter is not a type that takes part


def test_parameter_deepcopy_like_torch():
    e, t = nn.Parameter(ember.ones(2)), torch.nn.Parameter(torch.ones(2))
    e.grad, t.grad = ember.ones(2), torch.ones(2)
    ce, ct = copy.deepcopy(e), copy.deepcopy(t)
    assert type(ce) is nn.Parameter and ce.requires_grad == ct.requires_grad
    assert (ce.grad is None) == (ct.grad is None)
    ce.data[0] = 3.0
    assert e[0].item() == 1.0
    frozen = copy.deepcopy(nn.Parameter(ember.ones(1), requires_grad=False))
    assert not frozen.requires_grad


def test_parameter_integer_data_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(ember.tensor([1, 2]))
    assert nn.Parameter(ember.tensor([1, 2]), requires_grad=False).dtype == ember.int64


# ---------------------------------------------------------------------------------------------- Linear


def test_linear_shapes_repr_and_state_dict_match_torch():
    for args in [(3, 2), (4, 1, False), (1, 5)]:
        e, t = nn.Linear(*args), torch.nn.Linear(*args)
        assert repr(e) == repr(t)
        assert list(e.state_dict()) == list(t.state_dict())
        assert [tuple(p.shape) for p in e.parameters()] == [tuple(p.shape) for p in t.parameters()]
        assert all(type(p) is nn.Parameter and p.requires_grad for p in e.parameters())


def test_linear_initialisation_bounds_and_spread():
    ember.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives ±1/sqrt(fan_in); the bias uses the same
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)  # uniform: std = bound / sqrt(3)
    assert w.min() < -0.95 * bound and w.max() > 0.95 * bound
    assert layer.weight.dtype == ember.float32
    assert nn.Linear(2, 2, dtype=ember.float64).weight.dtype == ember.float64


def test_linear_with_zero_inputs_warns_and_zeroes_the_bias():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        layer = nn.Linear(0, 3)
    assert layer.bias.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("shape", [(5, 3), (3,), (2, 4, 3), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_and_backward_match_torch(shape, bias):
    rng = np.random.default_rng(0)
    t = torch.nn.Linear(3, 2, bias=bias).double()
    e = nn.Linear(3, 2, bias=bias).double()
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    xe, xt = both(rng.normal(size=shape), requires_grad=True)
    ye, yt = e(xe), t(xt)
    close(ye, yt)
    gy = rng.normal(size=yt.shape)
    ye.backward(ember.tensor(gy))
    yt.backward(torch.tensor(gy))
    close(xe.grad, xt.grad)
    for (name, pe), (_, pt) in zip(e.named_parameters(), t.named_parameters()):
        close(pe.grad, pt.grad, err_msg=name)


def test_linear_accepts_a_non_contiguous_input():
    e = nn.Linear(3, 2).double()
    x = ember.tensor(np.arange(12.0).reshape(3, 4))
    np.testing.assert_allclose(e(x.t()[:, :3]).detach().numpy(), e(x.t()[:, :3].contiguous()).detach().numpy())


def _graph(fn, depth: int = 3) -> str:
    if fn is None or depth == 0:
        return str(None if fn is None else fn.name().replace("torch::autograd::", ""))
    inner = ", ".join(_graph(f, depth - 1) for f, _ in fn.next_functions)
    return f"{fn.name().replace('torch::autograd::', '')}({inner})"


@pytest.mark.parametrize("shape", [(2, 3), (0, 3), (3,), (5, 2, 3)])
def test_linear_records_torchs_graph_and_gradients(shape):
    """As torch: addmm of the bias, the input (flattened to a matrix) and weight.t(); then viewed back."""
    results = {}
    for lib in (torch, ember):
        gen = np.random.default_rng(0)
        x = lib.tensor(gen.standard_normal(shape), requires_grad=True)
        w = lib.tensor(gen.standard_normal((4, 3)), requires_grad=True)
        b = lib.tensor(gen.standard_normal(4), requires_grad=True)
        out = lib.nn.functional.linear(x, w, b)
        (out * out).sum().backward()
        results[lib.__name__] = (_graph(out.grad_fn), out.detach().numpy(), x.grad.numpy(), w.grad.numpy(),
                                 b.grad.numpy())
    (graph_t, *values_t), (graph_e, *values_e) = results["torch"], results["ember"]
    assert graph_e == graph_t
    for e, t in zip(values_e, values_t):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------- activations


@pytest.mark.parametrize("name", ["ReLU", "Sigmoid", "Tanh"])
@pytest.mark.parametrize("shape", [(), (0,), (3, 4)])
def test_activations_match_torch(name, shape):
    values = np.random.default_rng(1).normal(size=shape)
    xe, xt = both(values, requires_grad=True)
    ye, yt = getattr(nn, name)()(xe), getattr(torch.nn, name)()(xt)
    close(ye, yt)
    ye.sum().backward()
    yt.sum().backward()
    close(xe.grad, xt.grad)
    assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())


def test_relu_inplace_writes_into_its_input():
    x = ember.tensor([-1.0, 2.0])
    y = nn.ReLU(inplace=True)(x)
    assert y is x and x.tolist() == [0.0, 2.0]
    assert repr(nn.ReLU(inplace=True)) == repr(torch.nn.ReLU(inplace=True))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-20, 20), min_size=1, max_size=6))
def test_functional_activations_against_torch(values):
    xe, xt = both(values)
    for name in ("relu", "sigmoid", "tanh"):
        close(getattr(F, name)(xe), getattr(torch.nn.functional, name)(xt), rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------------------------------------- MSELoss


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the mean of nothing is nan, quietly, as in torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (0, 2)])
def test_mse_loss_matches_torch(reduction, shape):
    rng = np.random.default_rng(2)
    xe, xt = both(rng.normal(size=shape), requires_grad=True)
    ye, yt = both(rng.normal(size=shape))
    le, lt = nn.MSELoss(reduction=reduction)(xe, ye), torch.nn.MSELoss(reduction=reduction)(xt, yt)
    close(le, lt, equal_nan=True)
    if le.numel():
        le.sum().backward()
        lt.sum().backward()
        close(xe.grad, xt.grad)


def test_mse_loss_broadcasts_with_a_warning_like_torch():
    xe, xt = both([[1.0], [2.0]])
    ye, yt = both([0.0, 1.0, 3.0])
    with pytest.warns(UserWarning, match=r"Using a target size \(ember.Size\(\[3\]\)\) that is different"):
        le = F.mse_loss(xe, ye, reduction="none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lt = torch.nn.functional.mse_loss(xt, yt, reduction="none")
    close(le, lt)


def test_mse_loss_is_one_node_and_refuses_integers_as_torch():
    x = ember.ones(3, requires_grad=True)
    loss = F.mse_loss(x, ember.zeros(3))
    assert loss.grad_fn.name() == "MseLossBackward0" and len(loss.grad_fn.next_functions) == 2
    for lib in (ember, torch):
        with pytest.raises(NotImplementedError, match="not implemented for"):
            lib.nn.functional.mse_loss(lib.ones(3, dtype=lib.int64), lib.zeros(3, dtype=lib.int64))


def test_mse_loss_warning_points_at_the_caller():
    with pytest.warns(UserWarning) as record:
        F.mse_loss(ember.ones(2, 3), ember.zeros(3))
        F.mse_loss(ember.ones(2, 3), ember.zeros(3), reduction="none")  # keywords take another dispatch frame
    assert [w.filename for w in record] == [__file__, __file__]


def test_mse_loss_gradients_of_broadcast_operands_match_torch():
    rng = np.random.default_rng(3)
    xe, xt = both(rng.normal(size=(3, 1)), requires_grad=True)
    ye, yt = both(rng.normal(size=(2,)), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F.mse_loss(xe, ye).backward()
        torch.nn.functional.mse_loss(xt, yt).backward()
    close(xe.grad, xt.grad)
    close(ye.grad, yt.grad)


def test_mse_loss_weighted_and_legacy_arguments_match_torch():
    rng = np.random.default_rng(3)
    (xe, xt), (ye, yt), (we, wt) = both(rng.normal(size=4)), both(rng.normal(size=4)), both(rng.uniform(size=4))
    for reduction in ("mean", "sum", "none"):
        close(F.mse_loss(xe, ye, reduction=reduction, weight=we),
              torch.nn.functional.mse_loss(xt, yt, reduction=reduction, weight=wt))
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(xe, ye, weight=ember.ones(2))
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = nn.MSELoss(size_average=False)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        torch_loss = torch.nn.MSELoss(size_average=False)
    assert loss.reduction == torch_loss.reduction == "sum"
    with pytest.warns(UserWarning):
        close(F.mse_loss(xe, ye, reduce=False), torch.nn.functional.mse_loss(xt, yt, reduce=False))


def test_mse_loss_rejects_an_unknown_reduction():
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.mse_loss(ember.ones(2), ember.ones(2), reduction="avg")


# ---------------------------------------------------------------------------------------------- dispatch


@pytest.mark.parametrize("name, args", [
    ("linear", (ember.ones(2, 3), ember.ones(1, 3))),
    ("relu", (ember.ones(2),)), ("sigmoid", (ember.ones(2),)), ("tanh", (ember.ones(2),)),
    ("mse_loss", (ember.ones(2), ember.zeros(2))),
])
def test_functional_dispatches_through_torch_function(name, args):
    class Wrapped:
        def __init__(self, t):
            self.t = t

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return resolve_name(func)

    assert getattr(F, name)(Wrapped(args[0]), *args[1:]) == f"ember.nn.functional.{name}"
    by_namespace = {getattr(k, "__name__", k): v for k, v in ember.overrides.get_overridable_functions().items()}
    assert getattr(F, name) in by_namespace["ember.nn.functional"]


# ---------------------------------------------------------------------------------------------- containers


def test_sequential_indexing_slicing_and_mutation_like_torch():
    def ops(lib):
        s = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.Sigmoid())
        out = [repr(s[1:]), repr(s[-1]), len(s)]
        del s[0]
        out.append(repr(s))
        s.append(lib.nn.ReLU())
        s.insert(1, lib.nn.Linear(1, 1))
        s[0] = lib.nn.Sigmoid()
        out.append(repr(s))
        with pytest.raises(IndexError) as info:
            s[7]
        out.append(str(info.value))
        named = lib.nn.Sequential(OrderedDict([("a", lib.nn.ReLU()), ("b", lib.nn.Tanh())]))
        out.append(repr(named))
        return out

    assert ops(ember) == ops(torch)


def test_sequential_forward_matches_torch():
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
    e = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t.state_dict().items()})
    xe, xt = both(np.random.default_rng(4).normal(size=(5, 3)))
    close(e(xe), t(xt))


def test_modulelist_like_torch():
    def ops(lib):
        ml = lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.Linear(2, 2)])
        ml.append(lib.nn.Tanh())
        ml += [lib.nn.Sigmoid()]
        ml.extend([lib.nn.ReLU()])
        out = [repr(ml), repr(ml[1:3]), len(ml), repr(ml + lib.nn.ModuleList([lib.nn.Tanh()]))]
        del ml[0]
        out.append(list(ml._modules))
        out.append(sum(p.numel() for p in ml.parameters()))
        out.append(repr(lib.nn.ModuleList()))
        with pytest.raises(TypeError) as info:
            ml.append(3)
        out.append(str(info.value))
        return out

    assert ops(ember) == ops(torch)
    with pytest.raises(NotImplementedError, match=r'Module \[ModuleList\] is missing the required "forward"'):
        nn.ModuleList()(ember.ones(1))


def test_moduledict_like_torch():
    def ops(lib):
        d = lib.nn.ModuleDict({"b": lib.nn.ReLU(), "a": lib.nn.Linear(2, 1)})
        d.update([("c", lib.nn.Sigmoid())])
        d["z"] = lib.nn.Tanh()
        out = [repr(d), list(d), list(d.keys()), len(d), "a" in d, "q" in d, repr(d.pop("b")), list(d)]
        out.append([n for n, _ in d.named_parameters()])
        out.append([(k, repr(v)) for k, v in d.items()] == [(k, repr(v)) for k, v in zip(d.keys(), d.values())])
        with pytest.raises(KeyError) as info:
            d["q"]
        out.append(str(info.value))
        d.clear()
        out.append(repr(d))
        return out

    assert ops(ember) == ops(torch)


# ---------------------------------------------------------------------------------------------- init


def test_fans_and_gains_match_torch():
    for shape in [(4, 3), (4, 3, 2, 5), (1, 7, 3)]:
        assert nn.init._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for args in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                 ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu",)]:
        assert nn.init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args), rel=1e-15)


@pytest.mark.parametrize("call, error, message", [
    (lambda lib: lib.nn.init.calculate_gain("softplus"), ValueError, "Unsupported nonlinearity softplus"),
    (lambda lib: lib.nn.init.calculate_gain("leaky_relu", True), ValueError, "negative_slope True not a valid number"),
    (lambda lib: lib.nn.init.xavier_uniform_(lib.empty(3)), ValueError, "Fan in and fan out can not be computed"),
    (lambda lib: lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan"), ValueError, "Mode fan not supported"),
    (lambda lib: lib.nn.init.eye_(lib.empty(3)), ValueError, "Only tensors with 2 dimensions are supported"),
])
def test_init_errors_match_torch(call, error, message):
    for lib in (torch, ember):
        with pytest.raises(error, match=message):
            call(lib)


def test_deterministic_inits_match_torch():
    for name, args in [("constant_", (0.25,)), ("zeros_", ()), ("ones_", ()), ("eye_", ())]:
        for shape in [(2, 3), (3, 3), (3, 2)]:
            e, t = ember.empty(*shape), torch.empty(*shape)
            assert getattr(nn.init, name)(e, *args) is e
            getattr(torch.nn.init, name)(t, *args)
            np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("name, kwargs, expected_std", [
    ("uniform_", dict(a=-2.0, b=2.0), 4 / math.sqrt(12)),
    ("normal_", dict(mean=0.0, std=0.3), 0.3),
    ("xavier_uniform_", dict(gain=2.0), 2.0 * math.sqrt(2 / (200 + 100))),
    ("xavier_normal_", {}, math.sqrt(2 / (200 + 100))),
    ("kaiming_uniform_", dict(nonlinearity="relu"), math.sqrt(2) / math.sqrt(100)),
    ("kaiming_normal_", dict(mode="fan_out", nonlinearity="relu"), math.sqrt(2) / math.sqrt(200)),
    ("kaiming_uniform_", dict(a=math.sqrt(5)), 1 / math.sqrt(3 * 100)),
])
def test_random_inits_have_torchs_spread(name, kwargs, expected_std):
    ember.manual_seed(0)
    e = getattr(nn.init, name)(ember.empty(200, 100, dtype=ember.float64), **kwargs)
    assert e.numpy().std() == pytest.approx(expected_std, rel=0.03)
    t = getattr(torch.nn.init, name)(torch.empty(200, 100, dtype=torch.float64), **kwargs)
    assert e.numpy().std() == pytest.approx(t.numpy().std(), rel=0.05)
    if name.endswith("uniform_"):
        bound = expected_std * math.sqrt(3)
        assert np.abs(e.numpy()).max() <= bound + 1e-12


def test_inits_do_not_record_on_parameters_and_honour_generators():
    p = nn.Parameter(ember.empty(3, 4))
    for init in (nn.init.uniform_, nn.init.normal_, nn.init.xavier_uniform_, nn.init.kaiming_normal_,
                 nn.init.zeros_, nn.init.eye_):
        assert init(p) is p
        assert p.is_leaf and p.grad_fn is None and p.requires_grad
    a = nn.init.normal_(ember.empty(5), generator=ember.Generator().manual_seed(7))
    b = nn.init.normal_(ember.empty(5), generator=ember.Generator().manual_seed(7))
    assert a.tolist() == b.tolist()


# ---------------------------------------------------------------------------------------------- gradcheck


def _inputs(*shapes, seed=0):
    generator = ember.Generator().manual_seed(seed)
    return tuple(ember.randn(s, generator=generator, dtype=ember.float64, requires_grad=True) for s in shapes)


@pytest.mark.parametrize("function, shapes", [
    (F.linear, [(4, 3), (2, 3), (2,)]),
    (F.linear, [(3,), (2, 3)]),
    (F.linear, [(2, 4, 3), (2, 3), (2,)]),
    (lambda x, t: F.mse_loss(x, t), [(3, 2), (3, 2)]),
    (lambda x, t: F.mse_loss(x, t, reduction="sum"), [(), ()]),
    (lambda x, t: F.mse_loss(x, t, reduction="none"), [(3, 1), (3, 1)]),
    (lambda x, t: F.mse_loss(x, t), [(3, 1), (2,)]),
    (lambda x, t, w: F.mse_loss(x, t, weight=w.abs() + 0.1), [(4,), (4,), (4,)]),
    (F.sigmoid, [(2, 3)]),
    (F.tanh, [(2, 3)]),
    (lambda x: F.relu(x + x.sign() * 0.5), [(2, 3)]),  # kept away from the kink at 0
], ids=["linear", "linear-1d", "linear-batched", "mse-mean", "mse-sum-0d", "mse-none", "mse-broadcast", "mse-weighted",
        "sigmoid", "tanh", "relu"])
@pytest.mark.filterwarnings("ignore:Using a target size")  # mse-broadcast broadcasts on purpose
def test_functional_composites_pass_gradcheck_and_gradgradcheck(function, shapes):
    inputs = _inputs(*shapes)
    assert ember.autograd.gradcheck(function, inputs)
    assert ember.autograd.gradgradcheck(function, inputs)
