"""Normalization layers against torch: outputs, gradients of inputs and parameters, running statistics, repr."""
import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn import functional as F

# (module name, constructor arguments, input shape)
CASES = [
    ("BatchNorm1d", (3,), (4, 3)), ("BatchNorm1d", (3,), (4, 3, 5)), ("BatchNorm2d", (3,), (2, 3, 4, 2)),
    ("BatchNorm3d", (2,), (2, 2, 3, 2, 2)), ("BatchNorm1d", (3, 1e-3, None), (4, 3)),
    ("BatchNorm2d", (3, 1e-5, 0.3, False), (2, 3, 2, 2)), ("BatchNorm1d", (3, 1e-5, 0.1, True, False), (5, 3)),
    ("InstanceNorm1d", (3,), (2, 3, 5)), ("InstanceNorm1d", (3,), (3, 5)), ("InstanceNorm2d", (3, 1e-5, 0.1, True),
                                                                           (2, 3, 4, 3)),
    ("InstanceNorm2d", (3, 1e-5, 0.1, True, True), (2, 3, 2, 3)), ("InstanceNorm3d", (2,), (2, 2, 2, 3, 2)),
    ("LayerNorm", (4,), (3, 4)), ("LayerNorm", ((3, 4),), (2, 3, 4)), ("LayerNorm", (4, 1e-5, False), (2, 4)),
    ("LayerNorm", (4, 1e-5, True, False), (2, 4)), ("GroupNorm", (2, 4), (3, 4, 5)), ("GroupNorm", (1, 4, 1e-3, False),
                                                                                     (2, 4, 3, 2)),
    ("GroupNorm", (4, 4), (2, 4, 3)), ("LocalResponseNorm", (3,), (2, 5, 4)), ("LocalResponseNorm", (2, 1e-2, 0.5, 2.0),
                                                                              (2, 4, 3, 3)),
    ("RMSNorm", (4,), (3, 4)), ("RMSNorm", ((2, 4), 1e-6), (3, 2, 4)), ("RMSNorm", (4, None, False), (2, 4)),
]


def _build(lib, name, args, dtype):
    layer = getattr(lib.nn, name)(*args).to(getattr(lib, dtype))
    with lib.no_grad():
        for index, parameter in enumerate(layer.parameters()):  # not ones and zeros, so a mix-up would show
            parameter.copy_(lib.tensor(np.linspace(0.5, 1.5 + index, parameter.numel()).reshape(parameter.shape)))
    return layer


def _step(lib, layer, values, dtype):
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    y = layer(x)
    (y * lib.tensor(np.arange(y.numel()).reshape(y.shape) % 5, dtype=y.dtype)).sum().backward()
    grads = [p.grad.numpy() for p in layer.parameters()]
    buffers = [b.numpy() for b in layer.buffers()]
    return [y.detach().numpy(), x.grad.numpy(), *grads, *buffers]


@pytest.mark.parametrize("name,args,shape", CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_layer_matches_torch_in_train_then_eval(name, args, shape, dtype):
    rng = np.random.default_rng(0)
    layers = _build(torch, name, args, dtype), _build(ember, name, args, dtype)
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    for mode in ("train", "train", "eval"):  # two steps, so running statistics accumulate
        values = rng.normal(size=shape) * 2 + 1
        results = []
        for lib, layer in zip((torch, ember), layers):
            layer.train(mode == "train")
            results.append(_step(lib, layer, values, dtype))
            layer.zero_grad()
        assert len(results[0]) == len(results[1])
        for want, got in zip(*results):
            np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("name,args,shape", CASES, ids=lambda v: str(v))
def test_repr_and_state_dict_keys_match_torch(name, args, shape):
    expected, actual = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(actual) == repr(expected)
    assert list(actual.state_dict()) == list(expected.state_dict())
    for key, value in expected.state_dict().items():
        assert actual.state_dict()[key].dtype == getattr(ember, str(value.dtype).split(".")[1])


@pytest.mark.parametrize("name,args,shape", [c for c in CASES if not c[0].startswith(("BatchNorm", "InstanceNorm"))]
                         + [("BatchNorm1d", (3,), (4, 3)), ("InstanceNorm1d", (2, 1e-5, 0.1, True), (2, 2, 4))],
                         ids=lambda v: str(v))
def test_gradcheck_and_gradgradcheck(name, args, shape):
    layer = _build(ember, name, args, "float64")
    values = np.random.default_rng(1).normal(size=shape)
    x = ember.tensor(values, requires_grad=True)
    parameters = list(layer.parameters())
    function = _functional_of(layer)
    assert ember.autograd.gradcheck(function, (x, *parameters))
    assert ember.autograd.gradgradcheck(function, (x, *parameters))


def _functional_of(layer):
    """The layer's forward as a function of the input and the parameters (so gradcheck varies them too)."""
    def call(x, *parameters):
        saved = dict(layer.named_parameters())
        for (name, _), value in zip(saved.items(), parameters):
            layer._parameters[name] = value
        try:
            return layer(x)
        finally:
            layer._parameters.update(saved)
    return call


def test_batch_norm_momentum_none_is_a_cumulative_average():
    layer = nn.BatchNorm1d(2, momentum=None)
    batches = [np.random.default_rng(i).normal(size=(6, 2)) for i in range(3)]
    for values in batches:
        layer(ember.tensor(values, dtype=ember.float32))  # (torch refuses a double input here)
    means = np.mean([b.mean(0) for b in batches], axis=0)
    variances = np.mean([b.var(0, ddof=1) for b in batches], axis=0)
    np.testing.assert_allclose(layer.running_mean.numpy(), means, rtol=1e-5)
    np.testing.assert_allclose(layer.running_var.numpy(), variances, rtol=1e-5)
    assert layer.num_batches_tracked.item() == 3


def test_batch_norm_without_running_stats_uses_the_batch_in_eval():
    layer = nn.BatchNorm1d(2, track_running_stats=False).eval()
    out = layer(ember.tensor([[1.0, 2.0], [3.0, 6.0]]))
    np.testing.assert_allclose(out.detach().numpy(), [[-1, -1], [1, 1]], rtol=1e-4)
    assert layer.running_mean is None and "running_mean" not in layer.state_dict()


def test_functional_forms_match_torch():
    rng = np.random.default_rng(3)
    values, weight, bias = rng.normal(size=(4, 3, 2)), rng.normal(size=3), rng.normal(size=3)
    mean, var = rng.normal(size=3), rng.uniform(0.5, 2, size=3)
    calls = [
        lambda lib, x: lib.nn.functional.batch_norm(x, lib.tensor(mean), lib.tensor(var), lib.tensor(weight),
                                                    lib.tensor(bias)),
        lambda lib, x: lib.nn.functional.layer_norm(x, [2], eps=1e-3),
        lambda lib, x: lib.nn.functional.group_norm(x, 3, lib.tensor(weight), lib.tensor(bias)),
        lambda lib, x: lib.nn.functional.instance_norm(x, weight=lib.tensor(weight)),
        lambda lib, x: lib.nn.functional.rms_norm(x, (3, 2)),
        lambda lib, x: lib.nn.functional.local_response_norm(x, 2, k=0.5),
    ]
    for call in calls:
        got, want = call(ember, ember.tensor(values)), call(torch, torch.tensor(values))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_functional_batch_norm_updates_running_stats_in_training():
    values = np.random.default_rng(4).normal(size=(5, 2))
    stats = []
    for lib in (torch, ember):
        mean, var = lib.zeros(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64)
        lib.nn.functional.batch_norm(lib.tensor(values), mean, var, training=True, momentum=0.3)
        stats.append((mean.numpy(), var.numpy()))
    np.testing.assert_allclose(stats[1], stats[0], rtol=1e-12)


@pytest.mark.parametrize("call,error", [
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 4, 5)), ValueError),
    (lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(2, 3, 4)), ValueError),
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)), ValueError),
    (lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 2)), RuntimeError),
    (lambda lib: lib.nn.LayerNorm(4)(lib.ones(2, 3)), RuntimeError),
    (lambda lib: lib.nn.RMSNorm(4)(lib.ones(2, 3)), RuntimeError),
    (lambda lib: lib.nn.GroupNorm(2, 3), ValueError),
    (lambda lib: lib.nn.functional.group_norm(lib.ones(2, 3, 4), 2), RuntimeError),
    (lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 3), 2, lib.ones(3)), RuntimeError),
    (lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 3), 2, None, lib.ones(5)), RuntimeError),
    (lambda lib: lib.nn.functional.instance_norm(lib.ones(2, 4, 3), weight=lib.ones(3)), RuntimeError),
    (lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.ones(2, 4, 5)), ValueError),
    (lambda lib: lib.nn.InstanceNorm2d(3)(lib.ones(3, 4)), ValueError),
    (lambda lib: lib.nn.LocalResponseNorm(2)(lib.ones(2, 3)), ValueError),
])
def test_errors_have_torch_types(call, error):
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error):
        call(ember)


@pytest.mark.parametrize("shape", [(2, 4, 5), (4, 5)])
def test_instance_norm_without_affine_warns_of_other_channels_as_torch(shape):
    outs = []
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match=r"input's size at dim=\d does not match num_features\. You can silence"):
            outs.append(lib.nn.InstanceNorm1d(3)(lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))).numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12, atol=1e-12)


def test_error_message_names_the_layer_and_shapes():
    with pytest.raises(ValueError, match=r"BatchNorm2d\(3\).*\[2, 3, 4\]"):
        nn.BatchNorm2d(3)(ember.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[4\].*\[2, 3\]"):
        F.layer_norm(ember.ones(2, 3), [4])


def test_batch_and_layer_norm_are_one_node_as_in_torch():
    x = ember.randn(4, 3, requires_grad=True)
    assert nn.BatchNorm1d(3)(x).grad_fn.name() == "NativeBatchNormBackward0"
    assert nn.LayerNorm(3)(x).grad_fn.name() == "NativeLayerNormBackward0"
    assert F.layer_norm(x, [3]).grad_fn.name() == "NativeLayerNormBackward0"


def test_layer_and_batch_norm_of_empty_batches_are_empty():
    for lib in (torch, ember):
        assert tuple(lib.nn.functional.layer_norm(lib.ones(0, 4), [4]).shape) == (0, 4)


# (input shape, groups; None for instance_norm, how the input is laid out)
GROUP_CASES = [((32, 16, 8, 8), 4, "contiguous"), ((22, 44, 33), 4, "contiguous"), ((4, 6), 2, "contiguous"),
               ((3, 6, 5), 1, "contiguous"), ((3, 6, 5), 6, "contiguous"), ((2, 4, 3, 2, 2), 2, "contiguous"),
               ((4, 6, 5, 5), 3, "transposed"), ((4, 6, 5), 2, "broadcast"), ((4, 6, 5, 5), None, "contiguous"),
               ((3, 4, 7), None, "transposed")]


def _laid_out(lib, values, layout):
    x = lib.tensor(values[:1] if layout == "broadcast" else values, requires_grad=True)
    if layout == "transposed":
        return x, x.transpose(0, 1).contiguous().transpose(0, 1)
    return x, (x.expand(values.shape) if layout == "broadcast" else x)


def _group_or_instance_norm(lib, x, groups, weight, bias):
    functional = lib.nn.functional
    if groups is None:
        return functional.instance_norm(x, None, None, weight, bias)
    return functional.group_norm(x, groups, weight, bias)


@pytest.mark.parametrize("shape,groups,layout", GROUP_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [False, True])
def test_group_and_instance_norm_match_torch(shape, groups, layout, dtype, affine):
    rng = np.random.default_rng(7)
    values = (rng.standard_normal(shape) * 3 + 5).astype(dtype)  # a mean far from 0, as the centring must cope
    parameters = rng.standard_normal((2, shape[1])).astype(dtype)
    grad = rng.standard_normal(shape).astype(dtype)
    results = []
    for lib in (torch, ember):
        leaf, x = _laid_out(lib, values, layout)
        weight, bias = (lib.tensor(p, requires_grad=True) for p in parameters) if affine else (None, None)
        output = _group_or_instance_norm(lib, x, groups, weight, bias)
        output.backward(lib.tensor(grad))
        grads = [leaf.grad] + ([weight.grad, bias.grad] if affine else [])
        results.append([output.detach()] + grads)
    tolerance = 2e-5 if dtype == "float32" else 1e-12
    for theirs, mine in zip(*results):
        assert mine.dtype == getattr(ember, dtype)
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("shape,groups", [((3, 4, 5), 2), ((2, 6, 2, 3), 3), ((3, 4), 4), ((2, 3, 4), None)])
def test_group_and_instance_norm_gradcheck_and_gradgradcheck(shape, groups):
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal(shape), requires_grad=True)
    weight, bias = (ember.tensor(rng.standard_normal(shape[1]), requires_grad=True) for _ in range(2))
    for inputs, call in (((x,), lambda a: _group_or_instance_norm(ember, a, groups, None, None)),
                         ((x, weight, bias), lambda a, w, b: _group_or_instance_norm(ember, a, groups, w, b)),
                         ((x, bias), lambda a, b: _group_or_instance_norm(ember, a, groups, None, b))):
        assert ember.autograd.gradcheck(call, inputs)
        assert ember.autograd.gradgradcheck(call, inputs)


def test_group_norm_is_one_node_as_in_torch():
    x = ember.randn(2, 4, 3, requires_grad=True)
    assert F.group_norm(x, 2).grad_fn.name() == "NativeGroupNormBackward0"
    assert nn.GroupNorm(2, 4)(x).grad_fn.name() == "NativeGroupNormBackward0"


def test_group_and_instance_norm_of_huge_deviations_in_single_precision():
    # squares of deviations from 1e20 overflow single precision, the deviations and their reciprocal do not
    values = np.array([[[1e20, -1e20, 3e19, 0.0], [2e20, 1e20, -3e20, 5e19]]], dtype=np.float32)
    # (torch's are nan); the reference is the same in double precision
    for call in (lambda x: F.group_norm(x, 1), lambda x: F.instance_norm(x)):
        mine, wide = call(ember.tensor(values)).numpy(), call(ember.tensor(values.astype(np.float64))).numpy()
        np.testing.assert_allclose(mine, wide, rtol=1e-6, atol=1e-6)


def test_instance_norm_running_statistics_match_torch():
    values = np.random.default_rng(5).standard_normal((4, 3, 6)).astype(np.float32) + 2
    statistics = []
    for lib in (torch, ember):
        mean, var = lib.zeros(3), lib.ones(3)
        lib.nn.functional.instance_norm(lib.tensor(values), mean, var, momentum=0.2)
        statistics.append((mean.numpy(), var.numpy()))
    for theirs, mine in zip(*statistics):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("call", [lambda x: F.group_norm(x, 4), lambda x: F.instance_norm(x),
                                  lambda x: F.layer_norm(x, [16, 64])])
def test_norms_of_rows_far_from_zero_keep_single_precision(call):
    # a mean 100 times the spread: the BLAS sum that takes the mean errs by a share of the mean, which the
    # centred rows' own mean takes back (without it, errors of about 100 units in the last place)
    values = (np.random.default_rng(2).standard_normal((4, 16, 64)) * 3 + 300).astype(np.float32)
    mine = call(ember.tensor(values)).numpy()
    wide = call(ember.tensor(values.astype(np.float64))).numpy()
    assert np.max(np.abs(mine - wide) / np.spacing(np.maximum(np.abs(wide), 1).astype(np.float32))) <= 8


@pytest.mark.parametrize("versioned", [False, True])
def test_state_dict_without_num_batches_tracked(versioned):
    """A plain dict (no version metadata) lacking the counter loads, keeping the layer's count, as torch's does;
    a dict that says it is version 2 must have it."""
    def load(lib):
        layer = lib.nn.BatchNorm1d(3)
        layer.num_batches_tracked.fill_(5)
        state = layer.state_dict() if versioned else dict(layer.state_dict())
        del state["num_batches_tracked"]
        try:
            result = layer.load_state_dict(state)
        except RuntimeError as error:
            return str(error).split("\n")[1]
        return (result.missing_keys, layer.num_batches_tracked.item(), "num_batches_tracked" in state)

    assert load(ember) == load(torch)
