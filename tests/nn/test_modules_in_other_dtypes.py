"""Every nn layer built in torch and in ember with the same weights, moved to float16, bfloat16 or float64, and run
on the same input: the same output dtype and values, the same parameter and input gradients (of the output's sum in
single precision), the same buffers after a training-mode forward, or the same error type where torch refuses.

Also the mistakes users make with dtypes: an integer, double, half or bfloat16 input to a float32 model, a float32
input to a half, bfloat16 or double one; layers built with ``dtype=``; and functional forms given 16-bit inputs or
mixed dtypes. The sweep found the bugs its commits list (results in float32 for 16-bit inputs, crashes on bfloat16,
integer inputs computed where torch refuses, mixed dtypes promoted where torch refuses).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember
from twins import assert_same_outcome, both_raise

pytest.importorskip("ml_dtypes")

def _long(shape, high):
    return ("long", shape, high)


def _unit(shape):
    return ("unit", shape)


def _sign(shape):
    return ("sign", shape)


def _fixed(values):
    return ("fixed", values)


# name: (build(nn), inputs, train); an input is a shape (standard normal values) or a (kind, ...) tuple above.
CASES = {
    "Identity": (lambda nn: nn.Identity(), [(2, 3)], True),
    "Linear": (lambda nn: nn.Linear(4, 3), [(2, 4)], True),
    "Bilinear": (lambda nn: nn.Bilinear(3, 4, 2), [(2, 3), (2, 4)], True),
    "Flatten": (lambda nn: nn.Flatten(), [(2, 3, 2)], True),
    "Unflatten": (lambda nn: nn.Unflatten(1, (2, 3)), [(2, 6)], True),
    "Conv1d": (lambda nn: nn.Conv1d(2, 3, 3, padding=1), [(2, 2, 6)], True),
    "Conv1d-reflect-dilated": (lambda nn: nn.Conv1d(2, 4, 3, padding=2, dilation=2, groups=2,
                                                    padding_mode="reflect"), [(1, 2, 7)], True),
    "Conv2d": (lambda nn: nn.Conv2d(2, 3, 3, stride=2, padding=1), [(1, 2, 5, 5)], True),
    "Conv2d-circular": (lambda nn: nn.Conv2d(2, 2, 3, padding="same", padding_mode="circular"), [(1, 2, 4, 4)],
                        True),
    "Conv3d": (lambda nn: nn.Conv3d(1, 2, 2), [(1, 1, 3, 3, 3)], True),
    "ConvTranspose1d": (lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2), [(1, 2, 4)], True),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1, output_padding=1),
                        [(1, 2, 3, 3)], True),
    "ConvTranspose3d": (lambda nn: nn.ConvTranspose3d(1, 2, 2), [(1, 1, 2, 2, 2)], True),
    "MaxPool1d": (lambda nn: nn.MaxPool1d(2), [(1, 2, 6)], True),
    "MaxPool2d": (lambda nn: nn.MaxPool2d(2, ceil_mode=True), [(1, 2, 5, 5)], True),
    "MaxPool3d": (lambda nn: nn.MaxPool3d(2), [(1, 1, 4, 4, 4)], True),
    "AvgPool1d": (lambda nn: nn.AvgPool1d(3, padding=1, count_include_pad=False), [(1, 2, 6)], True),
    "AvgPool2d": (lambda nn: nn.AvgPool2d(2), [(1, 2, 4, 4)], True),
    "AvgPool3d": (lambda nn: nn.AvgPool3d(2), [(1, 1, 4, 4, 4)], True),
    "LPPool1d": (lambda nn: nn.LPPool1d(2, 2), [(1, 2, 6)], True),
    "LPPool2d": (lambda nn: nn.LPPool2d(2, 2), [(1, 2, 4, 4)], True),
    "LPPool3d": (lambda nn: nn.LPPool3d(2, 2), [(1, 1, 2, 4, 4)], True),
    "AdaptiveAvgPool1d": (lambda nn: nn.AdaptiveAvgPool1d(3), [(1, 2, 7)], True),
    "AdaptiveAvgPool2d": (lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [(1, 2, 5, 5)], True),
    "AdaptiveAvgPool3d": (lambda nn: nn.AdaptiveAvgPool3d(2), [(1, 1, 3, 3, 3)], True),
    "AdaptiveMaxPool1d": (lambda nn: nn.AdaptiveMaxPool1d(3), [(1, 2, 7)], True),
    "AdaptiveMaxPool2d": (lambda nn: nn.AdaptiveMaxPool2d(2), [(1, 2, 5, 5)], True),
    "AdaptiveMaxPool3d": (lambda nn: nn.AdaptiveMaxPool3d(2), [(1, 1, 3, 3, 3)], True),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(3), [(4, 3)], True),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(2, momentum=None), [(3, 2, 2, 2)], True),
    "BatchNorm3d": (lambda nn: nn.BatchNorm3d(2), [(2, 2, 2, 2, 2)], True),
    "BatchNorm2d-eval": (lambda nn: nn.BatchNorm2d(2), [(3, 2, 2, 2)], False),
    "LayerNorm": (lambda nn: nn.LayerNorm(4), [(2, 3, 4)], True),
    "GroupNorm": (lambda nn: nn.GroupNorm(2, 4), [(2, 4, 3)], True),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(2, affine=True, track_running_stats=True), [(2, 2, 5)], True),
    "InstanceNorm2d": (lambda nn: nn.InstanceNorm2d(2), [(2, 2, 3, 3)], True),
    "InstanceNorm3d": (lambda nn: nn.InstanceNorm3d(2, affine=True), [(1, 2, 2, 2, 3)], True),
    "LocalResponseNorm": (lambda nn: nn.LocalResponseNorm(2), [(1, 4, 3, 3)], True),
    "CrossMapLRN2d": (lambda nn: nn.CrossMapLRN2d(3, alpha=0.1), [(1, 4, 2, 2)], True),
    "RMSNorm": (lambda nn: nn.RMSNorm(4), [(2, 3, 4)], True),
    "Embedding": (lambda nn: nn.Embedding(5, 3, padding_idx=0), [_long((2, 3), 5)], True),
    "EmbeddingBag-mean": (lambda nn: nn.EmbeddingBag(5, 3), [_long((2, 3), 5)], True),
    "EmbeddingBag-max": (lambda nn: nn.EmbeddingBag(5, 3, mode="max"), [_long((2, 3), 5)], True),
    "EmbeddingBag-sum-offsets": (lambda nn: nn.EmbeddingBag(5, 3, mode="sum"), [_long((6,), 5), _fixed([0, 2, 2])],
                                 True),
    "Dropout-eval": (lambda nn: nn.Dropout(0.5), [(2, 3)], False),
    "Dropout1d-eval": (lambda nn: nn.Dropout1d(0.5), [(1, 2, 3)], False),
    "Dropout2d-eval": (lambda nn: nn.Dropout2d(0.5), [(1, 2, 3, 3)], False),
    "Dropout3d-eval": (lambda nn: nn.Dropout3d(0.5), [(1, 2, 2, 2, 2)], False),
    "FeatureAlphaDropout-eval": (lambda nn: nn.FeatureAlphaDropout(0.5), [(1, 2, 3, 3)], False),
    "AlphaDropout-eval": (lambda nn: nn.AlphaDropout(0.5), [(2, 3)], False),
    "ReLU": (lambda nn: nn.ReLU(), [(2, 5)], True),
    "ReLU6": (lambda nn: nn.ReLU6(), [(2, 5)], True),
    "LeakyReLU": (lambda nn: nn.LeakyReLU(0.2), [(2, 5)], True),
    "PReLU": (lambda nn: nn.PReLU(3), [(2, 3, 4)], True),
    "RReLU-eval": (lambda nn: nn.RReLU(), [(2, 5)], False),
    "ELU": (lambda nn: nn.ELU(), [(2, 5)], True),
    "CELU": (lambda nn: nn.CELU(0.5), [(2, 5)], True),
    "SELU": (lambda nn: nn.SELU(), [(2, 5)], True),
    "GELU": (lambda nn: nn.GELU(), [(2, 5)], True),
    "GELU-tanh": (lambda nn: nn.GELU("tanh"), [(2, 5)], True),
    "SiLU": (lambda nn: nn.SiLU(), [(2, 5)], True),
    "Mish": (lambda nn: nn.Mish(), [(2, 5)], True),
    "Softplus": (lambda nn: nn.Softplus(beta=2.0), [(2, 5)], True),
    "Softsign": (lambda nn: nn.Softsign(), [(2, 5)], True),
    "Softshrink": (lambda nn: nn.Softshrink(), [(2, 5)], True),
    "Hardshrink": (lambda nn: nn.Hardshrink(), [(2, 5)], True),
    "Tanhshrink": (lambda nn: nn.Tanhshrink(), [(2, 5)], True),
    "Threshold": (lambda nn: nn.Threshold(0.1, 20.0), [(2, 5)], True),
    "Hardtanh": (lambda nn: nn.Hardtanh(-0.5, 0.5), [(2, 5)], True),
    "Hardswish": (lambda nn: nn.Hardswish(), [(2, 5)], True),
    "Hardsigmoid": (lambda nn: nn.Hardsigmoid(), [(2, 5)], True),
    "LogSigmoid": (lambda nn: nn.LogSigmoid(), [(2, 5)], True),
    "Sigmoid": (lambda nn: nn.Sigmoid(), [(2, 5)], True),
    "Tanh": (lambda nn: nn.Tanh(), [(2, 5)], True),
    "GLU": (lambda nn: nn.GLU(), [(2, 4)], True),
    "Softmax": (lambda nn: nn.Softmax(dim=1), [(2, 5)], True),
    "LogSoftmax": (lambda nn: nn.LogSoftmax(dim=1), [(2, 5)], True),
    "Softmin": (lambda nn: nn.Softmin(dim=1), [(2, 5)], True),
    "Softmax2d": (lambda nn: nn.Softmax2d(), [(1, 3, 2, 2)], True),
    "RNNCell": (lambda nn: nn.RNNCell(3, 4), [(2, 3)], True),
    "LSTMCell": (lambda nn: nn.LSTMCell(3, 4), [(2, 3)], True),
    "GRUCell": (lambda nn: nn.GRUCell(3, 4), [(2, 3)], True),
    "RNN": (lambda nn: nn.RNN(3, 4, num_layers=2, bidirectional=True), [(5, 2, 3)], True),
    "LSTM": (lambda nn: nn.LSTM(3, 4, batch_first=True, proj_size=2), [(2, 5, 3)], True),
    "GRU": (lambda nn: nn.GRU(3, 4), [(5, 2, 3)], True),
    "LSTM-bidirectional": (lambda nn: nn.LSTM(3, 4, bidirectional=True), [(3, 2, 3)], True),
    "RNN-relu-unbatched": (lambda nn: nn.RNN(3, 4, nonlinearity="relu", bias=False), [(5, 3)], True),
    "MultiheadAttention": (lambda nn: nn.MultiheadAttention(4, 2, batch_first=True), [(2, 3, 4)] * 3, True),
    "TransformerEncoderLayer": (lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True),
                                [(2, 3, 4)], True),
    "MultiheadAttention-masked": (lambda nn: nn.MultiheadAttention(4, 2, kdim=3, vdim=2),
                                  [(3, 1, 4), (2, 1, 3), (2, 1, 2), _fixed([[False, True]])], True),
    "TransformerEncoder": (lambda nn: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu"), 2, enable_nested_tensor=False),
        [(3, 2, 4)], True),
    "Transformer": (lambda nn: nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, batch_first=True), [(2, 3, 4), (2, 2, 4)],
                    True),
    "TransformerDecoderLayer": (lambda nn: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, norm_first=True),
                                [(3, 2, 4), (2, 2, 4)], True),
    "Upsample-nearest": (lambda nn: nn.Upsample(scale_factor=2), [(1, 2, 3, 3)], True),
    "Upsample-bilinear": (lambda nn: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                          [(1, 2, 3, 3)], True),
    "Upsample-bicubic": (lambda nn: nn.Upsample(size=(4, 5), mode="bicubic", align_corners=True),
                         [(1, 1, 3, 3)], True),
    "Upsample-bicubic-scaled": (lambda nn: nn.Upsample(scale_factor=(1.5, 0.75), mode="bicubic"), [(1, 2, 4, 4)],
                                True),
    "Upsample-linear": (lambda nn: nn.Upsample(scale_factor=2, mode="linear"), [(1, 2, 3)], True),
    "UpsamplingNearest2d": (lambda nn: nn.UpsamplingNearest2d(scale_factor=2), [(1, 1, 2, 3)], True),
    "UpsamplingBilinear2d": (lambda nn: nn.UpsamplingBilinear2d(size=(3, 4)), [(1, 1, 2, 3)], True),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), [(1, 4, 2, 2)], True),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), [(1, 1, 4, 4)], True),
    "ZeroPad1d": (lambda nn: nn.ZeroPad1d((1, 2)), [(1, 2, 2)], True),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d(1), [(1, 1, 2, 2)], True),
    "ZeroPad3d": (lambda nn: nn.ZeroPad3d(1), [(1, 1, 2, 2, 2)], True),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d((1, 0, 2, 1)), [(1, 1, 3, 3)], True),
    "ReflectionPad3d": (lambda nn: nn.ReflectionPad3d(1), [(1, 1, 2, 2, 2)], True),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d(2), [(1, 2, 3)], True),
    "ReplicationPad3d": (lambda nn: nn.ReplicationPad3d(1), [(1, 1, 2, 2, 2)], True),
    "CircularPad2d": (lambda nn: nn.CircularPad2d(1), [(1, 1, 2, 3)], True),
    "CircularPad3d": (lambda nn: nn.CircularPad3d(1), [(1, 1, 2, 2, 2)], True),
    "ConstantPad2d": (lambda nn: nn.ConstantPad2d((1, 0, 0, 2), -1.0), [(1, 2, 2)], True),
    "ConstantPad3d": (lambda nn: nn.ConstantPad3d(1, 0.5), [(1, 1, 1, 2, 2)], True),
    "ReflectionPad1d": (lambda nn: nn.ReflectionPad1d(2), [(1, 2, 4)], True),
    "ReplicationPad2d": (lambda nn: nn.ReplicationPad2d(1), [(1, 1, 3, 3)], True),
    "CircularPad1d": (lambda nn: nn.CircularPad1d(1), [(1, 2, 3)], True),
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d(1, 2.5), [(1, 2, 3)], True),
    "Fold": (lambda nn: nn.Fold((3, 3), 2), [(1, 4, 4)], True),
    "Unfold": (lambda nn: nn.Unfold(2), [(1, 1, 3, 3)], True),
    "ChannelShuffle": (lambda nn: nn.ChannelShuffle(2), [(1, 4, 2, 2)], True),
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(), [(2, 4), (2, 4)], True),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(), [(2, 4), (2, 4)], True),
    # losses
    "MSELoss": (lambda nn: nn.MSELoss(), [(2, 3), (2, 3)], True),
    "L1Loss": (lambda nn: nn.L1Loss(), [(2, 3), (2, 3)], True),
    "SmoothL1Loss": (lambda nn: nn.SmoothL1Loss(), [(2, 3), (2, 3)], True),
    "HuberLoss": (lambda nn: nn.HuberLoss(reduction="sum"), [(2, 3), (2, 3)], True),
    "CrossEntropyLoss": (lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1), [(3, 4), _long((3,), 4)], True),
    "CrossEntropyLoss-probs": (lambda nn: nn.CrossEntropyLoss(), [(3, 4), _unit((3, 4))], True),
    "NLLLoss": (lambda nn: nn.NLLLoss(reduction="none"), [(3, 4), _long((3,), 4)], True),
    "BCELoss": (lambda nn: nn.BCELoss(), [_unit((2, 3)), _unit((2, 3))], True),
    "BCEWithLogitsLoss": (lambda nn: nn.BCEWithLogitsLoss(), [(2, 3), _unit((2, 3))], True),
    "KLDivLoss": (lambda nn: nn.KLDivLoss(reduction="batchmean"), [(2, 3), _unit((2, 3))], True),
    "PoissonNLLLoss": (lambda nn: nn.PoissonNLLLoss(), [(2, 3), _unit((2, 3))], True),
    "GaussianNLLLoss": (lambda nn: nn.GaussianNLLLoss(), [(2, 3), (2, 3), _unit((2, 3))], True),
    "CosineEmbeddingLoss": (lambda nn: nn.CosineEmbeddingLoss(), [(2, 3), (2, 3), _sign((2,))], True),
    "MarginRankingLoss": (lambda nn: nn.MarginRankingLoss(0.1), [(3,), (3,), _sign((3,))], True),
    "HingeEmbeddingLoss": (lambda nn: nn.HingeEmbeddingLoss(), [(2, 3), _sign((2, 3))], True),
    "TripletMarginLoss": (lambda nn: nn.TripletMarginLoss(), [(2, 3), (2, 3), (2, 3)], True),
    "MultiLabelMarginLoss": (lambda nn: nn.MultiLabelMarginLoss(), [(2, 4), _long((2, 4), 4)], True),
    "MultiLabelSoftMarginLoss": (lambda nn: nn.MultiLabelSoftMarginLoss(), [(2, 4), _unit((2, 4))], True),
    "MultiMarginLoss": (lambda nn: nn.MultiMarginLoss(), [(3, 4), _long((3,), 4)], True),
    "SoftMarginLoss": (lambda nn: nn.SoftMarginLoss(), [(2, 3), _sign((2, 3))], True),
    "TripletMarginWithDistanceLoss": (lambda nn: nn.TripletMarginWithDistanceLoss(margin=0.5),
                                      [(2, 3), (2, 3), (2, 3)], True),
    "CTCLoss": (lambda nn: nn.CTCLoss(), [(4, 2, 3), _fixed([[1, 2], [2, 2]]), _fixed([4, 3]), _fixed([2, 1])], True),
    "AdaptiveLogSoftmaxWithLoss": (lambda nn: nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4], div_value=2.0),
                                   [(3, 4), _fixed([0, 3, 5])], True),
    "CrossEntropyLoss-2d-weighted": (lambda nn: nn.CrossEntropyLoss(weight=nn.Linear(3, 1).weight.detach()[0].abs(),
                                                                   ignore_index=1), [(2, 3, 2, 2), _long((2, 2, 2), 3)],
                                     True),
    "NLLLoss-weighted": (lambda nn: nn.NLLLoss(weight=nn.Linear(3, 1).weight.detach()[0].abs(), ignore_index=0),
                         [(4, 3), _long((4,), 3)], True),
}
DTYPES = ("float16", "bfloat16", "float64")

# Where ember deliberately differs (each checked by hand against torch 2.13), keyed "case/dtype":
DIFFERENCES = {
    # torch averages integer windows in integers; ember refuses integer local response normalisation
    "LocalResponseNorm/int64": "torch averages integer windows in integers; ember refuses them here",
}
# torch has no 16-bit CPU kernel for these; ember computes them, checked against torch in single precision on the
# same (rounded) weights and inputs, its results rounded to the 16-bit format
NO_TORCH_KERNEL = {f"{name}/{dtype}" for name in ("AvgPool3d", "LPPool3d", "LocalResponseNorm", "MultiLabelMarginLoss",
                                                  "MultiMarginLoss", "CTCLoss") for dtype in ("float16", "bfloat16")}
# torch's legacy CrossMapLRN2d has a hand-written backward that is not the gradient of its forward (it is that of a
# centred window); ember's is the gradient of the forward, checked by gradcheck below
FORWARD_ONLY = {"CrossMapLRN2d"}
TOLERANCES = {
    # torch's float64 hardsigmoid gradient is 1/6 rounded to single precision (a relative error of 3e-8)
    "Hardsigmoid/float64": 1e-7,
    # gradients summed over time steps, each rounded to bfloat16: torch's and ember's both lie up to 8e-2 from the
    # float64 gradient, in different places
    "RNN/bfloat16": 1e-1,
}


def _array(spec, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if isinstance(spec[0], str):
        kind, shape = spec[0], spec[1]
        if kind == "long":
            return rng.integers(0, spec[2], shape)
        if kind == "fixed":
            return np.array(spec[1])
        if kind == "unit":
            return rng.uniform(0.05, 0.95, shape).astype(np.float32)
        return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0).astype(np.float32)
    return rng.standard_normal(spec).astype(np.float32)


def _inputs(lib, arrays: list[np.ndarray], specs: list, dtype: str) -> list:
    """The arrays as ``lib`` tensors: floating ones in ``dtype``, normal ones leaves that want a gradient
    (targets do not: torch refuses a gradient for some)."""
    return [t.requires_grad_(not isinstance(spec[0], str)) if t.is_floating_point() else t
            for t, spec in zip(_converted(lib, arrays, dtype), specs, strict=True)]


def _converted(lib, arrays: list[np.ndarray], dtype: str) -> list:
    """The arrays as ``lib`` tensors, floating ones in ``dtype``."""
    return [lib.tensor(a).to(getattr(lib, dtype)) if a.dtype.kind == "f" else lib.tensor(a) for a in arrays]


def _twins(name: str):
    build, _, train = CASES[name]
    torch.manual_seed(0)
    theirs = build(torch.nn)
    mine = build(ember.nn)
    mine.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return theirs.train(train), mine.train(train)


def _leaves(out) -> list:
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in _leaves(item)]
    return [] if out is None else [out]


def _run(module, lib, arrays, specs, dtype: str):
    """Forward and backward of the outputs' sum in single precision: (outputs, input gradients, parameter
    gradients, buffers), or the error."""
    xs = _inputs(lib, arrays, specs, dtype)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _leaves(module(*xs))
            if type(module).__name__ in FORWARD_ONLY:
                return out, [], [], []
            differentiable = [o for o in out if o.requires_grad]
            if differentiable:
                sum(o.float().sum() for o in differentiable).backward()
    except Exception as error:  # compared with the other library's outcome
        return error
    grads = [x.grad for x in xs if x.requires_grad]
    params = [p.grad for _, p in sorted(module.named_parameters())]
    buffers = [b for _, b in sorted(module.named_buffers())]
    return out, grads, params, buffers


def _values(t) -> np.ndarray:
    return np.asarray((t.double() if t.dtype.is_floating_point else t).detach().numpy())


def _same(what: str, mine, theirs, dtype: str, tol: float | None = None) -> None:
    assert (mine is None) == (theirs is None), f"{what}: ember {mine!r}, torch {theirs!r}"
    if theirs is None:
        return
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], \
        f"{what}: dtype {mine.dtype} != {theirs.dtype}"
    assert tuple(mine.shape) == tuple(theirs.shape), f"{what}: shape {tuple(mine.shape)} != {tuple(theirs.shape)}"
    tol = tol or {"float64": 1e-10, "float32": 1e-5}.get(dtype, 2e-2)
    np.testing.assert_allclose(_values(mine), _values(theirs), rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CASES)
def test_module_in_another_dtype_matches_torch(name: str, dtype: str):
    if f"{name}/{dtype}" in DIFFERENCES:
        pytest.skip(DIFFERENCES[f"{name}/{dtype}"])
    theirs, mine = _twins(name)
    theirs.to(getattr(torch, dtype))
    mine.to(getattr(ember, dtype))
    specs = CASES[name][1]
    arrays = [_array(spec, seed) for seed, spec in enumerate(specs)]
    actual = _run(mine, ember, arrays, specs, dtype)
    if f"{name}/{dtype}" in NO_TORCH_KERNEL:
        expected = _single_precision_reference(theirs.float(), arrays, specs, dtype)
    else:
        expected = _run(theirs, torch, arrays, specs, dtype)
    _compare(f"{name} in {dtype}", actual, expected, dtype, TOLERANCES.get(f"{name}/{dtype}"))


def _compare(what: str, actual, expected, dtype: str, tol: float | None = None) -> None:
    """The same error type, or the same outputs, input and parameter gradients and buffers."""
    if not assert_same_outcome(actual, expected, what):
        return
    for part, a, b in zip(("output", "input grad", "parameter grad", "buffer"), actual, expected, strict=True):
        assert len(a) == len(b), f"{what}: {len(a)} {part}s != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(f"{what}: {part} {i}", x, y, dtype, tol)


def _single_precision_reference(theirs, arrays: list[np.ndarray], specs: list, dtype: str):
    """torch's results in float32 from the inputs rounded to ``dtype``, each result rounded to ``dtype``."""
    low = getattr(torch, dtype)
    rounded = [torch.tensor(a).to(low).float().numpy() if a.dtype.kind == "f" else a for a in arrays]
    result = _run(theirs, torch, rounded, specs, "float32")
    return [[None if t is None else t.to(low) if t.dtype.is_floating_point else t for t in part] for part in result]


def _outcome(module, lib, xs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return module(*xs)
    except Exception as error:  # compared with the other library's outcome
        return error


# (the module's dtype, the input's): an integer or double input to a single-precision model, a bfloat16 input to
# it, and a single-precision input to a model moved to bfloat16
PAIRS = (("float32", "int64"), ("float32", "float64"), ("float32", "bfloat16"), ("bfloat16", "float32"),
         ("float32", "float16"), ("float64", "float32"), ("float16", "float32"))
MISMATCHES = [pytest.param(name, module, given, id=f"{name}-{module}-{given}") for name in CASES
              for module, given in PAIRS if name != "Identity"]


@pytest.mark.parametrize("name,module_dtype,dtype", MISMATCHES)
def test_a_module_given_another_dtype_answers_as_torch(name: str, module_dtype: str, dtype: str):
    """torch's error type, or its results (outputs, gradients, buffers) in its dtypes."""
    if f"{name}/{dtype}" in DIFFERENCES and module_dtype == "float32":
        pytest.skip(DIFFERENCES[f"{name}/{dtype}"])
    if f"{name}/{dtype}" in NO_TORCH_KERNEL:
        pytest.skip("torch has no kernel for this input; ember's result is checked above")
    theirs, mine = _twins(name)
    theirs.to(getattr(torch, module_dtype))
    mine.to(getattr(ember, module_dtype))
    specs = CASES[name][1]
    arrays = [_array(spec, seed) for seed, spec in enumerate(specs)]
    if dtype == "int64":
        arrays = [a.astype(np.int64) if a.dtype.kind == "f" else a for a in arrays]
    expected, actual = (_run(model, lib, arrays, specs, dtype) for model, lib in ((theirs, torch), (mine, ember)))
    _compare(f"{name} ({module_dtype}) given {dtype}", actual, expected,
             "float16" if {module_dtype, dtype} & {"float16", "bfloat16"} else "float32")


def test_cross_map_lrn2d_gradients_are_those_of_its_forward():
    layer = ember.nn.CrossMapLRN2d(3, alpha=0.5, beta=0.75, k=1.5)
    x = ember.tensor(np.random.default_rng(0).standard_normal((2, 4, 2, 2)), requires_grad=True)
    assert ember.autograd.gradcheck(layer, (x,))
    assert ember.autograd.gradgradcheck(layer, (x,))


@pytest.mark.parametrize("mask_shape, query_shape", [((5,), (3, 2, 4)), ((2, 4), (3, 2, 4)), ((2, 5), (3, 4))])
def test_multihead_attention_refuses_a_padding_mask_of_the_wrong_shape_as_torch(mask_shape, query_shape):
    def program(lib):
        layer = lib.nn.MultiheadAttention(4, 2)
        query = lib.ones(query_shape)
        key = lib.ones((5,) + query_shape[1:])
        return layer(query, key, key, key_padding_mask=lib.zeros(mask_shape, dtype=lib.bool))

    both_raise(program, AssertionError, r"key_padd")


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_byte_images_resize_as_torch(mode: str):
    """uint8 in, uint8 out; torch's byte kernels weigh in fixed point, ember in single precision: within 2."""
    image = np.random.default_rng(0).integers(0, 256, (1, 2, 5, 6)).astype(np.uint8)
    theirs, mine = (lib.nn.functional.interpolate(lib.tensor(image), size=(7, 4), mode=mode) for lib in (torch, ember))
    assert mine.dtype == ember.uint8
    np.testing.assert_allclose(mine.numpy().astype(int), theirs.numpy().astype(int), atol=2)


@pytest.mark.parametrize("mode, shape", [("nearest", (1, 1, 3)), ("linear", (1, 1, 3)), ("bicubic", (1, 1, 3, 3)),
                                         ("bilinear", (1, 1, 3, 3)), ("trilinear", (1, 1, 2, 2, 2))])
def test_integer_images_are_refused_as_torch(mode: str, shape: tuple):
    both_raise(lambda lib: lib.nn.functional.interpolate(lib.ones(shape, dtype=lib.int32), scale_factor=2, mode=mode),
               NotImplementedError, "not implemented for 'Int'")


# layers built in a dtype (factory keyword ``dtype``): (class name, positional arguments, keywords, an input shape)
BUILT_IN = [
    ("Linear", (4, 3), {}, (2, 4)), ("Bilinear", (3, 3, 2), {}, None), ("Conv1d", (2, 3, 3), {}, (1, 2, 5)),
    ("Conv2d", (2, 3, 3), {"padding_mode": "reflect", "padding": 1}, (1, 2, 4, 4)), ("Conv3d", (1, 2, 2), {}, None),
    ("ConvTranspose1d", (2, 3, 3), {}, None), ("ConvTranspose2d", (2, 3, 3), {}, (1, 2, 3, 3)),
    ("ConvTranspose3d", (1, 2, 2), {}, None), ("BatchNorm1d", (3,), {}, (4, 3)), ("BatchNorm2d", (3,), {}, None),
    ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 4)),
    ("LayerNorm", (4,), {}, (2, 4)), ("GroupNorm", (2, 4), {}, (2, 4, 3)), ("RMSNorm", (4,), {}, (2, 4)),
    ("Embedding", (5, 3), {}, None), ("EmbeddingBag", (5, 3), {}, None), ("PReLU", (), {}, (2, 3)),
    ("RNN", (3, 4), {}, (2, 1, 3)), ("LSTM", (3, 4), {"proj_size": 2}, (2, 1, 3)), ("GRU", (3, 4), {}, None),
    ("RNNCell", (3, 4), {}, (2, 3)), ("LSTMCell", (3, 4), {}, None), ("GRUCell", (3, 4), {}, (2, 3)),
    ("MultiheadAttention", (4, 2), {"bias": True, "add_bias_kv": True}, None),
    ("TransformerEncoderLayer", (4, 2, 8), {"dropout": 0.0}, (3, 1, 4)),
    ("TransformerDecoderLayer", (4, 2, 8), {}, None),
    ("AdaptiveLogSoftmaxWithLoss", (4, 6, [2, 4]), {}, None),
    ("LazyLinear", (3,), {}, (2, 4)), ("LazyConv1d", (2, 3), {}, (1, 2, 5)), ("LazyBatchNorm1d", (), {}, (4, 3)),
]


def _state(module) -> list[tuple]:
    return [(name, str(t.dtype).split(".")[-1], tuple(t.shape))
            for name, t in [*module.named_parameters(), *module.named_buffers()]]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name, args, kwargs, shape", BUILT_IN, ids=[case[0] for case in BUILT_IN])
def test_a_layer_built_in_a_dtype_holds_its_parameters_in_it(name, args, kwargs, shape, dtype):
    """Parameters and buffers in the dtype asked for (counts stay int64); a lazy layer's after its first call."""
    built = [getattr(lib.nn, name)(*args, **kwargs, dtype=getattr(lib, dtype)) for lib in (torch, ember)]
    if shape is not None:
        x = np.random.default_rng(0).standard_normal(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for module, lib in zip(built, (torch, ember)):
                module(lib.tensor(x, dtype=getattr(lib, dtype)))
    assert _state(built[1]) == _state(built[0])


def _image(lib, dtype: str = "float32"):
    return lib.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 4)), dtype=getattr(lib, dtype))


def _same_weights(lib, module):
    """``module`` with every parameter set to evenly spaced values, the same in both libraries."""
    with lib.no_grad():
        for parameter in module.parameters():
            parameter.copy_(lib.linspace(-0.5, 0.5, parameter.numel()).reshape(parameter.shape))
    return module


# functional forms given 16-bit inputs or mixed dtypes: each program runs on torch and on ember
FUNCTIONAL = {
    "sdpa-causal-bfloat16": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *[_image(lib, "bfloat16")] * 3, is_causal=True),
    "sdpa-half-with-float-mask": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *[_image(lib, "float16")] * 3, attn_mask=lib.linspace(-1, 1, 16).reshape(4, 4)),
    "sdpa-float-with-double-mask": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *[_image(lib)] * 3, attn_mask=lib.zeros(4, 4, dtype=lib.float64)),
    "sdpa-float-with-long-mask": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *[_image(lib)] * 3, attn_mask=lib.zeros(4, 4, dtype=lib.int64)),
    "mha-double-mask": lambda lib: lib.nn.MultiheadAttention(4, 2)(
        *[_image(lib)[0]] * 3, attn_mask=lib.zeros(2, 2, dtype=lib.float64)),
    "mha-int-mask": lambda lib: lib.nn.MultiheadAttention(4, 2)(
        *[_image(lib)[0]] * 3, attn_mask=lib.zeros(2, 2, dtype=lib.int32)),
    "mha-byte-padding-mask": lambda lib: lib.nn.MultiheadAttention(4, 2)(
        *[_image(lib)[0]] * 3, key_padding_mask=lib.zeros(4, 2, dtype=lib.uint8)),
    "mha-double-model-float-mask-without-weights": lambda lib: _same_weights(lib, lib.nn.MultiheadAttention(4, 2))
    .double()(*[_image(lib, "float64")[0]] * 3, attn_mask=lib.zeros(2, 2), need_weights=False),
    "transformer-bfloat16-float-causal-mask": lambda lib: _same_weights(
        lib, lib.nn.Transformer(4, 2, 1, 1, 6, dropout=0.0)).bfloat16()(
        _image(lib, "bfloat16")[0], _image(lib, "bfloat16")[0, :, :3], tgt_mask=lib.nn.Transformer.
        generate_square_subsequent_mask(2), src_key_padding_mask=lib.zeros(4, 2)),
    "embedding_bag-double-sample-weights": lambda lib: lib.nn.functional.embedding_bag(
        lib.tensor([0, 2, 1]), _image(lib)[0, 0], lib.tensor([0, 1]), mode="sum",
        per_sample_weights=lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)),
    "embedding_bag-bfloat16-sample-weights": lambda lib: lib.nn.functional.embedding_bag(
        lib.tensor([0, 2, 1]), _image(lib, "bfloat16")[0, 0], lib.tensor([0, 1]), mode="sum",
        per_sample_weights=lib.tensor([1.0, 2.0, 3.0], dtype=lib.bfloat16)),
    "fractional_max_pool2d-bfloat16": lambda lib: lib.nn.functional.fractional_max_pool2d(
        _image(lib, "bfloat16"), 2, output_size=2, _random_samples=lib.tensor([[[0.3, 0.7], [0.5, 0.2]]],
                                                                               dtype=lib.bfloat16)),
    "affine_grid-bfloat16": lambda lib: lib.nn.functional.affine_grid(
        lib.eye(2, 3, dtype=lib.bfloat16).unsqueeze(0), (1, 1, 2, 3), align_corners=False),
    "grid_sample-bfloat16": lambda lib: lib.nn.functional.grid_sample(
        _image(lib, "bfloat16"), _image(lib, "bfloat16").permute(0, 2, 3, 1).tanh(), align_corners=False),
    "bce_with_logits-double-pos_weight": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        _image(lib), _image(lib).sigmoid(), pos_weight=lib.ones(4, dtype=lib.float64)),
    "rms_norm-double-weight": lambda lib: lib.nn.functional.rms_norm(
        _image(lib), (4,), lib.ones(4, dtype=lib.float64)),
    "layer_norm-half-float-weights": lambda lib: lib.nn.functional.layer_norm(
        _image(lib, "float16"), (4,), lib.ones(4), lib.zeros(4)),
    "group_norm-half-float-weights": lambda lib: lib.nn.functional.group_norm(
        _image(lib, "float16"), 1, lib.ones(2), lib.zeros(2)),
    "max_pool2d-bool": lambda lib: lib.nn.functional.max_pool2d(_image(lib) > 0, 2),
    "max_pool1d-long-with-indices": lambda lib: lib.nn.functional.max_pool1d(
        lib.tensor([[[3, 1, 4, 1, 5, 9]]]), 2, return_indices=True),
    "adaptive_max_pool1d-byte": lambda lib: lib.nn.functional.adaptive_max_pool1d(lib.ones(1, 2, 4, dtype=lib.uint8), 2),
    "max_unpool2d-bfloat16": lambda lib: lib.nn.functional.max_unpool2d(
        *lib.nn.functional.max_pool2d(_image(lib, "bfloat16"), 2, return_indices=True), 2),
}


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_form_in_other_dtypes_matches_torch(name: str):
    expected, actual = (_outcome(FUNCTIONAL[name], lib, [lib]) for lib in (torch, ember))
    if not assert_same_outcome(actual, expected, name):
        return
    for i, (x, y) in enumerate(zip(_leaves(actual), _leaves(expected), strict=True)):
        _same(f"{name}: output {i}", x, y, "bfloat16")


INITS = ["uniform_", "normal_", "trunc_normal_", "ones_", "zeros_", "eye_", "dirac_", "xavier_uniform_",
         "kaiming_normal_", "orthogonal_", "sparse_"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64"])
@pytest.mark.parametrize("name", INITS)
def test_init_in_another_dtype_answers_as_torch(name: str, dtype: str):
    """The tensor filled in place in its dtype (the same values where they are not random), or torch's error type."""
    def program(lib):
        tensor = lib.zeros((3, 4, 3) if name == "dirac_" else (3, 4), dtype=getattr(lib, dtype))
        try:
            filled = getattr(lib.nn.init, name)(tensor, *([0.3] if name == "sparse_" else []))
        except Exception as error:  # compared with the other library's outcome
            return error
        assert filled is tensor
        return filled
    expected, actual = program(torch), program(ember)
    if assert_same_outcome(actual, expected, f"{name} on {dtype}"):
        assert str(actual.dtype).split(".")[-1] == dtype
        if name in ("ones_", "zeros_", "eye_", "dirac_"):
            _same(name, actual, expected, dtype)
