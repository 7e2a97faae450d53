"""ember.nn.utils against torch.nn.utils: clipping, vectors, weight/spectral norm, parametrize, fusion, stateless."""
import copy
import io
import pickle
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

from twins import both, both_raise

RNG = np.random.default_rng(0)


def arrays(*shapes):
    return [RNG.standard_normal(shape) for shape in shapes]


def params(lib, values, grads=None):
    """Parameters of ``lib`` holding ``values`` (float64), with ``grads`` set as their ``.grad``."""
    out = [lib.nn.Parameter(lib.tensor(v)) for v in values]
    for p, g in zip(out, grads or []):
        p.grad = lib.tensor(g)
    return out


def close(e, t, **kw):
    np.testing.assert_allclose(np.asarray(e.detach().numpy()), t.detach().numpy(), **{"rtol": 1e-10, "atol": 1e-12,
                                                                                       **kw})


def linear_pair(in_features=3, out_features=4, dtype=np.float64):
    """An ember and a torch Linear with the same weights."""
    w, b = (a.astype(dtype) for a in arrays((out_features, in_features), (out_features,)))
    e, t = nn.Linear(in_features, out_features), torch.nn.Linear(in_features, out_features)
    e.weight, e.bias = nn.Parameter(ember.tensor(w)), nn.Parameter(ember.tensor(b))
    t.weight, t.bias = torch.nn.Parameter(torch.tensor(w)), torch.nn.Parameter(torch.tensor(b))
    return e, t


# ------------------------------------------------------------------------------------------------ clipping


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    values, grads = arrays((3, 2), (4,), (1,)), arrays((3, 2), (4,), (1,))
    e, t = params(ember, values, grads), params(torch, values, grads)
    e.append(nn.Parameter(ember.zeros(2)))  # a parameter without a gradient is skipped
    t.append(torch.nn.Parameter(torch.zeros(2)))
    close(nn.utils.clip_grad_norm_(e, max_norm, norm_type), torch.nn.utils.clip_grad_norm_(t, max_norm, norm_type))
    for pe, pt in zip(e[:3], t[:3]):
        close(pe.grad, pt.grad)
    assert e[3].grad is None


def test_clip_grad_norm_accepts_one_tensor_a_generator_and_foreach():
    e, t = params(ember, arrays((3,)), arrays((3,))), params(torch, arrays((3,)), arrays((3,)))
    for pe, pt in zip(e, t):
        pe.grad = ember.tensor(pt.grad.numpy())
    close(nn.utils.clip_grad_norm_(e[0], 0.1, foreach=True), torch.nn.utils.clip_grad_norm_(t[0], 0.1, foreach=True))
    close(nn.utils.clip_grad_norm_(iter(e), 0.01), torch.nn.utils.clip_grad_norm_(iter(t), 0.01))
    close(e[0].grad, t[0].grad)


def test_clip_grad_norm_of_nothing_is_zero():
    assert nn.utils.clip_grad_norm_([], 1.0).item() == torch.nn.utils.clip_grad_norm_([], 1.0).item() == 0.0


def test_clip_grad_norm_refuses_a_nonfinite_norm_only_when_asked():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(2))
        p.grad = lib.tensor([float("nan"), 1.0])
        with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
            lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        assert lib.nn.utils.clip_grad_norm_([p], 1.0).isnan()


def test_get_total_norm_and_clip_grads_with_norm_match_torch():
    values = arrays((2, 2), (3,))
    e, t = [ember.tensor(v) for v in values], [torch.tensor(v) for v in values]
    for norm_type in (2.0, 1.0, float("inf")):
        close(nn.utils.get_total_norm(e, norm_type), torch.nn.utils.get_total_norm(t, norm_type))
    pe, pt = params(ember, values, values), params(torch, values, values)
    nn.utils.clip_grads_with_norm_(pe, 1.0, ember.tensor(4.0))
    torch.nn.utils.clip_grads_with_norm_(pt, 1.0, torch.tensor(4.0))
    for a, b in zip(pe, pt):
        close(a.grad, b.grad)


def test_clip_grad_value_matches_torch():
    values, grads = arrays((3, 2), (4,)), arrays((3, 2), (4,))
    e, t = params(ember, values, grads), params(torch, values, grads)
    nn.utils.clip_grad_value_(e, 0.3)
    torch.nn.utils.clip_grad_value_(t, 0.3)
    for pe, pt in zip(e, t):
        close(pe.grad, pt.grad)
        assert pe.grad.abs().max().item() <= 0.3


# --------------------------------------------------------------------------------------- parameter vectors


def test_parameters_to_vector_and_back_match_torch_and_carry_gradients():
    e, t = linear_pair()
    ve, vt = nn.utils.parameters_to_vector(e.parameters()), torch.nn.utils.parameters_to_vector(t.parameters())
    close(ve, vt)
    (ve * ve).sum().backward()
    close(e.weight.grad, 2 * t.weight.detach())
    new = np.arange(ve.numel(), dtype=np.float64)
    nn.utils.vector_to_parameters(ember.tensor(new), e.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), t.parameters())
    close(e.weight, t.weight)
    close(e.bias, t.bias)
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="expected .*Tensor, but got"):
            lib.nn.utils.vector_to_parameters([1.0], [])


# ------------------------------------------------------------------------------------ weight normalisation


def quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return call(*args, **kwargs)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_hook_form_matches_torch(dim):
    e, t = linear_pair()
    quiet(nn.utils.weight_norm, e, dim=dim)
    quiet(torch.nn.utils.weight_norm, t, dim=dim)
    assert sorted(e.state_dict()) == sorted(t.state_dict())
    close(e.weight_g, t.weight_g)
    x = RNG.standard_normal((5, 3))
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    close(ye, yt)
    ye.sum().backward()
    yt.sum().backward()
    close(e.weight_g.grad, t.weight_g.grad)
    close(e.weight_v.grad, t.weight_v.grad)
    nn.utils.remove_weight_norm(e)
    torch.nn.utils.remove_weight_norm(t)
    assert sorted(e.state_dict()) == sorted(t.state_dict()) == ["bias", "weight"]
    close(e.weight, t.weight)


def test_weight_norm_warns_and_refuses_twice_and_remove_needs_it():
    with pytest.warns(FutureWarning, match="deprecated"):
        layer = nn.utils.weight_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        quiet(nn.utils.weight_norm, layer)
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
            lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_matches_torch(dim):
    e, t = linear_pair()
    nn.utils.parametrizations.weight_norm(e, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    assert list(e.state_dict()) == list(t.state_dict())
    close(e.parametrizations.weight.original0, t.parametrizations.weight.original0)
    close(e.weight, t.weight)
    x = RNG.standard_normal((5, 3))
    e(ember.tensor(x)).pow(2).sum().backward()
    t(torch.tensor(x)).pow(2).sum().backward()
    for name in ("original0", "original1"):
        close(getattr(e.parametrizations.weight, name).grad, getattr(t.parametrizations.weight, name).grad)


@pytest.mark.parametrize("form", ["hook", "parametrization"])
@pytest.mark.parametrize("name, dim, valid", [("bias", 0, True), ("bias", -1, True), ("weight", -2, True),
                                              ("bias", 1, False), ("weight", 2, False), ("weight", -3, False)])
def test_weight_norm_of_any_dim_matches_torch(form, name, dim, valid):
    def program(lib):
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor([[1.0, 2, 3], [4, 5, 6]]))
            layer.bias.copy_(lib.tensor([1.0, -2]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            if form == "hook":
                layer = lib.nn.utils.weight_norm(layer, name, dim)
                g = getattr(layer, name + "_g")
            else:
                layer = lib.nn.utils.parametrizations.weight_norm(layer, name, dim)
                g = layer.parametrizations[name].original0
        layer(lib.ones(1, 3)).sum().backward()
        return g, g.grad, getattr(layer, name)

    if valid:  # (a 1-D tensor's norm over every dim but its one is its absolute values)
        both(program)
    else:
        both_raise(program, IndexError, r"Dimension out of range \(expected to be in range of \[-\d, \d\], but got")


def test_weight_norm_value_passes_gradcheck_and_gradgradcheck():
    from ember.nn.utils._norms import weight_norm_value

    v = ember.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    g = ember.tensor(RNG.standard_normal((3, 1)), requires_grad=True)
    assert gradcheck(lambda v, g: weight_norm_value(v, g, 0), (v, g))
    assert gradgradcheck(lambda v, g: weight_norm_value(v, g, 0), (v, g))


# ---------------------------------------------------------------------------------- spectral normalisation


def copy_buffers(e, t, names):
    for owner_e, owner_t, name in names(e, t):
        getattr(owner_e, name).copy_(ember.tensor(getattr(owner_t, name).numpy()))


@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm_hook_form_matches_torch_given_the_same_start(training):
    e, t = linear_pair()
    nn.utils.spectral_norm(e, n_power_iterations=3)
    torch.nn.utils.spectral_norm(t, n_power_iterations=3)
    assert sorted(e.state_dict()) == sorted(t.state_dict())
    copy_buffers(e, t, lambda e, t: [(e, t, "weight_u"), (e, t, "weight_v")])
    e.train(training)
    t.train(training)
    x = RNG.standard_normal((5, 3))
    for _ in range(2):  # the second call starts from the refined u and v
        ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
        close(ye, yt, rtol=1e-8)
    close(e.weight_u, t.weight_u, rtol=1e-8)
    ye.sum().backward()
    yt.sum().backward()
    close(e.weight_orig.grad, t.weight_orig.grad, rtol=1e-8)
    nn.utils.remove_spectral_norm(e)
    torch.nn.utils.remove_spectral_norm(t)
    assert sorted(e.state_dict()) == sorted(t.state_dict()) == ["bias", "weight"]
    close(e.weight, t.weight, rtol=1e-8)


@pytest.mark.parametrize("training", [True, False])
def test_spectral_norm_parametrization_matches_torch_given_the_same_start(training):
    e, t = linear_pair()
    nn.utils.parametrizations.spectral_norm(e)
    torch.nn.utils.parametrizations.spectral_norm(t)
    assert list(e.state_dict()) == list(t.state_dict())
    copy_buffers(e, t, lambda e, t: [(e.parametrizations.weight[0], t.parametrizations.weight[0], n)
                                     for n in ("_u", "_v")])
    e.train(training)
    t.train(training)
    x = RNG.standard_normal((5, 3))
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    close(ye, yt, rtol=1e-8)
    ye.sum().backward()
    yt.sum().backward()
    close(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, rtol=1e-8)


def test_spectral_norm_records_its_version_and_reads_saves_from_before_it_kept_v():
    e, t = linear_pair(3, 3)
    nn.utils.spectral_norm(e)
    torch.nn.utils.spectral_norm(t)
    assert e.state_dict()._metadata == t.state_dict()._metadata
    # an old save: the normalised weight instead of weight_v, and no version
    w = np.array([[2.0, 1, 0.3], [1, 3, 1], [0.5, 1, 4]])
    old = {"bias": np.ones(3), "weight_orig": w, "weight_u": np.array([0.6, 0.8, 0.0]), "weight": w / 3}
    results = [m.load_state_dict({k: lib.tensor(v) for k, v in old.items()}) for m, lib in ((e, ember), (t, torch))]
    assert not results[0].missing_keys and not results[0].unexpected_keys and not results[1].unexpected_keys
    close(e.weight_v, t.weight_v, rtol=1e-8)
    nn.utils.remove_spectral_norm(e)
    torch.nn.utils.remove_spectral_norm(t)
    assert e.state_dict()._metadata == t.state_dict()._metadata == {"": {"version": 1}}


def test_spectral_norm_makes_the_largest_singular_value_one():
    # seeded: the power iteration converges as (s2 / s1) ** steps, and some draws have s2 close to s1
    ember.manual_seed(0)
    layer = nn.utils.parametrizations.spectral_norm(nn.Linear(6, 5).double())
    for _ in range(30):
        weight = layer.weight
    assert np.linalg.norm(weight.detach().numpy(), 2) == pytest.approx(1.0, rel=1e-6)


def test_spectral_norm_errors_match_torch():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="n_power_iterations to be positive"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
            lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2))
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=3)


# ---------------------------------------------------------------------------------------------- parametrize


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class TorchSymmetric(torch.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class Scale(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, X):
        return X / 2


class TorchScale(torch.nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, X):
        return X / 2


def test_register_parametrization_matches_torch_in_values_gradients_keys_and_repr():
    e, t = linear_pair(3, 3)
    nn.utils.parametrize.register_parametrization(e, "weight", Symmetric())
    torch.nn.utils.parametrize.register_parametrization(t, "weight", TorchSymmetric())
    assert type(e).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert isinstance(e, nn.Linear)
    assert list(e.state_dict()) == list(t.state_dict())
    assert repr(e).replace("Torch", "") == repr(t).replace("Torch", "")
    close(e.weight, t.weight)
    x = RNG.standard_normal((2, 3))
    e(ember.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    close(e.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    assert nn.utils.parametrize.is_parametrized(e) and nn.utils.parametrize.is_parametrized(e, "weight")
    assert not nn.utils.parametrize.is_parametrized(e, "bias")
    assert nn.utils.parametrize.type_before_parametrizations(e) is nn.Linear


def test_a_second_class_instance_is_not_touched():
    layer, other = nn.Linear(2, 2), nn.Linear(2, 2)
    nn.utils.parametrize.register_parametrization(layer, "weight", Symmetric())
    assert type(other) is nn.Linear and "weight" in other._parameters


def test_right_inverse_runs_at_registration_and_on_assignment_like_torch():
    e, t = linear_pair(3, 3)
    for lib, layer, scale in ((ember, e, Scale()), (torch, t, TorchScale())):
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", scale)
    close(e.weight, t.weight)  # the value is kept: original = right_inverse(weight)
    close(e.parametrizations.weight.original, t.parametrizations.weight.original)
    value = RNG.standard_normal((3, 3))
    e.weight = ember.tensor(value)
    t.weight = torch.tensor(value)
    close(e.parametrizations.weight.original, t.parametrizations.weight.original)
    close(e.weight, torch.tensor(value))


def test_chained_parametrizations_apply_in_order():
    e, t = linear_pair(3, 3)
    for lib, layer, first, second in ((ember, e, Symmetric(), Scale()), (torch, t, TorchSymmetric(), TorchScale())):
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", first)
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", second)
    close(e.weight, t.weight)
    assert list(e.state_dict()) == list(t.state_dict())


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations_matches_torch(leave_parametrized):
    e, t = linear_pair(3, 3)
    original = e.weight
    nn.utils.parametrize.register_parametrization(e, "weight", Symmetric())
    torch.nn.utils.parametrize.register_parametrization(t, "weight", TorchSymmetric())
    nn.utils.parametrize.remove_parametrizations(e, "weight", leave_parametrized)
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight", leave_parametrized)
    assert type(e) is nn.Linear and not hasattr(e, "parametrizations")
    assert e.weight is original  # the same Parameter, so an optimizer holding it still works
    close(e.weight, t.weight)
    assert list(e.state_dict()) == list(t.state_dict())


def test_parametrize_errors_match_torch():
    class Wrong(nn.Module):
        def forward(self, X):
            return X[0]

    class TorchWrong(torch.nn.Module):
        def forward(self, X):
            return X[0]

    for lib, wrong, sym in ((ember, Wrong(), Symmetric()), (torch, TorchWrong(), TorchSymmetric())):
        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", wrong)
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
            lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "nothing", sym)
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight")


def test_cached_computes_the_parametrization_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X

    layer = nn.utils.parametrize.register_parametrization(nn.Linear(2, 2), "weight", Counting())
    calls.clear()
    with nn.utils.parametrize.cached():
        assert layer.weight is layer.weight
    assert len(calls) == 1
    layer.weight, layer.weight
    assert len(calls) == 3


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder", None])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_keeps_an_orthogonal_weight_and_stays_orthogonal_under_training(orthogonal_map, shape):
    layer = nn.Linear(shape[1], shape[0]).double()
    nn.init.orthogonal_(layer.weight)
    before = layer.weight.detach().clone()
    nn.utils.parametrizations.orthogonal(layer, orthogonal_map=orthogonal_map)
    close(layer.weight, torch.tensor(before.numpy()), atol=1e-10)
    opt = ember.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        layer(ember.tensor(RNG.standard_normal((4, shape[1])))).pow(2).sum().backward()
        opt.step()
    w = layer.weight.detach().numpy()
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)
    assert not np.allclose(w, before.numpy())  # training moved it


def test_orthogonal_state_dict_and_assignment_like_torch():
    e, t = linear_pair(3, 3)
    nn.utils.parametrizations.orthogonal(e)
    torch.nn.utils.parametrizations.orthogonal(t)
    assert list(e.state_dict()) == list(t.state_dict())
    q = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
    e.weight = ember.tensor(q)
    close(e.weight, torch.tensor(q), atol=1e-12)
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias")


def test_orthogonal_maps_pass_gradcheck():
    from ember.nn.utils.parametrizations import _Orthogonal

    for orthogonal_map in ("matrix_exp", "cayley", "householder"):
        X = ember.tensor(RNG.standard_normal((4, 3)) * 0.3, requires_grad=True)
        orth = _Orthogonal(X, orthogonal_map, use_trivialization=False)
        assert gradcheck(orth, (X,))


# ------------------------------------------------------------------------------------------------- fusion


class Norm(nn.Module):
    """The attributes a BatchNorm layer has, for layers whose BatchNorm may not exist yet."""

    def __init__(self, lib, values):
        super().__init__()
        w, b, mean, var = values
        self.weight, self.bias = nn.Parameter(ember.tensor(w)), nn.Parameter(ember.tensor(b))
        self.register_buffer("running_mean", ember.tensor(mean))
        self.register_buffer("running_var", ember.tensor(var))
        self.eps = 1e-5
        self.num_features = len(mean)  # what fuse_linear_bn_eval checks the linear layer's out_features against

    def forward(self, x):
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt() * self.weight + self.bias


def norm_values(n):
    w, b, mean = arrays((n,), (n,), (n,))
    return w, b, mean, RNG.uniform(0.5, 2.0, n)


def torch_norm(values):
    bn = torch.nn.BatchNorm1d(len(values[0]), dtype=torch.float64).eval()
    with torch.no_grad():
        for name, v in zip(("weight", "bias", "running_mean", "running_var"), values):
            getattr(bn, name).copy_(torch.tensor(v))
    return bn


def test_fuse_linear_bn_eval_matches_the_pair_and_torch():
    e, t = linear_pair(3, 4)
    values = norm_values(4)
    bn_e, bn_t = Norm(ember, values).eval(), torch_norm(values)
    e.eval(), t.eval()
    fused_e, fused_t = nn.utils.fuse_linear_bn_eval(e, bn_e), torch.nn.utils.fuse_linear_bn_eval(t, bn_t)
    x = RNG.standard_normal((5, 3))
    close(fused_e(ember.tensor(x)), bn_t(t(torch.tensor(x))), rtol=1e-9)
    close(fused_e.weight, fused_t.weight)
    close(fused_e.bias, fused_t.bias)
    assert fused_e is not e and isinstance(fused_e.weight, nn.Parameter)


def test_fuse_conv_bn_weights_match_torch():
    values = norm_values(4)
    w, b = arrays((4, 2, 3, 3), (4,))
    for transpose in (False, True):
        weight = w.transpose(1, 0, 2, 3).copy() if transpose else w
        got = nn.utils.fuse_conv_bn_weights(ember.tensor(weight), ember.tensor(b), *[ember.tensor(v) for v in
                                            values[2:]], 1e-5, ember.tensor(values[0]), ember.tensor(values[1]),
                                            transpose)
        want = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(weight), torch.tensor(b), *[torch.tensor(v) for v in
                                                   values[2:]], 1e-5, torch.tensor(values[0]),
                                                   torch.tensor(values[1]), transpose)
        for g, h in zip(got, want):
            close(g, h)


def test_fuse_conv_bn_eval_uses_the_conv_attributes():
    class Conv(nn.Module):  # a 1x1 convolution written as a Linear over channels
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(ember.tensor(RNG.standard_normal((4, 3, 1, 1))))
            self.bias = None

        def forward(self, x):
            out = ember.einsum("nchw,oc->nohw", x, self.weight[:, :, 0, 0])
            return out if self.bias is None else out + self.bias.reshape(1, -1, 1, 1)

    conv, values = Conv().eval(), norm_values(4)
    bn = Norm(ember, values).eval()
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    x = ember.tensor(RNG.standard_normal((2, 3, 2, 2)))
    expected = bn(conv(x).movedim(1, -1)).movedim(-1, 1)
    close(fused(x), torch.tensor(expected.detach().numpy()), rtol=1e-9)


def test_fusion_refuses_training_mode():
    for lib, bn in ((ember, Norm(ember, norm_values(2))), (torch, torch.nn.BatchNorm1d(2))):
        with pytest.raises(AssertionError, match="Fusion only for eval"):
            lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 2), bn)


# --------------------------------------------------------------------------------------------- stateless


def test_functional_call_matches_torch_and_restores_the_module():
    e, t = linear_pair()
    w, b = arrays((4, 3), (4,))
    x = RNG.standard_normal((2, 3))
    we = ember.tensor(w, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    ye = ember.func.functional_call(e, {"weight": we}, (ember.tensor(x),))
    yt = torch.func.functional_call(t, {"weight": wt}, (torch.tensor(x),))
    close(ye, yt)
    ye.sum().backward()
    yt.sum().backward()
    close(we.grad, wt.grad)
    assert e.weight.grad is None and isinstance(e.weight, nn.Parameter)
    close(e(ember.tensor(x)), t(torch.tensor(x)))
    one = ember.func.functional_call(e, ({"weight": ember.tensor(w)}, {"bias": ember.tensor(b)}),
                                             ember.tensor(x))
    close(one, torch.func.functional_call(t, ({"weight": torch.tensor(w)}, {"bias": torch.tensor(b)}),
                                          torch.tensor(x)))


@pytest.mark.parametrize("names", [["weight", "foo"], ["weight"], ["foo", "bar", "weight", "bias"]], ids=str)
def test_functional_call_strict_error_matches_torch(names):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as error:
            lib.func.functional_call(lib.nn.Linear(2, 2), {k: lib.ones(2, 2) for k in names}, (lib.ones(1, 2),),
                                     strict=True)
        messages.append(str(error.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("name, value, error, message", [
    ("0", lambda lib: lib.ones(2), TypeError, r"attribute `0`: Linear\(.*\) is not an instance of (torch|ember)\.Tensor"),
    ("0.weight.x", lambda lib: lib.ones(2), TypeError,
     r"(?s)submodule `0.weight`: .* is not an instance of (torch|ember)\.nn\.Module"),
    ("0.bias", lambda lib: 5, TypeError, r"5 is not an instance of (torch|ember)\.Tensor"),
    ("nowhere.bias", lambda lib: lib.ones(2), AttributeError, "Sequential has no attribute `nowhere`"),
], ids=["a submodule", "inside a tensor", "a number", "a missing submodule"])
def test_functional_call_refuses_what_is_no_tensor_as_torch(name, value, error, message):
    for lib in (torch, ember):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2))
        with pytest.raises(error, match=message):
            lib.func.functional_call(model, {name: value(lib)}, (lib.ones(1, 2),))
        assert isinstance(model[0], lib.nn.Linear) and isinstance(model[0].bias, lib.nn.Parameter)


def test_stateless_functional_call_is_deprecated_as_torchs():
    for lib in (torch, ember):
        with pytest.warns(FutureWarning, match="Please use `torch.func.functional_call` instead"):
            out = lib.nn.utils.stateless.functional_call(lib.nn.Linear(2, 1), {"bias": lib.ones(1),
                                                                               "weight": lib.ones(1, 2)},
                                                         (lib.ones(1, 2),))
        assert out.tolist() == [[3.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.func.functional_call(nn.Linear(2, 1), {"bias": ember.ones(1)}, (ember.ones(1, 2),))


def test_functional_call_ties_shared_weights_and_checks_strictly():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    model, x = Tied(), ember.ones(1, 2)
    got = ember.func.functional_call(model, {"a.weight": ember.eye(2) * 2}, (x,))
    assert got.tolist() == [[4.0, 4.0]]
    untied = ember.func.functional_call(model, {"a.weight": ember.eye(2) * 2}, (x,), tie_weights=False)
    assert untied.tolist() != got.tolist()
    with pytest.raises(RuntimeError, match="Missing key"):
        ember.func.functional_call(nn.Linear(2, 2), {"weight": ember.eye(2)}, (x,), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        ember.func.functional_call(nn.Linear(2, 2), ({"bias": ember.zeros(2)}, {"bias": ember.zeros(2)}), x)


def test_a_buffer_can_be_parametrized_and_stays_a_buffer():
    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("table", ember.tensor(RNG.standard_normal((3, 3))))

    e = WithBuffer()
    nn.utils.parametrize.register_parametrization(e, "table", Symmetric())
    assert list(e.state_dict()) == ["parametrizations.table.original"]
    assert list(e.parameters()) == [] and bool((e.table == e.table.T).all())
    nn.utils.parametrize.remove_parametrizations(e, "table")
    assert "table" in e._buffers and bool((e.table == e.table.T).all())


def test_transfer_parametrizations_and_params_shares_the_originals():
    source = nn.utils.parametrize.register_parametrization(nn.Linear(3, 3).double(), "weight", Symmetric())
    target = nn.Linear(3, 3).double()
    nn.utils.parametrize.transfer_parametrizations_and_params(source, target)
    assert nn.utils.parametrize.is_parametrized(target, "weight")
    close(target.weight, torch.tensor(source.weight.detach().numpy()))
    assert target.parametrizations.weight.original is source.parametrizations.weight.original  # as torch


def test_right_inverse_may_store_another_shape_when_forward_restores_it():
    def flat(lib):
        class Flat(lib.nn.Module):
            def forward(self, X):
                return X.reshape(3, 3)

            def right_inverse(self, W):
                return W.reshape(-1)
        return Flat()

    e, t = linear_pair(3, 3)
    nn.utils.parametrize.register_parametrization(e, "weight", flat(ember))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", flat(torch))
    assert e.parametrizations.weight.original.shape == t.parametrizations.weight.original.shape == (9,)
    close(e.weight, t.weight)


def test_spectral_normalisation_passes_gradcheck_and_gradgradcheck():
    from ember.nn.utils._norms import spectral_normalized

    u, v = ember.tensor(RNG.standard_normal(3)), ember.tensor(RNG.standard_normal(2))
    W = ember.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert gradcheck(lambda W: spectral_normalized(W, W, u, v), (W,))
    assert gradgradcheck(lambda W: spectral_normalized(W, W, u, v), (W,))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6), st.floats(0.01, 10.0),
       st.sampled_from([1.0, 2.0, float("inf")]))
def test_clipping_bounds_the_norm_and_keeps_the_direction(values, max_norm, norm_type):
    p = nn.Parameter(ember.zeros(len(values), dtype=ember.float64))
    p.grad = ember.tensor(values, dtype=ember.float64)
    before = p.grad.clone()
    total = nn.utils.clip_grad_norm_([p], max_norm, norm_type)
    after = ember.linalg.vector_norm(p.grad, norm_type).item()
    assert after <= min(max_norm, total.item()) * (1 + 1e-9) + 1e-12
    if total.item() > 0:
        np.testing.assert_allclose(p.grad.numpy() * total.item(), before.numpy() * after, rtol=1e-9, atol=1e-9)


def test_old_clip_grad_norm_name_warns_and_clips():
    p = nn.Parameter(ember.zeros(2))
    p.grad = ember.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning, match="deprecated in favor of `ember.nn.utils.clip_grad_norm_`"):
        assert nn.utils.clip_grad_norm([p], 1.0).item() == 5.0
    assert p.grad.tolist() == pytest.approx([0.6, 0.8], rel=1e-5)


def test_skip_init_builds_the_module_and_refuses_like_torch():
    layer = nn.utils.skip_init(nn.Linear, 3, 2, bias=False)
    assert layer.weight.shape == (2, 3) and layer.bias is None

    class NoDevice(nn.Module):
        pass

    class TorchNoDevice(torch.nn.Module):
        pass

    for lib, cls in ((ember, NoDevice), (torch, TorchNoDevice)):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.skip_init(cls)
        with pytest.raises(RuntimeError, match="Expected a Module"):
            lib.nn.utils.skip_init(int)


def test_skip_init_leaves_the_seeded_stream_where_torch_leaves_it():
    # torch builds on the meta device and draws nothing; the numbers drawn after it must be torch's
    drawn = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        lib.nn.utils.skip_init(lib.nn.Linear, 3, 2)
        drawn.append(lib.rand(4).numpy())
    np.testing.assert_array_equal(drawn[1], drawn[0])


def test_conv_weight_memory_format_conversion_matches_torch():
    layouts = []
    for lib in (torch, ember):
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3), lib.nn.Sequential(lib.nn.ConvTranspose2d(3, 2, 2)),
                                  lib.nn.Conv3d(1, 2, 2), lib.nn.ConvTranspose3d(2, 1, 2), lib.nn.Linear(2, 2))
        kept = model[0].weight
        before = [p.detach().numpy().copy() for p in model.parameters()]
        assert lib.nn.utils.convert_conv2d_weight_memory_format(model, lib.channels_last) is model
        assert model[0].weight is kept and isinstance(kept, lib.nn.Parameter) and kept.requires_grad
        seen = [model[0].weight.stride(), model[1][0].weight.stride(), model[2].weight.stride()]
        lib.nn.utils.convert_conv3d_weight_memory_format(model, lib.channels_last_3d)
        seen += [model[2].weight.stride(), model[3].weight.stride(), model[4].weight.stride()]
        for p, values in zip(model.parameters(), before):
            np.testing.assert_array_equal(p.detach().numpy(), values)
        layouts.append(seen)
    assert layouts[0] == layouts[1]


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_a_parametrized_module_refuses_pickling_but_deep_copies(lib):
    layer = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
    for save in (lambda: pickle.dumps(layer), lambda: lib.save(lib.nn.Sequential(layer), io.BytesIO()),
                 lambda: copy.copy(layer)):
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only supported through"):
            save()
    replica = copy.deepcopy(layer)
    assert type(replica) is type(layer)
    assert replica.parametrizations.weight.original0 is not layer.parametrizations.weight.original0
    assert lib.equal(replica.weight, layer.weight)
    assert sorted(replica.state_dict()) == sorted(layer.state_dict())
