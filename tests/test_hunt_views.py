"""Views, strides and memory layout against torch: cases a bug hunt found where ember differed."""
import math

import pytest

from twins import LIBS, both, both_raise


def layout(t):
    """What a test of layout compares: the values, the shape and the strides."""
    return t, tuple(t.shape), t.stride(), t.is_contiguous()


# ----------------------------------------------------------------- resize_


@pytest.mark.parametrize("fmt, shape", [
    ("channels_last", (2, 3, 2, 2)), ("channels_last_3d", (2, 3, 2, 2, 1)), ("contiguous_format", (3, 8)),
])
@pytest.mark.parametrize("start", [(24,), (30,), (2, 3, 2, 2), (8, 3)])
def test_resize_lays_the_tensor_out_in_the_memory_format_asked(fmt, shape, start):
    def run(lib):
        x = lib.arange(float(math.prod(start))).reshape(start)
        if start == (8, 3):
            x = x.reshape(3, 8).t()
        x.resize_(shape, memory_format=getattr(lib, fmt))
        return layout(x) + (x._version,)
    both(run)


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format", "preserve_format", None])
@pytest.mark.parametrize("template_format", ["channels_last", "contiguous_format"])
def test_resize_as_takes_a_memory_format(fmt, template_format):
    def run(lib):
        x = lib.arange(24.)
        template = lib.zeros(2, 3, 2, 2).contiguous(memory_format=getattr(lib, template_format))
        x.resize_as_(template, memory_format=None if fmt is None else getattr(lib, fmt))
        return layout(x)
    both(run)


@pytest.mark.parametrize("shape, fmt, fragment", [
    ((2, 3, 4), "channels_last", "rank 4"), ((2, 3, 4, 1), "channels_last_3d", "rank 5"),
    ((3, 4), "preserve_format", "(?i)preserve"),
])
def test_resize_refuses_a_memory_format_that_does_not_fit(shape, fmt, fragment):
    both_raise(lambda lib: lib.arange(24.).resize_(shape, memory_format=getattr(lib, fmt)), RuntimeError, fragment)


# ----------------------------------------------------------------- the layout of pointwise results


def _laid_out(lib, how: str):
    x = lib.linspace(0.05, 0.95, 144, dtype=lib.float32).reshape(2, 3, 4, 6)
    return {"permuted": x.permute(0, 2, 3, 1), "channels_last": x.contiguous(memory_format=lib.channels_last),
            "stepped": x.transpose(1, 3)[:, ::2]}[how]


_KEEP_LAYOUT = [
    "acos", "asin", "atan", "asinh", "acosh", "atanh", "cosh", "sinh", "tan", "expm1", "exp2", "log1p", "log2",
    "log10", "i0", "digamma", "lgamma", "special.erfcx", "special.ndtri", "special.log_ndtr", "special.i0e",
    "special.i1", "special.i1e", "special.gammaln", "special.bessel_j0", "isreal", "nan_to_num",
]


def _op(lib, name: str):
    for part in name.split("."):
        lib = getattr(lib, part)
    return lib


@pytest.mark.parametrize("how", ["permuted", "channels_last", "stepped"])
@pytest.mark.parametrize("name", _KEEP_LAYOUT)
def test_pointwise_results_keep_the_inputs_memory_order(name, how):
    both(lambda lib: layout(_op(lib, name)(_laid_out(lib, how))))


@pytest.mark.parametrize("how", ["permuted", "channels_last"])
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.polygamma(1, x), lambda lib, x: lib.polygamma(2, x), lambda lib, x: lib.igamma(x, x + 1),
    lambda lib, x: lib.special.zeta(x + 1, x), lambda lib, x: lib.digamma(x.double()),
    lambda lib, x: lib.nan_to_num(x.int()), lambda lib, x: lib.nan_to_num(x / 0 - 1),
], ids=["trigamma", "polygamma2", "igamma", "zeta", "digamma64", "nan_to_num_int", "nan_to_num_inf"])
def test_more_pointwise_results_keep_the_inputs_memory_order(call, how):
    both(lambda lib: layout(call(lib, _laid_out(lib, how))))


@pytest.mark.parametrize("how", ["permuted", "channels_last"])
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.mvlgamma(x + 2, 3), lambda lib, x: lib.nn.functional.logsigmoid(x),
    lambda lib, x: lib.nn.functional.rrelu(x - 0.5),
], ids=["mvlgamma", "logsigmoid", "rrelu"])
def test_results_torch_writes_row_major(call, how):
    both(lambda lib: layout(call(lib, _laid_out(lib, how))))


# ----------------------------------------------------------------- squeeze, unsqueeze


@pytest.mark.parametrize("shape, dims", [((1, 2, 1, 3), (0, 0)), ((1, 2, 1, 3), (2, -2)), ((), (0, -1)),
                                         ((1, 2), [1, 1])])
def test_squeeze_refuses_a_dim_given_twice(shape, dims):
    both_raise(lambda lib: lib.zeros(shape).squeeze(dims), RuntimeError, "dim .* appears multiple times")
    both_raise(lambda lib: lib.zeros(shape).squeeze_(dims), RuntimeError, "dim .* appears multiple times")


# ----------------------------------------------------------------- view(dtype)


@pytest.mark.parametrize("make, dtype", [
    (lambda lib: lib.zeros(0, 3), "int16"), (lambda lib: lib.zeros(3, 0), "int16"), (lambda lib: lib.zeros(0, 4),
                                                                                        "float64"),
    (lambda lib: lib.arange(4.).unsqueeze(-1), "int16"), (lambda lib: lib.arange(8.).reshape(2, 4)[:, 2:], "float64"),
    (lambda lib: lib.arange(8.).reshape(2, 4).expand(3, 2, 4), "int8"),
], ids=["0x3-int16", "3x0-int16", "0x4-float64", "unsqueezed", "sliced", "expanded"])
def test_view_as_another_dtype(make, dtype):
    both(lambda lib: layout(make(lib).view(getattr(lib, dtype))))


@pytest.mark.parametrize("make, dtype, fragment", [
    (lambda lib: lib.arange(8.).as_strided((4, 1), (2, 2)), "int16", r"stride\(-1\) must be 1"),
    (lambda lib: lib.zeros(3, 0), "float64", r"stride\(0\) must be divisible by 2"),
    (lambda lib: lib.arange(24.).reshape(2, 3, 4).transpose(1, 2), "float64", r"size\(-1\) must be divisible by 2"),
], ids=["size-1-last-dim-strided", "empty", "size-before-stride"])
def test_view_as_another_dtype_refused_as_torch(make, dtype, fragment):
    both_raise(lambda lib: make(lib).view(getattr(lib, dtype)), RuntimeError, fragment)


@pytest.mark.parametrize("dtype", ["int32", "float64", "int16", "float32"])
@pytest.mark.parametrize("through", ["view", "source"])
def test_view_as_another_dtype_shares_the_version_counter(dtype, through):
    def run(lib):
        x = lib.arange(4.)
        v = x.view(getattr(lib, dtype))
        (v if through == "view" else x).add_(1)
        return x._version, v._version, v._is_view()
    both(run)


def test_a_change_through_a_dtype_view_is_seen_by_backward():
    def run(lib):
        x = lib.arange(1., 5., requires_grad=True)
        y = x * 1
        z = y * y
        y.detach().view(lib.int32).add_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
    for lib in LIBS:
        run(lib)


# ----------------------------------------------------------------- convolutions of channels-last tensors


def _convolutions(lib):
    F, cl, cl3 = lib.nn.functional, lib.channels_last, lib.channels_last_3d
    x = lib.linspace(-1, 1, 180, dtype=lib.float64).reshape(2, 3, 5, 6)
    w = lib.linspace(-1, 1, 48, dtype=lib.float64).reshape(4, 3, 2, 2)
    x5 = lib.linspace(-1, 1, 384, dtype=lib.float64).reshape(2, 3, 4, 4, 4)
    w5 = lib.linspace(-1, 1, 96, dtype=lib.float64).reshape(4, 3, 2, 2, 2)
    return {
        "input": lambda: F.conv2d(x.contiguous(memory_format=cl), w),
        "weight": lambda: F.conv2d(x, w.contiguous(memory_format=cl)),
        "bias_stride_padding": lambda: F.conv2d(x.contiguous(memory_format=cl), w, lib.ones(4, dtype=lib.float64),
                                                stride=2, padding=1, dilation=2),
        "depthwise": lambda: F.conv2d(x.contiguous(memory_format=cl), w[:3, :1], groups=3),
        "3d": lambda: F.conv3d(x5.contiguous(memory_format=cl3), w5),
        "transposed": lambda: F.conv_transpose2d(x.contiguous(memory_format=cl), w.transpose(0, 1)[:3]),
        "transposed_3d": lambda: F.conv_transpose3d(x5.contiguous(memory_format=cl3), w5.transpose(0, 1)[:3].contiguous()),
        "3d_single": lambda: F.conv3d(x5.float().contiguous(memory_format=cl3), w5.float()),
        "transposed_3d_single": lambda: F.conv_transpose3d(x5.float().contiguous(memory_format=cl3),
                                                           w5.float().transpose(0, 1)[:3].contiguous()),
        "permuted_not_channels_last": lambda: F.conv2d(x.permute(0, 1, 3, 2), w),
        "1d_permuted": lambda: F.conv1d(x[:, :, 0].transpose(1, 2).contiguous().transpose(1, 2), w[:, :, 0]),
    }


@pytest.mark.parametrize("case", list(_convolutions(LIBS[0])))
def test_a_convolution_keeps_channels_last(case):
    both(lambda lib: layout(_convolutions(lib)[case]()))


def test_the_gradient_of_a_channels_last_input_is_channels_last():
    def run(lib):
        x = lib.linspace(-1, 1, 180, dtype=lib.float64).reshape(2, 3, 5, 6).contiguous(
            memory_format=lib.channels_last).requires_grad_()
        w = lib.linspace(-1, 1, 48, dtype=lib.float64).reshape(4, 3, 2, 2).requires_grad_()
        y = lib.nn.functional.conv2d(x, w)
        y.backward(lib.ones_like(y))
        return layout(y) + layout(x.grad) + layout(w.grad)
    both(run)


@pytest.mark.parametrize("args", [{}, {"dtype": "float64"}])
def test_module_to_takes_a_memory_format(args):
    def run(lib):
        conv, norm = lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.BatchNorm2d(3)
        lib.nn.init.constant_(conv.weight, 0.5)
        lib.nn.init.constant_(conv.bias, 0.25)
        kwargs = {k: getattr(lib, v) for k, v in args.items()}
        conv.to(memory_format=lib.channels_last, **kwargs)
        norm.to(memory_format=lib.channels_last, **kwargs)
        x = lib.ones(2, 3, 5, 6, **kwargs)
        return layout(conv.weight) + layout(conv(x)) + (type(conv.weight).__name__, norm.num_batches_tracked.dtype ==
                                                         lib.int64)
    both(run)


# ----------------------------------------------------------------- as_strided


@pytest.mark.parametrize("call", [lambda x: x.as_strided((3, -4), (1, 1)), lambda x: x.as_strided_((-1,), (1,))],
                         ids=["as_strided", "as_strided_"])
def test_as_strided_refuses_a_negative_size(call):
    both_raise(lambda lib: call(lib.arange(24.)), RuntimeError)
