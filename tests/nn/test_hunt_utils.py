"""Mismatches with torch.nn.utils found by a hunt over the training utilities."""
import warnings

import numpy as np
import pytest
import torch

import ember


def caught_warnings(program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program()
    return [str(w.message) for w in caught]


def test_clip_grad_norm_warns_about_an_empty_generator():
    # a generator already drained (say by an earlier clip of the same model.parameters()) clips nothing
    for lib in (torch, ember):
        messages = caught_warnings(lambda: lib.nn.utils.clip_grad_norm_((p for p in []), 1.0))
        assert messages == ["`parameters` is an empty generator, no gradient clipping will occur."]
        assert caught_warnings(lambda: lib.nn.utils.clip_grad_norm_([], 1.0)) == []


class Deconv(torch.nn.ConvTranspose2d):
    pass


class EmberDeconv(ember.nn.ConvTranspose2d):
    pass


@pytest.mark.parametrize("which", ["hooks", "parametrization"])
def test_spectral_norm_of_a_transposed_convolution_subclass_normalises_over_dim_1(which):
    # the default dim is 1 for every ConvTranspose1d/2d/3d, subclasses included (the class, not its name)
    def estimate(lib):
        lib.manual_seed(0)
        module = (Deconv if lib is torch else EmberDeconv)(2, 3, 3)
        lib.manual_seed(1)
        if which == "hooks":
            module = lib.nn.utils.spectral_norm(module)
            return module.weight_u.numpy(), module.weight_v.numpy()
        module = lib.nn.utils.parametrizations.spectral_norm(module)
        found = module.parametrizations.weight[0]
        return found._u.numpy(), found._v.numpy()

    ours, theirs = estimate(ember), estimate(torch)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["weight_norm", "spectral_norm"])
def test_norms_refuse_a_lazy_module_before_changing_it(name):
    for lib in (torch, ember):
        module = lib.nn.LazyLinear(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with pytest.raises(ValueError, match="can't have uninitialized parameters"):
                getattr(lib.nn.utils, name)(module)
        assert sorted(module._parameters) == ["bias", "weight"]  # the module is left as it was


def parametrizations_of(lib):
    """Parametrizations whose right_inverse returns something unusual, for each library."""
    nn = lib.nn

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.float()

        def right_inverse(self, X):
            return X.double()

    class Flat(nn.Module):  # stores the weight as a vector, whatever its shape
        def forward(self, X):
            return X.reshape(-1, 3)

        def right_inverse(self, A):
            return A.reshape(-1)

    class Halves(nn.Module):
        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return [X / 2, X / 2]

    class Twice(nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, A):
            return A / 2

    class Number(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    return {"ToDouble": ToDouble, "Flat": Flat, "Halves": Halves, "Twice": Twice, "Number": Number}


def parametrized_linear(lib, name, unsafe=False, frozen=False):
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 3)
    layer.weight.requires_grad_(not frozen)
    parametrization = parametrizations_of(lib)[name]()
    return lib.nn.utils.parametrize.register_parametrization(layer, "weight", parametrization, unsafe=unsafe)


@pytest.mark.parametrize("name", ["ToDouble", "Number"])
def test_register_parametrization_refuses_what_right_inverse_cannot_store(name):
    # a change of dtype is refused even with unsafe=True; a number is neither a tensor nor a sequence of them
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="right_inverse"):
            parametrized_linear(lib, name, unsafe=True)


@pytest.mark.parametrize("name", ["Flat", "Halves"])
def test_assigning_a_parametrized_tensor_of_another_shape_replaces_the_originals(name):
    def originals(layer):
        chain = layer.parametrizations.weight
        return [chain.original] if name == "Flat" else [chain.original0, chain.original1]

    def program(lib):
        layer = parametrized_linear(lib, name, unsafe=True)
        kept = originals(layer)
        layer.weight = lib.arange(12.0).reshape(4, 3)
        assert all(a is b for a, b in zip(kept, originals(layer)))  # the same objects an optimizer may hold
        return layer.weight.detach().numpy(), [tuple(t.shape) for t in kept]

    ours, theirs = program(ember), program(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def test_assigning_what_right_inverse_turns_into_a_number_is_a_value_error():
    class Later(ember.nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            registered = getattr(self, "registered", False)
            self.registered = True
            return 3 if registered else X  # a tensor when registered, a number when assigned to

    layer = ember.nn.utils.parametrize.register_parametrization(ember.nn.Linear(2, 2), "weight", Later(), unsafe=True)
    with pytest.raises(ValueError, match="`right_inverse` should return a tensor. Got int"):
        layer.weight = ember.zeros(2, 2)


def test_removing_a_parametrization_of_several_originals_gives_a_buffer_when_frozen():
    # as torch: the value is a parameter only if it needs a gradient
    def kinds(lib):
        layer = parametrized_linear(lib, "Halves", frozen=True)
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
        return [name for name, _ in layer.named_parameters()], [name for name, _ in layer.named_buffers()]

    assert kinds(ember) == kinds(torch)


def parametrized_weight(lib, which, make_weight, **options):
    """``which`` of nn.utils.parametrizations applied to a Linear(3, 3) whose weight ``make_weight`` gives."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 3, bias=False)
    layer.weight = lib.nn.Parameter(make_weight(lib))
    lib.manual_seed(5)
    return getattr(lib.nn.utils.parametrizations, which)(layer, **options)


def complex_weight(lib):
    return lib.randn(3, 3, dtype=lib.complex128)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley"])
def test_orthogonal_of_a_complex_weight_keeps_it_through_the_base(orthogonal_map):
    # the base (the weight made unitary) used to be left None: the complex QR's signs came from `sign`, which refuses
    # complex input, and the NotImplementedError was taken for "cannot be assigned to"
    ours = parametrized_weight(ember, "orthogonal", complex_weight, orthogonal_map=orthogonal_map)
    theirs = parametrized_weight(torch, "orthogonal", complex_weight, orthogonal_map=orthogonal_map)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-12)


def test_orthogonal_householder_without_trivialization_can_be_assigned_to():
    # torch's right_inverse stores geqrf's reflectors: registering orthogonalises the weight, assigning works
    def program(lib):
        layer = parametrized_weight(lib, "orthogonal", lambda lib: lib.randn(5, 3, dtype=lib.float64),
                                    orthogonal_map="householder", use_trivialization=False)
        registered = layer.weight.detach().numpy().copy()
        layer.weight = lib.linalg.qr(lib.randn(5, 3, dtype=lib.float64))[0]
        return registered, layer.weight.detach().numpy()

    for a, b in zip(program(ember), program(torch)):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_spectral_norm_of_a_complex_weight_divides_by_its_singular_value():
    # the power iteration goes back through the conjugate transpose and sigma is vdot(u, W v): a real number
    ours = parametrized_weight(ember, "spectral_norm", complex_weight, n_power_iterations=2)
    theirs = parametrized_weight(torch, "spectral_norm", complex_weight, n_power_iterations=2)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-12)
    assert abs(np.linalg.norm(ours.weight.detach().numpy(), 2) - 1) < 1e-6


def eval_pair(lib, kind, bn_dtype="float32", track=True):
    """A layer and a batch norm after it, both in eval mode, with set statistics (the same in both libraries)."""
    lib.manual_seed(0)
    if kind == "conv":
        layer, bn = lib.nn.Conv2d(3, 4, 2), lib.nn.BatchNorm2d(4, track_running_stats=track)
    else:
        layer, bn = lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4, track_running_stats=track)
    with lib.no_grad():
        bn.weight.uniform_(0.5, 2.0)
        bn.bias.uniform_(-1.0, 1.0)
        if track:
            bn.running_mean.uniform_(-1.0, 1.0)
            bn.running_var.uniform_(0.2, 3.0)
    return layer.eval(), bn.to(getattr(lib, bn_dtype)).eval()


def fused(lib, kind, **options):
    layer, bn = eval_pair(lib, kind, **options)
    if kind == "conv":
        return lib.nn.utils.fuse_conv_bn_eval(layer, bn)
    return lib.nn.utils.fuse_linear_bn_eval(layer, bn)


def test_fused_conv_bias_is_rounded_as_torch_rounds_it():
    # torch scales (bias - mean) by rsqrt(var + eps), then by gamma: two roundings, not one by their product
    ours, theirs = fused(ember, "conv"), fused(torch, "conv")
    np.testing.assert_array_equal(ours.bias.detach().numpy(), theirs.bias.detach().numpy())
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())


def test_fused_linear_keeps_the_linear_layers_dtype():
    ours, theirs = fused(ember, "linear", bn_dtype="float64"), fused(torch, "linear", bn_dtype="float64")
    assert (ours.weight.dtype, ours.bias.dtype) == (ember.float32, ember.float32)
    assert (theirs.weight.dtype, theirs.bias.dtype) == (torch.float32, torch.float32)
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())


def test_fusing_a_linear_layer_with_a_batch_norm_without_statistics_is_an_assertion_error():
    for lib in (torch, ember):
        with pytest.raises(AssertionError, match="must not be None"):
            fused(lib, "linear", track=False)


def test_functional_call_on_a_parametrized_name_goes_through_right_inverse():
    # the value was written into the instance's __dict__, where the parametrization's property hides it:
    # the call ran with the module's own weight, silently
    def program(lib):
        lib.manual_seed(0)
        layer = parametrized_linear(lib, "Flat")
        before = layer.weight.detach().numpy().copy()
        weight = lib.arange(9.0).reshape(3, 3) / 10
        out = lib.func.functional_call(layer, {"weight": weight}, (lib.ones(2, 3),))
        return out.detach().numpy(), layer.weight.detach().numpy() - before

    (ours, ours_change), (theirs, theirs_change) = program(ember), program(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert np.abs(ours_change).max() < 1e-6 and np.abs(theirs_change).max() < 1e-6  # put back after the call


def test_functional_call_on_a_parametrized_name_without_right_inverse_is_refused():
    class Symmetric(ember.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).T

    layer = ember.nn.utils.parametrize.register_parametrization(ember.nn.Linear(3, 3), "weight", Symmetric())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        ember.func.functional_call(layer, {"weight": ember.zeros(3, 3)}, (ember.ones(1, 3),))


def unordered_parameters(lib):
    return lib.nn.ParameterDict({"b": lib.zeros(2), "a": lib.ones(3), "c": lib.zeros(1)})


def test_parameter_dict_from_a_plain_dict_takes_its_keys_sorted():
    # torch sorts a plain mapping's keys (an OrderedDict or pairs keep theirs): the order of parameters(),
    # state_dict() and an optimizer's state follow
    for lib in (torch, ember):
        params = unordered_parameters(lib)
        assert list(params) == ["a", "b", "c"]
        assert list(params.state_dict()) == ["a", "b", "c"]
        params.update({"z": lib.ones(1), "y": lib.ones(1)})
        assert list(params)[3:] == ["y", "z"]
        pairs = lib.nn.ParameterDict([("b", lib.zeros(1)), ("a", lib.zeros(1))])
        assert list(pairs) == ["b", "a"]


def test_parameter_dict_popitem_of_an_empty_one_is_a_key_error():
    for lib in (torch, ember):
        with pytest.raises(KeyError, match="dictionary is empty"):
            lib.nn.ParameterDict().popitem()


def test_a_dict_or_a_parameter_dict_is_a_dict():
    for lib in (torch, ember):
        merged = {"x": lib.ones(1)} | unordered_parameters(lib)
        assert type(merged) is dict and list(merged) == ["x", "a", "b", "c"]


def test_clip_grads_with_norm_takes_the_total_norm_as_a_tensor():
    for lib in (torch, ember):
        weight = lib.nn.Parameter(lib.zeros(3))
        lib.nn.utils.clip_grads_with_norm_([weight], 1.0, 5.0)  # no gradient: nothing to do, nothing checked
        weight.grad = lib.ones(3) * 3
        with pytest.raises(TypeError):
            lib.nn.utils.clip_grads_with_norm_([weight], 1.0, 5.0)
        lib.nn.utils.clip_grads_with_norm_([weight], 1.0, lib.tensor(5.0))
        np.testing.assert_allclose(weight.grad.numpy(), np.full(3, 3 / (5 + 1e-6)), rtol=1e-6)


def test_parameter_dict_update_takes_pairs_as_dict_does():
    # any iterable of two items is a pair, a two-letter string too; the pairs before a bad one are kept
    for lib in (torch, ember):
        assert dict(lib.nn.ParameterDict(["ab"]).items()) == {"a": "b"}
        params = lib.nn.ParameterDict()
        with pytest.raises(TypeError, match="element #2 should be Iterable"):
            params.update([("x", lib.zeros(1)), ("y", lib.zeros(1)), 3])
        assert list(params) == ["x", "y"]


def transferred(lib, to_parametrized=False):
    """Linear layers a (weight parametrized by Twice) and b, after transfer_parametrizations_and_params(a, b)."""
    source = parametrized_linear(lib, "Twice")
    target = lib.nn.Linear(3, 3)
    if to_parametrized:
        target = lib.nn.utils.parametrize.register_parametrization(target, "weight", parametrizations_of(lib)["Twice"]())
    return source, lib.nn.utils.parametrize.transfer_parametrizations_and_params(source, target)


def test_transferred_parametrizations_share_the_originals():
    for lib in (torch, ember):
        source, target = transferred(lib)
        assert target.parametrizations.weight.original is source.parametrizations.weight.original


def test_transferring_onto_a_parametrized_tensor_chains_the_parametrizations():
    for lib in (torch, ember):
        _, target = transferred(lib, to_parametrized=True)
        assert len(target.parametrizations.weight) == 2


def test_parametrized_weight_norm_loads_a_save_of_the_hook_based_one():
    # torch renames <name>_g / <name>_v to parametrizations.<name>.original0 / original1 when loading
    def program(lib):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            old = lib.nn.Sequential(lib.nn.utils.weight_norm(lib.nn.Linear(3, 2)))
        new = lib.nn.Sequential(lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2)))
        new.load_state_dict(old.state_dict())
        return {key: value.detach().numpy() for key, value in new.state_dict().items()}

    ours, theirs = program(ember), program(torch)
    assert list(ours) == list(theirs)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6)


def test_weight_norm_hook_records_dim_none_as_minus_one():
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            layer = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2), dim=None)
        (hook,) = layer._forward_pre_hooks.values()
        assert hook.dim == -1 and tuple(layer.weight_g.shape) == ()


@pytest.mark.parametrize("replacements", [None, 3, [{}, 3]])
def test_functional_call_refuses_what_is_not_a_dict_or_a_list_of_dicts(replacements):
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="parameter_and_buffer_dicts"):
            lib.func.functional_call(lib.nn.Linear(2, 2), replacements, (lib.ones(1, 2),))


def test_the_norm_hooks_have_torchs_apply_entry_points():
    # WeightNorm.apply / SpectralNorm.apply (called directly by some model code) return the hook
    def program(lib):
        import importlib
        hooks_w = importlib.import_module(f"{lib.__name__}.nn.utils.weight_norm")
        hooks_s = importlib.import_module(f"{lib.__name__}.nn.utils.spectral_norm")
        lib.manual_seed(0)
        layer = lib.nn.Conv2d(2, 3, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            weight_hook = hooks_w.WeightNorm.apply(layer, "weight", None)
        spectral_hook = hooks_s.SpectralNorm.apply(layer, "bias", 1, 0, 1e-12)
        matrix = spectral_hook.reshape_weight_to_matrix(lib.zeros(3, 2, 2, 2))
        return (weight_hook.dim, tuple(layer.weight_g.shape), sorted(layer.state_dict()), tuple(matrix.shape),
                hooks_s.SpectralNorm._version, "WeightNorm" in hooks_w.__all__)

    assert program(ember) == program(torch)


def test_init_exports_its_deprecated_names_as_torch():
    assert sorted(ember.nn.init.__all__) == sorted(torch.nn.init.__all__)


@pytest.mark.parametrize("dim", [-1, 2])
def test_hook_spectral_norm_refuses_a_dim_outside_0_to_ndim_as_torch(dim):
    # torch's hook form permutes with the dim as given: a negative or too large one is a RuntimeError
    for lib in (torch, ember):
        layer = lib.nn.Linear(3, 2)
        with pytest.raises(RuntimeError):
            lib.nn.utils.spectral_norm(layer, dim=dim)
        assert sorted(layer._parameters) == ["bias", "weight"]
