"""Complex convolutions (``F.conv*d``, ``F.conv_transpose*d``, ``nn.Conv2d``, ``nn.ConvTranspose2d``) against
torch: values, gradients of input, weight and bias (Wirtinger conjugates as torch's), second and forward-mode
derivatives, node names, layouts, and the errors of mixed dtypes and of torch's single kernels."""
import numpy as np
import pytest
import torch
import torch.utils.flop_counter

import ember

CASES = [  # (op, input shape, weight shape, options)
    ("conv1d", (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    ("conv1d", (3, 7), (2, 3, 2), dict(padding="same", dilation=2)),  # unbatched, asymmetric 'same'
    ("conv2d", (2, 3, 7, 6), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    ("conv2d", (1, 4, 5, 5), (4, 1, 3, 3), dict(padding="valid", groups=4)),
    ("conv3d", (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(padding=1, dilation=(2, 1, 1))),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ("conv_transpose2d", (2, 3, 4, 5), (3, 2, 3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2))),
    ("conv_transpose2d", (3, 4, 4), (3, 2, 2, 2), dict(dilation=2)),  # unbatched
    ("conv_transpose3d", (1, 2, 3, 3, 2), (2, 2, 2, 2, 3), dict(stride=2, dilation=(1, 2, 1))),
]
IDS = [f"{op}-{i}" for i, (op, *_) in enumerate(CASES)]
TOLERANCES = {"complex64": dict(rtol=1e-4, atol=1e-5), "complex128": dict(rtol=1e-10, atol=1e-12)}


def _complex(rng, shape, dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _bias_size(op: str, weight_shape, options: dict) -> int:
    return weight_shape[1] * options.get("groups", 1) if "transpose" in op else weight_shape[0]


def _arrays(op, input_shape, weight_shape, options, dtype, seed=0) -> list:
    rng = np.random.default_rng(seed)
    shapes = (input_shape, weight_shape, (_bias_size(op, weight_shape, options),))
    return [_complex(rng, shape, dtype) for shape in shapes]


def _leaves(lib, arrays) -> list:
    return [lib.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op, input_shape, weight_shape, options", CASES, ids=IDS)
def test_values_and_gradients_are_torchs(op, input_shape, weight_shape, options, dtype):
    arrays = _arrays(op, input_shape, weight_shape, options, dtype)
    results = {}
    for lib in (torch, ember):
        leaves = _leaves(lib, arrays)
        y = getattr(lib.nn.functional, op)(*leaves, **options)
        y.abs().sum().backward()
        results[lib] = [y.detach().numpy()] + [t.grad.numpy() for t in leaves]
    for mine, theirs in zip(results[ember], results[torch], strict=True):
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, **TOLERANCES[dtype])


@pytest.mark.parametrize("op, input_shape, weight_shape, options", CASES, ids=IDS)
def test_gradients_of_a_complex_grad_output_are_torchs(op, input_shape, weight_shape, options):
    arrays = _arrays(op, input_shape, weight_shape, options, "complex128", seed=1)
    results = []
    for lib in (torch, ember):
        leaves = _leaves(lib, arrays)
        y = getattr(lib.nn.functional, op)(*leaves, **options)
        seed = _complex(np.random.default_rng(2), tuple(y.shape), "complex128")
        results.append([g.numpy() for g in lib.autograd.grad(y, leaves, grad_outputs=lib.tensor(seed))])
    for mine, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op, input_shape, weight_shape, options", [CASES[i] for i in (0, 2, 5, 7)],
                         ids=[IDS[i] for i in (0, 2, 5, 7)])
def test_gradcheck_and_gradgradcheck(op, input_shape, weight_shape, options):
    leaves = _leaves(ember, _arrays(op, input_shape, weight_shape, options, "complex128", seed=3))
    function = getattr(ember.nn.functional, op)

    def convolve(x, w, b):
        return function(x, w, b, **options)

    assert ember.autograd.gradcheck(convolve, leaves)
    assert ember.autograd.gradgradcheck(convolve, leaves)


def test_second_derivatives_are_torchs():
    """The gradient of a gradient's norm, through the three real convolutions' double backward."""
    arrays = _arrays("conv2d", (1, 2, 5, 4), (3, 2, 2, 3), {}, "complex128", seed=4)
    results = []
    for lib in (torch, ember):
        leaves = _leaves(lib, arrays)
        y = lib.nn.functional.conv2d(*leaves, stride=2, padding=1)
        first = lib.autograd.grad(y.abs().pow(2).sum(), leaves, create_graph=True)
        second = lib.autograd.grad(sum(g.abs().pow(2).sum() for g in first), leaves)
        results.append([g.numpy() for g in second])
    for mine, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-10)


def _graph(node, depth: int = 0) -> list:
    """Every node's name, depth first, indented by its depth (torch prefixes its C++ leaf nodes' names)."""
    if node is None:
        return []
    names = ["  " * depth + node.name().removeprefix("torch::autograd::")]
    for edge, _ in node.next_functions:
        names += _graph(edge, depth + 1)
    return names


@pytest.mark.parametrize("op, input_shape, weight_shape, options", [CASES[0], CASES[1], CASES[6]],
                         ids=[IDS[0], IDS[1], IDS[6]])
def test_the_graph_is_torchs_node_for_node(op, input_shape, weight_shape, options):
    """torch composes its complex convolution too: the result's node is the last add's (a squeeze's when
    unbatched), over three real convolutions of the parts."""
    graphs = []
    for lib in (torch, ember):
        leaves = _leaves(lib, _arrays(op, input_shape, weight_shape, options, "complex64"))
        graphs.append(_graph(getattr(lib.nn.functional, op)(*leaves, **options).grad_fn))
    assert graphs[1] == graphs[0]
    assert {"ConvolutionBackward0", "ViewAsRealBackward0"} <= {name.strip() for name in graphs[0]}


LAYERS = {  # name: (class name, options)
    "zeros": ("Conv2d", dict(padding=1)),
    "reflect": ("Conv2d", dict(padding=1, padding_mode="reflect")),
    "circular": ("Conv2d", dict(padding=1, padding_mode="circular")),
    "transposed": ("ConvTranspose2d", dict(stride=2, padding=1, output_padding=1)),
}


@pytest.mark.parametrize("layer_name", LAYERS)
def test_a_complex64_layer_forward_and_backward_are_torchs(layer_name):
    class_name, options = LAYERS[layer_name]
    results = []
    for lib in (torch, ember):
        layer = getattr(lib.nn, class_name)(3, 4, 3, dtype=lib.complex64, **options)
        rng = np.random.default_rng(5)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(_complex(rng, tuple(layer.weight.shape), "complex64")))
            layer.bias.copy_(lib.tensor(_complex(rng, (4,), "complex64")))
        x = lib.tensor(_complex(rng, (2, 3, 5, 6), "complex64"), requires_grad=True)
        y = layer(x)
        y.abs().sum().backward()
        results.append([y.detach().numpy(), x.grad.numpy(), layer.weight.grad.numpy(), layer.bias.grad.numpy()])
    assert results[1][0].dtype == np.complex64
    for mine, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
@pytest.mark.parametrize("position", [0, 1, 2], ids=["input", "weight", "bias"])
@pytest.mark.parametrize("other", ["float64", "complex64"])
def test_a_mixed_dtype_is_refused_as_torch_refuses_it(op, position, other):
    """One operand real (or complex64) among complex128 ones: torch's error type, never a result."""
    arrays = _arrays(op, (1, 2, 4, 4), (2, 2, 3, 3), {}, "complex128")
    arrays[position] = arrays[position].real if other == "float64" else arrays[position].astype(other)
    errors = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as caught:
            getattr(lib.nn.functional, op)(*[lib.tensor(a) for a in arrays])
        errors.append(type(caught.value))
    assert errors[1] is errors[0] is RuntimeError


def test_a_channels_last_input_gives_torchs_layout():
    arrays = _arrays("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), {}, "complex64", seed=6)
    layouts = []
    for lib in (torch, ember):
        x, w, b = (lib.tensor(a) for a in arrays)
        y = lib.nn.functional.conv2d(x.to(memory_format=lib.channels_last), w, b, padding=1)
        layouts.append((y.is_contiguous(), y.is_contiguous(memory_format=lib.channels_last)))
    assert layouts[1] == layouts[0] == (False, True)


def test_forward_mode_derivative_is_torchs():
    arrays = _arrays("conv_transpose2d", (1, 2, 3, 4), (2, 3, 2, 2), {}, "complex128", seed=7)
    tangents = _arrays("conv_transpose2d", (1, 2, 3, 4), (2, 3, 2, 2), {}, "complex128", seed=8)
    results = []
    for lib in (torch, ember):
        def convolve(x, w, b):
            return lib.nn.functional.conv_transpose2d(x, w, b, stride=2)
        _, tangent = lib.func.jvp(convolve, tuple(lib.tensor(a) for a in arrays),
                                  tuple(lib.tensor(t) for t in tangents))
        results.append(tangent.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)


def _kernel_call(lib, name: str, dims: int):
    """torch's single convolution kernels, which take no complex operand (only F.conv*d compose one)."""
    ones, zeros = [1] * dims, [0] * dims
    grad = getattr(lib.nn.grad, f"conv{dims}d_{name.split('_')[-1]}", None)
    return {
        "convolution": lambda x, w, g: lib.convolution(x, w, None, ones, zeros, ones, False, zeros, 1),
        "convolution_transposed": lambda x, w, g: lib.convolution(g, w, None, ones, zeros, ones, True, zeros, 1),
        "grad_input": lambda x, w, g: grad(x.shape, w, g),
        "grad_weight": lambda x, w, g: grad(x, w.shape, g),
    }[name]


@pytest.mark.parametrize("complex_operands", ["xwg", "x", "w", "g"])
@pytest.mark.parametrize("name", ["convolution", "convolution_transposed", "grad_input", "grad_weight"])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_torchs_single_kernels_refuse_complex_operands_as_torch_does(dims, name, complex_operands):
    shapes = {"x": (1, 2) + (4,) * dims, "w": (3, 2) + (2,) * dims, "g": (1, 3) + (3,) * dims}
    rng = np.random.default_rng(9)
    arrays = [_complex(rng, shape, "complex128") if key in complex_operands else rng.standard_normal(shape)
              for key, shape in shapes.items()]
    outcomes = []
    for lib in (torch, ember):
        try:
            _kernel_call(lib, name, dims)(*[lib.tensor(a) for a in arrays])
            outcomes.append(None)
        except Exception as error:  # (the type compared with torch's below)
            outcomes.append(type(error))
    assert outcomes[1] is outcomes[0]
    if complex_operands == "xwg":
        assert outcomes[0] is NotImplementedError


@pytest.mark.parametrize("op, weight_shape", [("conv2d", (3, 2, 3, 3)), ("conv_transpose2d", (2, 3, 3, 3))])
def test_the_flop_counter_counts_three_real_convolutions_as_torch(op, weight_shape):
    arrays = _arrays(op, (1, 2, 5, 5), weight_shape, {}, "complex64", seed=10)
    counts = []
    for lib in (torch, ember):
        leaves = _leaves(lib, arrays[:2])
        with lib.utils.flop_counter.FlopCounterMode(display=False) as counter:
            getattr(lib.nn.functional, op)(*leaves).abs().sum().backward()
        counts.append(sorted((str(op), flops) for op, flops in counter.get_flop_counts()["Global"].items()))
    assert counts[1] == counts[0]
    assert len(counts[0]) == 2
