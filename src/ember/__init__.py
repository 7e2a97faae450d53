"""ember: a deep-learning framework on NumPy, with PyTorch's API. ``import ember as torch``.

>>> import ember
>>> x = ember.tensor([1., 2., 3.], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4., 6.])
"""
from ember import autograd  # first: it brings in the Tensor and the Function machinery
from ember._dtype import (
    bool_ as bool, dtype, float16, float32, float64, get_default_dtype, int8, int16, int32, int64,
    promote_types, set_default_dtype, uint8,
)
from ember._dtype import float16 as half, float32 as float, float64 as double, int32 as int, int64 as long
from ember._dtype import int16 as short
from ember._dtype import complex64, complex128, complex64 as cfloat, complex128 as cdouble
from ember._size import Size
from ember._type_info import can_cast, finfo, iinfo
from ember._tensor import Tensor, device
from ember import _tensor_methods  # noqa: F401  (binds the methods and operators)
from ember._ops.arithmetic import (
    add, div, eq, equal, ge, greater, greater_equal, gt, le, less, less_equal, lt, mul, ne, neg, negative,
    not_equal, pow, rsub, sub, true_divide, where,
)
from ember._ops.copy import channels_last, channels_last_3d, clone, contiguous_format, memory_format, preserve_format
from ember._layout import layout, strided
from ember._ops.inplace import index_put
from ember._ops.joining import cat, concat, concatenate, stack
from ember._ops.linalg import addmm, dot, matmul, mm
from ember._ops.reduction import all, amax, amin, any, mean, sum, sum_to_size
from ember._ops.unary import (
    abs, absolute, ceil, clamp, clamp_max, clamp_min, clip, exp, floor, log, reciprocal, relu, round, sigmoid, sign,
    sqrt, tanh, trunc,
)
from ember._ops.views import (
    alias, broadcast_to, expand, expand_as, flatten, narrow, permute, reshape, select, squeeze, swapaxes, swapdims, t,
    transpose, unbind, unsqueeze, view,
)
from ember._creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones, ones_like, rand,
    rand_like, randint, randn, randn_like, randperm, tensor, zeros, zeros_like,
)
# ---- unary math: trig, exp/log family, special functions, softmax (_ops/pointwise.py, ember.special)
from ember._ops.pointwise import (
    acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin, asinh, atan, atanh, cos, cosh, deg2rad,
    exp2, expm1, frac, log10, log1p, log2, logit, rad2deg, rsqrt, sgn, sin, sinc, sinh, square, tan,
)
from ember._ops.special_functions import (
    digamma, erf, erfc, erfinv, i0, igamma, igammac, lgamma, mvlgamma, polygamma, xlogy,
)
from ember import special  # noqa: F401

# ---- binary pointwise, comparison and logic (_ops/binary.py)
from ember._ops.binary import (
    addcdiv, addcmul, arctan2, atan2, bitwise_left_shift, bitwise_right_shift, copysign, divide, float_power,
    floor_divide, fmod, frexp, gcd, heaviside, hypot, lcm, ldexp, ldexp_, lerp, logaddexp, logaddexp2, multiply,
    nan_to_num, nan_to_num_, nextafter, remainder, subtract,
)
from ember._ops.logical import (
    allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, isclose, isfinite, isin, isinf, isnan, isneginf,
    isposinf, isreal, logical_and, logical_not, logical_or, logical_xor, signbit,
)

# ---- reductions and scans (_ops/reduction.py, _ops/scans.py)
from ember._ops.extrema import aminmax, argmax, argmin, fmax, fmin, max, maximum, min, minimum
from ember._ops.scans import cummax, cummin, cumprod, cumsum, logcumsumexp
from ember._ops.statistics import (
    count_nonzero, log_softmax, logsumexp, nanmean, nansum, prod, softmax, std, std_mean, var, var_mean,
)

# ---- sorting, selection and counting (_ops/sorting.py)
from ember._ops.sorting import (
    argsort, kthvalue, median, mode, msort, nanmedian, nanquantile, quantile, sort, topk,
)
from ember._ops.counting import bincount, bucketize, histc, searchsorted, unique, unique_consecutive

# ---- shape, joining, splitting, repeating, triangles and diagonals (_ops/shaping.py)
from ember._ops.shaping import (
    adjoint, atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors, chunk, column_stack, dsplit,
    dstack, flip, fliplr, flipud, hsplit, hstack, meshgrid, moveaxis, movedim, ravel, repeat_interleave, roll, rot90,
    row_stack, split, tensor_split, tile, unflatten, vsplit, vstack,
)
from ember._ops.diagonals import (
    as_strided, diag, diag_embed, diagflat, diagonal, tril, tril_indices, triu, triu_indices,
)

# ---- gather, scatter, index and mask ops (_ops/scatter.py)
from ember._ops.scatter import (
    diagonal_scatter, gather, index_add, index_copy, index_fill, index_put_, index_reduce, index_select, scatter,
    scatter_add, scatter_reduce, select_scatter, slice_scatter,
)
from ember._ops.masking import (
    argwhere, masked_fill, masked_scatter, masked_select, nonzero, nonzero_static, put, take, take_along_dim,
    unravel_index,
)

# ---- products and ember.linalg (_ops/linalg.py, _ops/decompositions.py)
from ember._ops.einsum import einsum
from ember._ops.products import (
    addbmm, addmv, addr, baddbmm, bmm, cdist, chain_matmul, cross, ger, inner, kron, mv, outer, tensordot, trace, vdot,
)
from ember._ops.linalg_aliases import (
    cholesky, cholesky_inverse, cholesky_solve, det, geqrf, inverse, logdet, lu, lu_solve, lu_unpack, matrix_exp,
    matrix_power, orgqr, pinverse, qr, slogdet, svd, triangular_solve,
)

# ---- creation, random sampling and type utilities (_creation.py, _random.py)
from ember._ops.misc import (
    angle, block_diag, cartesian_prod, combinations, corrcoef, cov, cumulative_trapezoid, detach,
    diff, dist, fill, fix, frobenius_norm, histogram, histogramdd, is_conj, is_neg, is_same_size, is_signed,
    is_storage, nuclear_norm, pdist, positive, renorm, resolve_conj, resolve_neg, trapezoid, trapz, typename,
    vander,
)
from ember._ops.complex import complex, conj, conj_physical, imag, polar, real, view_as_complex, view_as_real
from ember._ops.windows import (
    asarray, bartlett_window, blackman_window, empty_strided, frombuffer, hamming_window, hann_window, kaiser_window,
    range, scalar_tensor,
)
from ember._ops.inplace_forms import (
    abs_, acos_, acosh_, addmv_, arccos_, arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, as_strided_, asin_, asinh_,
    atan_, atanh_, ceil_, clamp_, clamp_max_, clamp_min_, clip_, conj_physical_, cos_, cosh_, deg2rad_, detach_, erf_,
    erfc_, exp2_, exp_, expm1_, fill_, fix_, floor_, frac_, gcd_, i0_, lcm_, log10_, log1p_, log2_, log_, logit_, neg_,
    negative_, rad2deg_, reciprocal_, relu_, resize_as_, round_, rsqrt_, sigmoid_, sin_, sinc_, sinh_, sqrt_, square_,
    tan_, tanh_, trunc_, xlogy_, zero_,
)
from ember._creation import logspace
from ember._sampling import bernoulli, is_nonzero, multinomial, normal, poisson, randint_like

from ember._random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from ember._ops._support import ember_function as _ember_function, require_tensor as _require_tensor
from ember._ops._support import result_dtype as _result_dtype
from ember._tensor_str import get_printoptions, set_printoptions
from ember.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from ember import linalg, overrides, return_types  # noqa: F401
from ember.functional import norm
from ember.autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled, set_detect_anomaly,
)
from ember.overrides import DisableTorchFunction, DisableTorchFunctionSubclass  # torch has both at top level
from ember.overrides import overridable as _overridable

__version__ = "0.1.0"


@_overridable("ember")
def result_type(*operands, **named) -> dtype:
    """The dtype an arithmetic op on these two operands returns (PyTorch's promotion).

    As in torch, keywords name the operands by kind: ``(tensor, other)``, ``(scalar, tensor)`` or
    ``(scalar1, scalar2)``.

    >>> ember.result_type(ember.tensor([1, 2]), 1.0)
    ember.float32
    >>> ember.result_type(scalar=1.0, tensor=ember.tensor([1]))
    ember.float32
    """
    if named:
        operands = _named_operands(operands, named)
    if len(operands) != 2:
        raise TypeError(f"result_type() takes 2 operands ({len(operands)} given), e.g. result_type(tensor, other)")
    return _result_dtype(*operands)


_RESULT_TYPE_FORMS = (("tensor", "other"), ("scalar", "tensor"), ("scalar1", "scalar2"))


def _named_operands(given: tuple, named: dict) -> tuple:
    for form in _RESULT_TYPE_FORMS:
        rest = form[len(given):]
        if len(given) <= 2 and set(named) == set(rest):
            return given + tuple(named[name] for name in rest)
    raise TypeError(
        f"result_type() received an invalid combination of arguments: keywords {sorted(named)}; expected one of "
        "(tensor, other), (scalar, tensor) or (scalar1, scalar2)"
    )


def is_tensor(obj, /) -> bool:
    return isinstance(obj, Tensor)


@_ember_function
def numel(input: Tensor) -> int:
    return input.numel()


@_ember_function
def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


@_ember_function
def is_complex(input: Tensor) -> bool:
    """Whether ``input`` has a complex dtype (complex64 or complex128).

    >>> ember.is_complex(ember.tensor([1j])), ember.is_complex(ember.tensor([1.]))
    (True, False)
    """
    return _require_tensor(input, "is_complex").is_complex()


from ember import nn, optim  # noqa: E402,F401

# ---- nn ops at the top level, as torch has them
from ember._nn_aliases import (  # noqa: E402,F401
    adaptive_avg_pool1d, alpha_dropout, avg_pool1d, batch_norm, bilinear, binary_cross_entropy_with_logits, celu,
    celu_, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, cosine_embedding_loss,
    cosine_similarity, dropout, embedding, feature_alpha_dropout, group_norm, hardshrink, hinge_embedding_loss,
    instance_norm, kl_div, layer_norm, margin_ranking_loss, max_pool1d, max_pool1d_with_indices, max_pool2d,
    max_pool3d, pairwise_distance, poisson_nll_loss, prelu, rms_norm, rrelu, rrelu_, selu, selu_, threshold,
    threshold_, triplet_margin_loss,
)
# ---- checkpoints and interop (serialization/, utils/dlpack.py)
from ember import serialization  # noqa: E402,F401
from ember.serialization import load, save  # noqa: E402,F401
from ember.utils.dlpack import from_dlpack  # noqa: E402,F401
from ember._symbolic_assert import _assert  # noqa: E402,F401
from ember import fx  # noqa: E402,F401  (after nn: tracing patches nn.Module)
# ---- the program-level API: devices, threads, determinism, compilation, legacy types, testing, profiling
from math import e, inf, nan, pi  # noqa: E402
newaxis = None
from ember._legacy_types import (  # noqa: E402
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
)
from ember._threads import (  # noqa: E402
    get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads,
)
from ember._determinism import (  # noqa: E402
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, use_deterministic_algorithms,
)
from ember._compile import compile  # noqa: E402
from ember import accelerator, amp, backends, compiler, cuda, jit, profiler, random, testing  # noqa: E402,F401
from ember.amp import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled  # noqa: E402
from ember._matmul_precision import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from ember.autograd import graph as _graph, profiler as _autograd_profiler  # noqa: E402,F401  (ember.autograd.*)
# ---- distributed (MPI is loaded only when used: the distributed extra)
from ember import distributed  # noqa: E402,F401
# ---- function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap)
from ember import func  # noqa: E402,F401
# ---- operators of the user's own (ember.library defines them, ember.ops reaches them)
from ember import library  # noqa: E402,F401
from ember._ops_namespace import ops  # noqa: E402
# ---- probability distributions (ember.distributions)
from ember import distributions  # noqa: E402,F401
# ---- futures (the results of operations in flight)
from ember import futures  # noqa: E402,F401
from ember import hub  # noqa: E402,F401
# ---- names whole programs reach for at the top level
from ember.func import vmap  # noqa: E402  (torch.vmap is torch.func.vmap)
from ember.nn.functional import pixel_shuffle, pixel_unshuffle  # noqa: E402  (torch has both at the top level)
from ember.nn.functional import channel_shuffle, native_channel_shuffle  # noqa: E402  (torch has both at the top level)
from ember._tensor import get_default_device, set_default_device  # noqa: E402
from ember._ops.gradient import gradient  # noqa: E402  (finite differences of sampled values)
from ember._ops.lowrank import pca_lowrank, svd_lowrank  # noqa: E402  (randomized low-rank SVD and PCA)
from ember.nn.functional import conv_tbc  # noqa: E402  (torch has it at the top level too)
from ember._ops.split_variants import (  # noqa: E402
    narrow_copy, split_with_sizes, unsafe_chunk, unsafe_split, unsafe_split_with_sizes,
)
# ---- control flow, process settings and the last small names
from ember._control_flow import cond, while_loop  # noqa: E402
from ember._runtime_info import (  # noqa: E402
    compiled_with_cxx11_abi, get_device, is_distributed, is_warn_always_enabled, set_flush_denormal, set_warn_always,
)
from ember._ops.windows import from_file  # noqa: E402
from ember.utils.dlpack import to_dlpack  # noqa: E402
from ember.amp import GradScaler  # noqa: E402  (torch.GradScaler is torch.amp.GradScaler)
from ember._removed import eig, lstsq, matrix_rank, solve, symeig  # noqa: E402  (removed: they say what replaced them)
from ember.storage import TypedStorage, UntypedStorage  # noqa: E402

# ---- discrete Fourier transforms (ember.fft) and the short-time transform
from ember import fft  # noqa: E402,F401
from ember._ops.stft import istft, stft  # noqa: E402

# ---- copies of views, as_strided_scatter and empty_permuted
from ember._ops.copies import (  # noqa: E402
    alias_copy, as_strided_copy, as_strided_scatter, detach_copy, diagonal_copy, empty_permuted, expand_copy,
    permute_copy, select_copy, slice_copy, split_copy, split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy,
    unbind_copy, unfold_copy, unsqueeze_copy, view_copy,
)
# ---- binomial sampling and inference tensors
from ember._ops.binomial import binomial  # noqa: E402
from ember._ops.tensor_extras import is_inference  # noqa: E402
from ember._ops.tensor_extras import slice_inverse  # noqa: E402


# ---- torch's top-level nn kernels: the recurrent ones with flat weights, native norms, batch-norm statistics
from ember._rnn_kernels import (  # noqa: E402
    gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh, rnn_tanh_cell,
)
from ember._nn_norm_kernels import (  # noqa: E402
    batch_norm_backward_elemt, batch_norm_backward_reduce, batch_norm_elemt, batch_norm_gather_stats,
    batch_norm_gather_stats_with_counts, batch_norm_stats, batch_norm_update_stats, native_batch_norm, native_dropout,
    native_group_norm, native_layer_norm, native_norm, norm_except_dim,
)
from ember._nn_kernels import (  # noqa: E402
    adaptive_max_pool1d, affine_grid_generator, alpha_dropout_, constant_pad_nd, convolution, ctc_loss, dropout_,
    embedding_bag, embedding_renorm_, feature_alpha_dropout_, feature_dropout, feature_dropout_, grid_sampler,
    grid_sampler_2d, grid_sampler_3d, segment_reduce,
)
# ---- the last tensor-level names: ormqr, lobpcg, copies of the complex views, symbolic-size helpers
from ember._ops.orthogonal_extras import lobpcg, ormqr  # noqa: E402
from ember._ops.complex import view_as_complex_copy, view_as_real_copy  # noqa: E402
from ember._control_flow import sym_float, sym_int, sym_ite, sym_max, sym_min, sym_not, sym_sqrt, sym_sum  # noqa: E402
from ember._runtime_info import init_num_threads, is_vulkan_available, set_default_tensor_type  # noqa: E402
# ---- bfloat16 (its storage comes from the optional ml_dtypes package)
from ember._dtype import bfloat16  # noqa: E402
# ---- unsigned dtypes, autocast's state functions and the small remaining names
from ember._dtype import uint16, uint32, uint64  # noqa: E402
from ember._ops.hashing import hash_tensor  # noqa: E402
from ember.amp.autocast_mode import (  # noqa: E402
    autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache, is_autocast_cache_enabled,
    set_autocast_cache_enabled, set_autocast_dtype, set_autocast_enabled,
)
from ember._autocast_legacy import (  # noqa: E402
    get_autocast_cpu_dtype, get_autocast_gpu_dtype, get_autocast_ipu_dtype, get_autocast_xla_dtype,
    is_autocast_cpu_enabled, is_autocast_ipu_enabled, is_autocast_xla_enabled, set_autocast_cpu_dtype,
    set_autocast_cpu_enabled, set_autocast_gpu_dtype, set_autocast_ipu_dtype, set_autocast_ipu_enabled,
    set_autocast_xla_dtype, set_autocast_xla_enabled,
)
from ember._legacy_storages import (  # noqa: E402
    BFloat16Storage, BoolStorage, ByteStorage, CharStorage, ComplexDoubleStorage, ComplexFloatStorage, DoubleStorage,
    FloatStorage, HalfStorage, IntStorage, LongStorage, ShortStorage, Storage,
)
from ember import cpu  # noqa: E402
from ember._program_leftovers import (  # noqa: E402
    get_device_module, get_file_path, prepare_multiprocessing_environment, sym_constrain_range,
    sym_constrain_range_for_size, sym_fresh_size, thread_safe_generator,
)
from ember import __future__  # noqa: E402
from ember._legacy_types import BFloat16Tensor  # noqa: E402
# ---- quantization: fake quantization for training, quantized dtypes and tensors
from ember._ops.fake_quantize import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine  # noqa: E402
from ember._ops.learnable_fake_quantize import (  # noqa: E402
    _fake_quantize_learnable_per_channel_affine, _fake_quantize_learnable_per_tensor_affine,
)
from ember._quantized_dtypes import (  # noqa: E402
    per_channel_affine, per_channel_affine_float_qparams, per_channel_symmetric, per_tensor_affine,
    per_tensor_symmetric, qint32, qint8, qscheme, quint2x4, quint4x2, quint8,
)
from ember._ops.quantize import (  # noqa: E402
    _make_per_channel_quantized_tensor, _make_per_tensor_quantized_tensor, dequantize, quantize_per_channel,
    quantize_per_tensor, quantize_per_tensor_dynamic,
)
from ember._ops.quantized_readers import (  # noqa: E402
    empty_quantized, int_repr, q_per_channel_axis, q_per_channel_scales, q_per_channel_zero_points, q_scale,
    q_zero_point,
)
from ember._ops.fused_observer import fused_moving_avg_obs_fake_quant  # noqa: E402
from ember._ops.quantized_kernels import (  # noqa: E402
    quantized_batch_norm, quantized_max_pool1d, quantized_max_pool2d, quantized_max_pool3d,
)
# ---- sparse COO tensors
from ember._layout import sparse_coo  # noqa: E402
from ember._ops.sparse import sparse_coo_tensor  # noqa: E402
from ember._ops.sparse_methods import dsmm, hsmm, hspmm, saddmm, smm, spmm, sspaddmm  # noqa: E402
from ember import sparse  # noqa: E402
# ---- compressed sparse layouts (CSR, CSC, BSR, BSC)
from ember._layout import sparse_bsc, sparse_bsr, sparse_csc, sparse_csr  # noqa: E402
from ember._ops.sparse_compressed import (  # noqa: E402
    sparse_bsc_tensor, sparse_bsr_tensor, sparse_compressed_tensor, sparse_csc_tensor, sparse_csr_tensor,
)
from ember._ops.sparse_compressed_methods import (  # noqa: E402
    ccol_indices_copy, col_indices_copy, crow_indices_copy, indices_copy, resize_as_sparse_, row_indices_copy,
    values_copy,
)
# ---- training-step memory: freed arrays stay with the process between steps (see _malloc.py)
from ember._malloc import raise_malloc_thresholds as _raise_malloc_thresholds  # noqa: E402

_raise_malloc_thresholds()
# ---- matrix products through MKL (the mkl extra)
from ember import __config__  # noqa: E402
# ---- the settings, types and helpers that overrides.get_ignored_functions() lists (after every name above)
from ember import _ignored_api  # noqa: E402,F401


_LAZY_SUBMODULES = ("signal", "types", "xpu", "mps", "mtia")


def __getattr__(name: str):
    # these load on first use (torch has them at the top level), keeping ``import ember`` fast
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"ember.{name}")
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
