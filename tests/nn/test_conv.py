"""Convolutions, padding, fold/unfold, flatten, bilinear and their layers, twinned with torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import nn
from ember.nn import functional as F

RNG = np.random.default_rng(0)


def pair(shape, dtype=np.float64, requires_grad=True):
    """The same random values as an ember and a torch tensor."""
    array = RNG.standard_normal(shape).astype(dtype)
    return ember.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


def check_twins(fe, ft, shapes, dtype=np.float64):
    """Values and every input's gradient agree (tight in float64, loose in float32)."""
    tol = {"rtol": 1e-10, "atol": 1e-10} if dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-4}
    pairs = [pair(s, dtype) for s in shapes]
    ye, yt = fe(*(e for e, _ in pairs)), ft(*(t for _, t in pairs))
    assert tuple(ye.shape) == tuple(yt.shape) and ye.dtype == getattr(ember, str(yt.dtype)[6:])
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), **tol)
    g = RNG.standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    for e, t in pairs:
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol)
    return ye, yt


CONV_CASES = [  # (ember function, torch function, keywords, input shape, weight shape, with bias)
    ("conv1d", {}, (2, 3, 9), (4, 3, 3)),
    ("conv1d", {"stride": 3, "padding": 2, "dilation": 2, "groups": 2}, (2, 4, 11), (6, 2, 3)),
    ("conv1d", {"padding": "same"}, (3, 9), (4, 3, 4)),
    ("conv2d", {}, (2, 3, 7, 6), (4, 3, 3, 2)),
    ("conv2d", {"stride": (2, 1), "padding": (1, 2), "dilation": (2, 1)}, (2, 3, 9, 8), (4, 3, 3, 2)),
    ("conv2d", {"stride": 2, "padding": 1, "groups": 3}, (2, 6, 9, 8), (9, 2, 3, 3)),
    ("conv2d", {"padding": "same", "dilation": 2}, (1, 3, 6, 5), (2, 3, 4, 3)),
    ("conv2d", {"padding": "valid"}, (3, 6, 5), (2, 3, 2, 2)),
    ("conv2d", {}, (0, 3, 5, 5), (2, 3, 2, 2)),
    ("conv3d", {"stride": 2, "padding": 1, "groups": 2}, (2, 4, 5, 6, 5), (4, 2, 3, 2, 3)),
    ("conv_transpose1d", {"stride": 3, "padding": 1, "output_padding": 2}, (2, 4, 5), (4, 3, 3)),
    ("conv_transpose2d", {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "dilation": 2},
     (2, 4, 5, 4), (4, 3, 3, 2)),
    ("conv_transpose2d", {}, (4, 3, 3), (4, 2, 2, 2)),
    ("conv_transpose3d", {"stride": (1, 2, 1)}, (1, 2, 3, 3, 2), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, kwargs, x_shape, w_shape", CONV_CASES)
def test_convolutions_match_torch(name, kwargs, x_shape, w_shape, dtype):
    outputs = w_shape[1] * kwargs.get("groups", 1) if "transpose" in name else w_shape[0]
    fe, ft = getattr(F, name), getattr(TF, name)
    ye, _ = check_twins(lambda x, w, b: fe(x, w, b, **kwargs), lambda x, w, b: ft(x, w, b, **kwargs),
                        [x_shape, w_shape, (outputs,)], dtype)
    expected = "SqueezeBackward1" if len(x_shape) == len(w_shape) - 1 else "ConvolutionBackward0"
    assert ye.grad_fn.name() == expected


@pytest.mark.parametrize("name, kwargs, x_shape, w_shape", CONV_CASES[1:13:3])
def test_convolutions_gradcheck_and_gradgradcheck(name, kwargs, x_shape, w_shape):
    x, w = (ember.tensor(RNG.standard_normal(s), requires_grad=True) for s in (x_shape, w_shape))
    outputs = w_shape[1] * kwargs.get("groups", 1) if "transpose" in name else w_shape[0]
    b = ember.tensor(RNG.standard_normal(outputs), requires_grad=True)

    def f(x, w, b):
        return getattr(F, name)(x, w, b, **kwargs)
    assert ember.autograd.gradcheck(f, (x, w, b))
    assert ember.autograd.gradgradcheck(f, (x, w, b))


def test_a_frozen_layer_saves_no_input_and_a_constant_input_may_change():
    x = ember.randn(1, 2, 5, 5)
    w = ember.randn(3, 2, 3, 3, requires_grad=True)
    y = F.conv2d(x, w)
    x.add_(1.0)  # the input is saved for the weight's gradient: torch refuses this too
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    x2 = ember.randn(1, 2, 5, 5, requires_grad=True)
    w2 = ember.randn(3, 2, 3, 3)
    y2 = F.conv2d(x2, w2)
    x2.data.add_(1.0)
    y2.sum().backward()  # the weight is constant: the input is not saved
    assert x2.grad.shape == x2.shape


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads, shape", [((2, 1), (2, 3, 5)), ((2, 1, 1, 2), (2, 3, 4, 5)),
                                         ((1, 0, 1, 1, 0, 2), (1, 2, 3, 4, 3))])
def test_pad_matches_torch(mode, pads, shape):
    check_twins(lambda x: F.pad(x, pads, mode=mode), lambda x: TF.pad(x, pads, mode=mode), [shape])


def test_pad_constant_value_and_cropping():
    check_twins(lambda x: F.pad(x, (-1, 2, 1, -2), value=3.0), lambda x: TF.pad(x, (-1, 2, 1, -2), value=3.0),
                [(2, 3, 4, 5)])
    with pytest.raises(RuntimeError):
        F.pad(ember.ones(1, 2, 3), (3, 3), mode="reflect")
    with pytest.raises(NotImplementedError):
        F.pad(ember.ones(1, 2, 3), (1, 1), mode="wrap")


@pytest.mark.parametrize("pads", [(-1, 2), (2, -1), (-3, 3), (3, -3), (-1, 2, 1, -2), (1, 1, -1, 1)])
def test_circular_pad_with_cropping_wraps_what_is_left(pads):
    shape = (2, 3, 6) if len(pads) == 2 else (2, 3, 4, 5)
    check_twins(lambda x: F.pad(x, pads, mode="circular"), lambda x: TF.pad(x, pads, mode="circular"), [shape])


def test_circular_pad_wider_than_what_is_left_is_refused():
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(ember.ones(1, 1, 6), (-3, 4), mode="circular")


@pytest.mark.parametrize("kwargs", [{}, {"dilation": (1, 2), "padding": 1, "stride": 2}])
def test_unfold_and_fold_match_torch(kwargs):
    ye, _ = check_twins(lambda x: F.unfold(x, (2, 3), **kwargs), lambda x: TF.unfold(x, (2, 3), **kwargs),
                        [(2, 3, 7, 8)])
    blocks = ye.shape[-1]
    check_twins(lambda c: F.fold(c, (7, 8), (2, 3), **kwargs), lambda c: TF.fold(c, (7, 8), (2, 3), **kwargs),
                [(2, 18, blocks)])
    check_twins(lambda c: nn.Fold((7, 8), (2, 3), **kwargs)(c), lambda c: torch.nn.Fold((7, 8), (2, 3), **kwargs)(c),
                [(18, blocks)])
    x = ember.tensor(RNG.standard_normal((1, 2, 5, 4)), requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: F.unfold(x, 2, **kwargs), (x,))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (1, 2, 3, 4, 5)])
def test_unfold_of_a_wrong_rank_raises_torchs_error_type(shape):
    with pytest.raises(Exception) as t_err:
        TF.unfold(torch.ones(shape), 2)
    with pytest.raises(t_err.type, match="Expected 3D"):
        F.unfold(ember.ones(shape), 2)


def test_fold_errors_name_the_sizes():
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.fold(ember.ones(1, 4, 5), (3, 3), 2)
    with pytest.raises(RuntimeError, match="divisible"):
        F.fold(ember.ones(1, 5, 4), (3, 3), 2)


def copied(layer_e, layer_t):
    """The torch layer's parameters copied into the ember layer (float64 for both)."""
    layer_t.double()
    with torch.no_grad():
        for name, p in layer_t.named_parameters():
            getattr(layer_e, name).data = ember.tensor(p.detach().numpy())
    return layer_e, layer_t


LAYERS = [
    (lambda m: m.Conv1d(2, 4, 3, stride=2, padding=1), (2, 2, 9)),
    (lambda m: m.Conv2d(3, 4, (3, 2), padding="same", padding_mode="reflect", bias=False), (2, 3, 6, 5)),
    (lambda m: m.Conv2d(4, 6, 3, padding=2, padding_mode="circular", groups=2), (2, 4, 5, 5)),
    (lambda m: m.Conv2d(3, 4, 3, padding=1, padding_mode="replicate", dilation=2), (1, 3, 6, 6)),
    (lambda m: m.Conv3d(2, 2, 2, stride=(1, 2, 1)), (1, 2, 3, 4, 3)),
    (lambda m: m.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1), (2, 2, 5)),
    (lambda m: m.ConvTranspose2d(4, 2, 3, stride=2, padding=1, groups=2, dilation=2), (2, 4, 4, 3)),
]


@pytest.mark.parametrize("make, shape", LAYERS)
def test_layers_match_torch(make, shape):
    layer_e, layer_t = copied(make(nn), make(torch.nn))
    assert repr(layer_e) == repr(layer_t)
    assert list(layer_e.state_dict()) == list(layer_t.state_dict())
    check_twins(layer_e, layer_t, [shape])
    for name, p in layer_t.named_parameters():
        np.testing.assert_allclose(getattr(layer_e, name).grad.numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("make, shape", LAYERS[:3])
def test_default_initialisation_has_torchs_bounds(make, shape):
    layer = make(nn)
    fan_in = layer.weight[0].numel()
    bound = 1 / np.sqrt(fan_in)
    assert float(layer.weight.abs().max()) <= bound and float(layer.weight.abs().max()) > bound / 2
    if layer.bias is not None:
        assert float(layer.bias.abs().max()) <= bound


def test_transposed_layer_takes_an_output_size():
    layer_e, layer_t = copied(nn.ConvTranspose2d(2, 3, 3, stride=2), torch.nn.ConvTranspose2d(2, 3, 3, stride=2))
    x_e, x_t = pair((1, 2, 4, 4))
    np.testing.assert_allclose(layer_e(x_e, output_size=[10, 9]).detach().numpy(),
                               layer_t(x_t, output_size=[10, 9]).detach().numpy(), rtol=1e-10)
    with pytest.raises(ValueError):
        layer_e(x_e, output_size=[12, 12])


@pytest.mark.parametrize("call", [
    lambda m, F: F.conv2d(m.ones(1, 4, 5, 5), m.ones(2, 3, 3, 3)),  # channels
    lambda m, F: F.conv2d(m.ones(5, 5), m.ones(2, 3, 3, 3)),  # input rank
    lambda m, F: F.conv2d(m.ones(1, 3, 2, 2), m.ones(2, 3, 3, 3)),  # kernel larger than the input
    lambda m, F: F.conv2d(m.ones(1, 3, 5, 5), m.ones(2, 3, 3, 3, dtype=m.float64)),  # dtypes
    lambda m, F: F.conv1d(m.ones(1, 4, 5), m.ones(4, 2, 3), groups=3),  # groups
    lambda m, F: F.conv2d(m.ones(1, 3, 5, 5), m.ones(2, 3, 3, 3), m.ones(3)),  # bias size
])
def test_conv_errors_have_torchs_type(call):
    with pytest.raises(RuntimeError) as expected:
        call(torch, TF)
    with pytest.raises(expected.type):
        call(ember, F)


def test_integer_convolution_is_exact_and_bool_is_refused():
    x, w = np.arange(50).reshape(1, 2, 5, 5), np.arange(-9, 9).reshape(1, 2, 3, 3)
    y = F.conv2d(ember.tensor(x), ember.tensor(w), stride=2)
    assert y.dtype == ember.int64
    np.testing.assert_array_equal(y.numpy(), TF.conv2d(torch.tensor(x), torch.tensor(w), stride=2).numpy())
    with pytest.raises(NotImplementedError):
        F.conv2d(ember.ones(1, 1, 3, 3, dtype=ember.bool), ember.ones(1, 1, 2, 2, dtype=ember.bool))


@pytest.mark.parametrize("make", [
    lambda m: m.Conv2d(3, 4, 3, groups=2), lambda m: m.Conv2d(2, 4, 3, padding_mode="mirror"),
    lambda m: m.Conv2d(2, 4, 3, stride=2, padding="same"), lambda m: m.ConvTranspose2d(2, 4, 3, padding_mode="reflect"),
])
def test_layer_argument_errors_have_torchs_type(make):
    with pytest.raises(ValueError):
        make(torch.nn)
    with pytest.raises(ValueError):
        make(nn)


@pytest.mark.parametrize("make, shape", [(lambda m: m.Conv2d(3, 4, 3), (2, 3)),
                                         (lambda m: m.Conv2d(3, 4, 3), (1, 2, 5, 5)),
                                         (lambda m: m.ConvTranspose1d(3, 4, 3), (2, 4, 5))])
def test_layer_names_itself_and_the_wrong_input_shape(make, shape):
    with pytest.raises(RuntimeError):
        make(torch.nn)(torch.ones(shape))
    with pytest.raises(RuntimeError, match=r"Conv.*\(3, 4.*" + ", ".join(map(str, shape))):
        make(nn)(ember.ones(shape))


def test_flatten_unflatten_identity():
    x_e, x_t = pair((2, 3, 4, 5))
    for make in (lambda m: m.Flatten(), lambda m: m.Flatten(0, 2), lambda m: m.Unflatten(1, (1, 3)),
                 lambda m: m.Identity(54, unused=True)):
        assert repr(make(nn)) == repr(make(torch.nn))
        np.testing.assert_array_equal(make(nn)(x_e).detach().numpy(), make(torch.nn)(x_t).detach().numpy())
    with pytest.raises(TypeError):
        nn.Unflatten(1, 3)


def test_bilinear_matches_torch():
    layer_e, layer_t = copied(nn.Bilinear(3, 4, 5), torch.nn.Bilinear(3, 4, 5))
    assert repr(layer_e) == repr(layer_t)
    assert list(layer_e.state_dict()) == list(layer_t.state_dict())
    check_twins(layer_e, layer_t, [(2, 3), (2, 4)])
    np.testing.assert_allclose(layer_e.weight.grad.numpy(), layer_t.weight.grad.numpy(), rtol=1e-10)
    a, b = ember.randn(2, 3, dtype=ember.float64, requires_grad=True), ember.randn(2, 4, dtype=ember.float64)
    w = ember.randn(5, 3, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a, w: F.bilinear(a, b, w), (a, w))
    with pytest.raises(RuntimeError):
        F.bilinear(ember.ones(2, 2), ember.ones(2, 4), ember.ones(5, 3, 4))


@pytest.mark.parametrize("shape1, shape2", [((5, 2), (4, 3)), ((5, 2), (5, 1, 3)), ((2,), (5, 3)),
                                             ((3, 5, 2), (1, 5, 3))])
def test_bilinear_does_not_broadcast_its_batch_as_torch(shape1, shape2):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as error:
            lib.nn.functional.bilinear(lib.zeros(shape1), lib.zeros(shape2), lib.zeros(4, 2, 3))
        messages.append(str(error.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("name", ["conv2d", "conv_transpose2d"])
@pytest.mark.parametrize("options", [{"stride": 0}, {"stride": -1}, {"stride": (1, 0)}, {"padding": -1},
                                     {"dilation": 0}, {"stride": 0, "dilation": 0, "padding": -1}], ids=str)
def test_bad_geometry_raises_torchs_runtime_error(name, options):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as error:
            getattr(lib.nn.functional, name)(lib.zeros(1, 1, 3, 3), lib.zeros(1, 1, 1, 1), **options)
        messages.append(str(error.value))
    assert messages[1].split(",")[0] == messages[0].split(",")[0]


def test_lazy_linear_infers_in_features_and_becomes_linear():
    layer_e, layer_t = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    assert repr(layer_e) == repr(layer_t)
    x_e, x_t = pair((2, 5))
    assert layer_e(x_e.float()).shape == (2, 3)
    layer_t(x_t.float())
    assert repr(layer_e) == repr(layer_t) and type(layer_e) is nn.Linear
    assert list(layer_e.state_dict()) == list(layer_t.state_dict())
    assert float(layer_e.weight.abs().max()) <= 1 / np.sqrt(5)


def test_a_second_backward_of_a_retained_graph_gives_the_same_weight_gradient():
    x = ember.randn(2, 3, 6, 6, dtype=ember.float64)
    w = ember.randn(4, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    y = F.conv2d(x, w, padding=1).sum()
    (first,) = ember.autograd.grad(y, w, retain_graph=True)
    (second,) = ember.autograd.grad(y, w)
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    np.testing.assert_allclose(first.numpy(), _torch_weight_grad(x, w), rtol=1e-10)


def _torch_weight_grad(x, w):
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    TF.conv2d(torch.tensor(x.numpy()), wt, padding=1).sum().backward()
    return wt.grad.numpy()


@pytest.mark.parametrize("shape, pads, mode, kwargs", [
    ((3,), (1, 1), "reflect", {}),  # a 1-d input: no batch or channel dim
    ((1, 1, 2, 2, 2), (1,) * 8, "replicate", {}),  # four padded dims
    ((1, 2, 3), (1, 1), "reflect", {"dtype": "bool"}),
    ((1, 2, 3, 3), (1, 1, 1, 1), "replicate", {"dtype": "bool"}),
    ((1, 0, 3), (1, 1), "reflect", {}),  # an empty dim other than the batch
    ((2, 0, 3), (1, 1, 1, 1), "replicate", {}),
    ((1, 2, 3), (1, 1), "reflect", {"value": 1.0}),
    ((1, 2, 3), (1.0, 1), "constant", {}),
])
def test_non_constant_pad_errors_match_torch(shape, pads, mode, kwargs):
    errors = []
    options = {k: v for k, v in kwargs.items() if k != "dtype"}
    for lib in (torch, ember):
        dtype = getattr(lib, kwargs.get("dtype", "float32"))
        with pytest.raises(Exception) as error:
            lib.nn.functional.pad(lib.ones(shape, dtype=dtype), pads, mode=mode, **options)
        errors.append((error.type, str(error.value).split("\n")[0]))
    assert errors[1] == errors[0]


def test_non_constant_pads_of_an_empty_batch_and_of_bools_in_circular_mode_work_as_torch():
    for shape, pads, mode in [((0, 2, 3), (1, 1), "reflect"), ((0, 2, 2, 3), (1, 1, 1, 1), "replicate")]:
        check_twins(lambda x: F.pad(x, pads, mode=mode), lambda x: TF.pad(x, pads, mode=mode), [shape])
    np.testing.assert_array_equal(F.pad(ember.tensor([[[True, False]]]), (1, 1), mode="circular").numpy(),
                                  TF.pad(torch.tensor([[[True, False]]]), (1, 1), mode="circular").numpy())
