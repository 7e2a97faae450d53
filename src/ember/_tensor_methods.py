"""Tensor methods and operators, one line each, bound to the ops that define them.

Each line makes ``Tensor.<name>`` a public function of its own (what a
``__torch_function__`` handler receives as ``func``) around the op's
implementation, so a method costs the same as the function.
"""
from __future__ import annotations

import builtins

import numpy as np

from ember._ops import (
    arithmetic as A, copy as C, indexing as X, inplace as I, linalg as L, reduction as R, unary as U, views as V,
)
from ember._ops import pointwise as P, special_functions as SF
from ember._ops import binary as B, logical as G
from ember.autograd.grad_mode import no_grad
from ember import _dtype as D
from ember import _creation as CR, _sampling as SA, functional
from ember._ops import misc as M
from ember._ops import complex as Cx
from ember import _removed as _removed_names
from ember import storage as _storage
from ember.autograd import engine as E
from ember._tensor import Tensor
from ember._ops._support import require_tensor
from ember.overrides import method, overridable, tensor_property

tensor_method = overridable("ember.Tensor")

# ---- arithmetic and comparison operators
# An ndarray operand: torch compares it as a tensor in ==, and lets NumPy compute ndarray / t and t @ ndarray
# (a tensor comes back, see Tensor.__array_wrap__). The other operators leave an ndarray to NumPy already.


def _rtruediv(self, other):
    """``other / t``: ``reciprocal(t) * other``, as torch; an ndarray ``other`` multiplies on NumPy's side."""
    if isinstance(other, np.ndarray):
        return np.multiply(other, U.reciprocal(self))  # NumPy gives a tensor back (see Tensor.__array_wrap__)
    return A.reciprocal_times(self, other)


def _eq(self, other):
    """``t == other``; an ndarray ``other`` is compared as a tensor, elementwise (torch does so for == alone)."""
    if isinstance(other, np.ndarray):
        other = CR.as_tensor(other)
    return A.eq.__wrapped__(self, other)


def _where(self, condition, other):
    """``t.where(condition, y)``: ``where(condition, t, y)``, the tensor as the values where ``condition`` holds."""
    return A.where.__wrapped__(condition, self, other)


Tensor.__add__ = method(A.add, "__add__")
Tensor.__radd__ = method(A.add, "__radd__")  # 1 + t is add(t, 1), as torch records it
Tensor.__sub__ = method(A.sub, "__sub__")
Tensor.__rsub__ = method(A.rsub, "__rsub__")
Tensor.__mul__ = method(A.mul, "__mul__")
Tensor.__rmul__ = method(A.mul, "__rmul__")  # 2 * t is mul(t, 2), as torch records it
Tensor.__truediv__ = method(A.div, "__truediv__")
Tensor.__rtruediv__ = method(_rtruediv, "__rtruediv__")  # number / t is reciprocal(t) * number, as torch
Tensor.__pow__ = method(A.pow, "__pow__")
Tensor.__rpow__ = method(A.pow, "__rpow__", swap=True)
Tensor.__matmul__ = method(L.matmul, "__matmul__")  # an ndarray operand: NumPy computes it, as in torch
Tensor.__rmatmul__ = method(L.matmul, "__rmatmul__", swap=True)
Tensor.__eq__ = method(_eq, "__eq__")
Tensor.__ne__ = method(A.ne, "__ne__")
Tensor.__lt__ = method(A.lt, "__lt__")
Tensor.__le__ = method(A.le, "__le__")
Tensor.__gt__ = method(A.gt, "__gt__")
Tensor.__ge__ = method(A.ge, "__ge__")
Tensor.__hash__ = object.__hash__  # defining __eq__ above would otherwise make tensors unhashable

# ---- named methods
Tensor.backward = method(E.tensor_backward, "backward")  # the engine's: it starts the walk
Tensor.add = method(A.add)
Tensor.sub = method(A.sub)
Tensor.mul = method(A.mul)
Tensor.div = method(A.div)
Tensor.true_divide = method(A.true_divide)
Tensor.pow = method(A.pow)
Tensor.neg = method(A.neg)
Tensor.eq = method(A.eq)
Tensor.ne = method(A.ne)
Tensor.lt = method(A.lt)
Tensor.le = method(A.le)
Tensor.gt = method(A.gt)
Tensor.ge = method(A.ge)
Tensor.equal = method(A.equal)
Tensor.exp = method(U.exp)
Tensor.norm = method(functional.norm)
Tensor.reciprocal = method(U.reciprocal)
Tensor.log = method(U.log)
Tensor.sqrt = method(U.sqrt)
Tensor.sigmoid = method(U.sigmoid)
Tensor.tanh = method(U.tanh)
Tensor.relu = method(U.relu)
Tensor.abs = method(U.abs)
Tensor.__neg__, Tensor.__abs__ = Tensor.neg, Tensor.abs  # -t and abs(t) hand Tensor.neg and Tensor.abs, as in torch
Tensor.clamp = method(U.clamp)
Tensor.clip = method(U.clamp, "clip")
Tensor.clamp_min = method(U.clamp_min)
Tensor.clamp_max = method(U.clamp_max)
Tensor.absolute = method(U.absolute)
Tensor.negative = method(A.negative)
Tensor.floor = method(U.floor)
Tensor.ceil = method(U.ceil)
Tensor.trunc = method(U.trunc)
Tensor.round = method(U.round)
Tensor.sign = method(U.sign)
Tensor.sum = method(R.sum)
Tensor.mean = method(R.mean)
Tensor.all = method(R.all)
Tensor.amax = method(R.amax)
Tensor.amin = method(R.amin)
Tensor.any = method(R.any)
Tensor.sum_to_size = method(R.sum_to_size)
Tensor.mm = method(L.mm)
Tensor.addmm = method(L.addmm)
Tensor.matmul = method(L.matmul)
Tensor.dot = method(L.dot)
Tensor.view = method(V.view)
Tensor.reshape = method(V.reshape)
Tensor.transpose = method(V.transpose)
Tensor.t = method(V.t)
Tensor.permute = method(V.permute)
Tensor.flatten = method(V.flatten)
Tensor.new_tensor = method(CR.new_tensor)
Tensor.new_full = method(CR.new_full)
Tensor.new_zeros = method(CR.new_zeros)
Tensor.new_ones = method(CR.new_ones)
Tensor.new_empty = method(CR.new_empty)
Tensor.swapaxes = method(V.swapaxes)
Tensor.swapdims = method(V.transpose, "swapdims")
Tensor.expand = method(V.expand)
Tensor.expand_as = method(V.expand_as)
Tensor.unsqueeze = method(V.unsqueeze)
Tensor.narrow = method(V.narrow)
Tensor.select = method(V.select)
Tensor.unbind = method(V.unbind)
Tensor.clone = method(C.clone)
Tensor.where = method(_where, "where")


__getitem__ = overridable("ember.Tensor", "__getitem__")(X.getitem)


@tensor_method
def __setitem__(self, key, value):
    I.setitem(self, key, value)


@tensor_method
def squeeze(self, *dims, dim=None):
    """As torch's method (not its function): several dims may come one by one, ``x.squeeze(0, 1)``."""
    if dims and dim is not None:
        raise TypeError("squeeze() got multiple values for argument 'dim': pass the dims by position or as dim=, "
                        "not both")
    if len(dims) > 1:
        return V.squeeze.__wrapped__(self, dims)
    return V.squeeze.__wrapped__(self, dims[0] if dims else dim)


@tensor_method
def view_as(self, other):
    return V.view.__wrapped__(self, require_tensor(other, "view_as", 1, "other")._data.shape)


@tensor_method
def reshape_as(self, other):
    return V.reshape.__wrapped__(self, require_tensor(other, "reshape_as", 1, "other")._data.shape)


@tensor_method
def contiguous(self, memory_format=None):
    return C.contiguous(self, memory_format)


@tensor_method
def to(self, *args, **kwargs):
    return C.to(self, *args, **kwargs)


_LEGACY_TYPE_NAMES = {
    D.float32: "FloatTensor", D.float64: "DoubleTensor", D.float16: "HalfTensor", D.int64: "LongTensor",
    D.int32: "IntTensor", D.int16: "ShortTensor", D.int8: "CharTensor", D.uint8: "ByteTensor", D.bool_: "BoolTensor",
    D.complex64: "ComplexFloatTensor", D.complex128: "ComplexDoubleTensor", D.bfloat16: "BFloat16Tensor",
    D.uint16: "UInt16Tensor", D.uint32: "UInt32Tensor", D.uint64: "UInt64Tensor",
}


@tensor_method
def type(self, dtype=None, non_blocking=False):
    """With no argument, the legacy type name ('ember.FloatTensor'); else a cast to ``dtype`` (or such a name)."""
    if dtype is None:
        return "ember." + _LEGACY_TYPE_NAMES[self.dtype]
    if isinstance(getattr(dtype, "dtype", None), D.dtype) and isinstance(dtype, builtins.type):
        dtype = dtype.dtype  # a legacy type: x.type(ember.FloatTensor)
    if isinstance(dtype, str):
        by_name = {"ember." + name: d for d, name in _LEGACY_TYPE_NAMES.items()}
        if dtype.replace("torch.", "ember.") not in by_name:
            raise ValueError(f"type(): invalid type {dtype!r}; expected one of {sorted(by_name)}")
        dtype = by_name[dtype.replace("torch.", "ember.")]
    return C.to(self, dtype)


@tensor_method
def type_as(self, other):
    return C.to(self, require_tensor(other, "type_as", 1, "other")._data.dtype)


def _cast(self, dtype, memory_format):
    """``x.float()`` and its kin: ``to(dtype)``, passing a memory format only when one is given."""
    return C.to(self, dtype) if memory_format is None else C.to(self, dtype, memory_format=memory_format)


@tensor_method
def float(self, memory_format=None):
    return _cast(self, D.float32, memory_format)


@tensor_method
def double(self, memory_format=None):
    return _cast(self, D.float64, memory_format)


@tensor_method
def half(self, memory_format=None):
    return _cast(self, D.float16, memory_format)


@tensor_method
def bfloat16(self, memory_format=None):
    return _cast(self, D.bfloat16, memory_format)


@tensor_method
def long(self, memory_format=None):
    return _cast(self, D.int64, memory_format)


@tensor_method
def int(self, memory_format=None):
    return _cast(self, D.int32, memory_format)


@tensor_method
def short(self, memory_format=None):
    return _cast(self, D.int16, memory_format)


@tensor_method
def char(self, memory_format=None):
    return _cast(self, D.int8, memory_format)


@tensor_method
def byte(self, memory_format=None):
    return _cast(self, D.uint8, memory_format)


@tensor_method
def bool(self, memory_format=None):
    return _cast(self, D.bool_, memory_format)



# ---- in-place methods: the out-of-place op, written back (see _ops/inplace.py)


# (bound once: an optimizer's step runs these on every parameter)
_arithmetic_, _add, _sub, _mul, _div = I.arithmetic_, A.add.__wrapped__, A.sub.__wrapped__, A.mul.__wrapped__, \
    A.div.__wrapped__
_np_add, _np_subtract, _np_multiply, _np_true_divide = np.add, np.subtract, np.multiply, np.true_divide


@tensor_method
def add_(self, other, *, alpha=1):
    return _arithmetic_(self, other, _np_add, _add, "add_", alpha)


@tensor_method
def sub_(self, other, *, alpha=1):
    return _arithmetic_(self, other, _np_subtract, _sub, "sub_", alpha)


@tensor_method
def mul_(self, other):
    return _arithmetic_(self, other, _np_multiply, _mul, "mul_")


@tensor_method
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _arithmetic_(self, other, _np_true_divide, _div, "div_")
    return I.apply_promoting_inplace(self, A.div.__wrapped__, other, rounding_mode=rounding_mode, op="div_")


@tensor_method
def pow_(self, exponent):
    return I.apply_inplace(self, A.pow.__wrapped__, exponent, op="pow_")


@tensor_method
def neg_(self):
    return I.apply_inplace(self, A.neg.__wrapped__, op="neg_")


@tensor_method
def exp_(self):
    return I.apply_inplace(self, U.exp.__wrapped__, op="exp_")


@tensor_method
def reciprocal_(self):
    return I.apply_inplace(self, U.reciprocal.__wrapped__, op="reciprocal_")


@tensor_method
def sqrt_(self):
    return I.apply_inplace(self, U.sqrt.__wrapped__, op="sqrt_")


@tensor_method
def relu_(self):
    return I.apply_inplace(self, U.relu.__wrapped__, op="relu_")


@tensor_method
def sigmoid_(self):
    return I.apply_inplace(self, U.sigmoid.__wrapped__, op="sigmoid_")


@tensor_method
def tanh_(self):
    return I.apply_inplace(self, U.tanh.__wrapped__, op="tanh_")


@tensor_method
def clamp_(self, min=None, max=None):
    return I.clamp_(self, min, max)


@tensor_method
def clip_(self, min=None, max=None):
    return I.clamp_(self, min, max, "clip_")


@tensor_method
def clamp_min_(self, min):
    apply = I.apply_promoting_inplace if isinstance(min, Tensor) else I.apply_inplace  # (as torch's two overloads)
    return apply(self, U.clamp_min.__wrapped__, min, op="clamp_min_")


@tensor_method
def clamp_max_(self, max):
    apply = I.apply_promoting_inplace if isinstance(max, Tensor) else I.apply_inplace
    return apply(self, U.clamp_max.__wrapped__, max, op="clamp_max_")


@tensor_method
def log_(self):
    return I.apply_inplace(self, U.log.__wrapped__, op="log_")


@tensor_method
def abs_(self):
    _no_complex_abs_(self)
    return I.apply_inplace(self, U.abs.__wrapped__, op="abs_")


@tensor_method
def absolute_(self):
    _no_complex_abs_(self)
    return I.apply_inplace(self, U.absolute.__wrapped__, op="absolute_")


def _no_complex_abs_(self) -> None:
    """A complex tensor's abs is real: torch refuses to write it back into the complex tensor, and so does ember."""
    if self._data.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors; use y = x.abs() (a real tensor)")


@tensor_method
def negative_(self):
    return I.apply_inplace(self, A.negative.__wrapped__, op="negative_")


@tensor_method
def sign_(self):
    return I.apply_inplace(self, U.sign.__wrapped__, op="sign_")


@tensor_method
def floor_(self):
    return I.apply_inplace(self, U.floor.__wrapped__, op="floor_")


@tensor_method
def ceil_(self):
    return I.apply_inplace(self, U.ceil.__wrapped__, op="ceil_")


@tensor_method
def trunc_(self):
    return I.apply_inplace(self, U.trunc.__wrapped__, op="trunc_")


@tensor_method
def round_(self, *, decimals=U._WHOLE):
    return I.apply_inplace(self, U.round.__wrapped__, decimals=decimals, op="round_")


@tensor_method
def index_put_(self, indices, values, accumulate=False):
    return I.index_put_(self, indices, values, accumulate)


zero_ = tensor_method(I.zero_)
fill_ = tensor_method(I.fill_)


@tensor_method
def copy_(self, other, non_blocking=False):  # torch names the source "other" (and so takes x2= for it)
    return I.copy_(self, other)


@tensor_method
def uniform_(self, from_=0.0, to=1.0, *, generator=None):  # torch's keyword is "from" (see overrides._NUMPY_NAMES)
    return I.uniform_(self, from_, to, generator=generator)


@tensor_method
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    return I.normal_(self, mean, std, generator=generator)


Tensor.__getitem__ = __getitem__
Tensor.__setitem__ = __setitem__
Tensor.squeeze = squeeze
Tensor.view_as = view_as
Tensor.reshape_as = reshape_as
Tensor.contiguous = contiguous
Tensor.to = to
Tensor.type = type
Tensor.type_as = type_as
Tensor.float = float
Tensor.double = double
Tensor.half = half
Tensor.bfloat16 = bfloat16
Tensor.long = long
Tensor.int = int
Tensor.short = short
Tensor.char = char
Tensor.byte = byte
Tensor.bool = bool
Tensor.add_ = add_
Tensor.sub_ = sub_
Tensor.mul_ = mul_
Tensor.div_ = div_
# In-place operators hand the named method (+= hands Tensor.add_) and answer NotImplemented for operands they
# cannot take, so that Python's error names the operator, as in torch
Tensor.__iadd__ = method(add_, "__iadd__")
Tensor.__isub__ = method(sub_, "__isub__")
Tensor.__imul__ = method(mul_, "__imul__")
Tensor.__itruediv__ = method(div_, "__itruediv__")
Tensor.pow_ = pow_
Tensor.__ipow__ = method(pow_, "__ipow__")  # handlers see Tensor.__ipow__ itself, as in torch
Tensor.neg_ = neg_
Tensor.exp_ = exp_
Tensor.sqrt_ = sqrt_
Tensor.reciprocal_ = reciprocal_
Tensor.relu_ = relu_
Tensor.sigmoid_ = sigmoid_
Tensor.tanh_ = tanh_
Tensor.clamp_ = clamp_
Tensor.clip_ = clip_
Tensor.clamp_min_ = clamp_min_
Tensor.clamp_max_ = clamp_max_
Tensor.log_ = log_
Tensor.abs_ = abs_
Tensor.absolute_ = absolute_
Tensor.negative_ = negative_
Tensor.sign_ = sign_
Tensor.floor_ = floor_
Tensor.ceil_ = ceil_
Tensor.trunc_ = trunc_
Tensor.round_ = round_
Tensor.index_put_ = index_put_
Tensor.index_put = method(I.index_put)
Tensor.zero_ = zero_
Tensor.fill_ = fill_
Tensor.copy_ = copy_
Tensor.uniform_ = uniform_
Tensor.normal_ = normal_

# ---- methods of the unary math: trig, exp/log family, special functions, softmax


def _inplace(function, name: str):
    """The in-place method ``name`` of ``function``: ``x.sin_()`` writes ``sin(x)`` into ``x`` (see inplace.py)."""
    impl = function.__wrapped__

    def inplace(self, *args, **kwargs):
        return I.apply_inplace(self, impl, *args, op=name, **kwargs)

    return method(inplace, name)


@tensor_method
def polygamma(self, n):
    """``x.polygamma(n)`` is ``polygamma(n, x)``: the tensor comes first in the method."""
    return SF.polygamma.__wrapped__(n, self)


@tensor_method
def polygamma_(self, n):
    return I.apply_inplace(self, lambda x, k: SF.polygamma_as("polygamma_", k, x), n, op="polygamma_")



Tensor.sin = method(P.sin)
Tensor.cos = method(P.cos)
Tensor.tan = method(P.tan)
Tensor.asin = method(P.asin)
Tensor.acos = method(P.acos)
Tensor.atan = method(P.atan)
Tensor.sinh = method(P.sinh)
Tensor.cosh = method(P.cosh)
Tensor.asinh = method(P.asinh)
Tensor.acosh = method(P.acosh)
Tensor.atanh = method(P.atanh)
Tensor.arcsin = method(P.arcsin)
Tensor.arccos = method(P.arccos)
Tensor.arctan = method(P.arctan)
Tensor.arcsinh = method(P.arcsinh)
Tensor.arccosh = method(P.arccosh)
Tensor.arctanh = method(P.arctanh)
Tensor.deg2rad = method(P.deg2rad)
Tensor.rad2deg = method(P.rad2deg)
Tensor.sinc = method(P.sinc)
Tensor.exp2 = method(P.exp2)
Tensor.expm1 = method(P.expm1)
Tensor.log2 = method(P.log2)
Tensor.log10 = method(P.log10)
Tensor.log1p = method(P.log1p)
Tensor.rsqrt = method(P.rsqrt)
Tensor.square = method(P.square)
Tensor.sgn = method(P.sgn)
Tensor.frac = method(P.frac)
Tensor.logit = method(P.logit)
Tensor.erf = method(SF.erf)
Tensor.erfc = method(SF.erfc)
Tensor.erfinv = method(SF.erfinv)
Tensor.lgamma = method(SF.lgamma)
Tensor.digamma = method(SF.digamma)
Tensor.i0 = method(SF.i0)
Tensor.xlogy = method(SF.xlogy)
Tensor.mvlgamma = method(SF.mvlgamma)
Tensor.igamma = method(SF.igamma)
Tensor.igammac = method(SF.igammac)
Tensor.sin_ = _inplace(P.sin, "sin_")
Tensor.cos_ = _inplace(P.cos, "cos_")
Tensor.tan_ = _inplace(P.tan, "tan_")
Tensor.asin_ = _inplace(P.asin, "asin_")
Tensor.acos_ = _inplace(P.acos, "acos_")
Tensor.atan_ = _inplace(P.atan, "atan_")
Tensor.sinh_ = _inplace(P.sinh, "sinh_")
Tensor.cosh_ = _inplace(P.cosh, "cosh_")
Tensor.asinh_ = _inplace(P.asinh, "asinh_")
Tensor.acosh_ = _inplace(P.acosh, "acosh_")
Tensor.atanh_ = _inplace(P.atanh, "atanh_")
Tensor.arcsin_ = _inplace(P.arcsin, "arcsin_")
Tensor.arccos_ = _inplace(P.arccos, "arccos_")
Tensor.arctan_ = _inplace(P.arctan, "arctan_")
Tensor.arcsinh_ = _inplace(P.arcsinh, "arcsinh_")
Tensor.arccosh_ = _inplace(P.arccosh, "arccosh_")
Tensor.arctanh_ = _inplace(P.arctanh, "arctanh_")
Tensor.deg2rad_ = _inplace(P.deg2rad, "deg2rad_")
Tensor.rad2deg_ = _inplace(P.rad2deg, "rad2deg_")
Tensor.sinc_ = _inplace(P.sinc, "sinc_")
Tensor.exp2_ = _inplace(P.exp2, "exp2_")
Tensor.expm1_ = _inplace(P.expm1, "expm1_")
Tensor.log2_ = _inplace(P.log2, "log2_")
Tensor.log10_ = _inplace(P.log10, "log10_")
Tensor.log1p_ = _inplace(P.log1p, "log1p_")
Tensor.rsqrt_ = _inplace(P.rsqrt, "rsqrt_")
Tensor.square_ = _inplace(P.square, "square_")
Tensor.sgn_ = _inplace(P.sgn, "sgn_")
Tensor.frac_ = _inplace(P.frac, "frac_")
Tensor.logit_ = _inplace(P.logit, "logit_")
Tensor.erf_ = _inplace(SF.erf, "erf_")
Tensor.erfc_ = _inplace(SF.erfc, "erfc_")
Tensor.erfinv_ = _inplace(SF.erfinv, "erfinv_")
Tensor.lgamma_ = _inplace(SF.lgamma, "lgamma_")
Tensor.digamma_ = _inplace(SF.digamma, "digamma_")
Tensor.i0_ = _inplace(SF.i0, "i0_")
Tensor.mvlgamma_ = _inplace(SF.mvlgamma, "mvlgamma_")
Tensor.igamma_ = _inplace(SF.igamma, "igamma_")
Tensor.igammac_ = _inplace(SF.igammac, "igammac_")
Tensor.polygamma = polygamma
Tensor.polygamma_ = polygamma_

# ---- methods of the binary pointwise, comparison and logic
# (the binary ops' in-place forms write the out-of-place result back, as the ones above)


def _inplace_of(function, name: str, recorded: bool = True):
    """``Tensor.<name>(other)``: ``function(self, other)`` written into ``self``.

    Not ``recorded`` (the logical ops, as torch): autograd neither tracks nor refuses the write, so ``self`` keeps
    its node in the graph, and a leaf that requires grad stays one.
    """
    impl = function.__wrapped__

    def inplace(self, other):
        if recorded:
            return I.apply_promoting_inplace(self, impl, other, op=name)
        with no_grad():
            return I.apply_promoting_inplace(self, impl, other, op=name)

    inplace.__name__ = inplace.__qualname__ = name
    return tensor_method(inplace)


def _compared_in_place(name: str, functions: tuple):
    """``Tensor.<name>(other)``: the comparison written into ``self`` as 0 and 1, ``self`` staying in the graph."""
    compared = G.compared_in_place(functions)

    def inplace(self, other):
        return I.apply_inplace(self, compared, other, op=name)

    inplace.__name__ = inplace.__qualname__ = name
    return tensor_method(inplace)


def _unary_inplace_of(function, name: str, recorded: bool = True):
    """``Tensor.<name>()``: ``function(self)`` written into ``self`` (``recorded``: as in ``_inplace_of``)."""
    impl = function.__wrapped__

    def inplace(self):
        if recorded:
            return I.apply_inplace(self, impl, op=name)
        with no_grad():
            return I.apply_inplace(self, impl, op=name)

    inplace.__name__ = inplace.__qualname__ = name
    return tensor_method(inplace)


@tensor_method
def lerp_(self, end, weight):
    return I.apply_inplace(self, B.lerp.__wrapped__, end, weight, op="lerp_")


@tensor_method
def addcmul_(self, tensor1, tensor2, *, value=1):
    return I.apply_inplace(self, B.addcmul.__wrapped__, tensor1, tensor2, value=value, op="addcmul_")


@tensor_method
def addcdiv_(self, tensor1, tensor2, *, value=1):
    return I.apply_inplace(self, B.addcdiv.__wrapped__, tensor1, tensor2, value=value, op="addcdiv_")


@tensor_method
def divide_(self, other, *, rounding_mode=None):
    return I.apply_inplace(self, A.div.__wrapped__, other, rounding_mode=rounding_mode, op="divide_")


@tensor_method
def subtract_(self, other, *, alpha=1):
    return I.apply_inplace(self, A.sub.__wrapped__, other, alpha=alpha, op="subtract_")


@tensor_method
def float_power_(self, exponent):
    complex_result = self._data.dtype.kind == "c" or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent._data.dtype.kind == "c")
    required = D.complex128 if complex_result else D.float64
    if self.dtype != required:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {D.scalar_type_name(self._data.dtype)} but the operation's "
            f"result requires dtype {D.scalar_type_name(required.np)}; convert it first, e.g. x = x.to({required})"
        )
    return I.apply_inplace(self, B.float_power.__wrapped__, exponent, op="float_power_")


Tensor.floor_divide = method(B.floor_divide)
Tensor.remainder = method(B.remainder)
Tensor.fmod = method(B.fmod)
Tensor.float_power = method(B.float_power)
Tensor.atan2 = method(B.atan2)
Tensor.arctan2 = method(B.arctan2)
Tensor.lerp = method(B.lerp)
Tensor.addcmul = method(B.addcmul)
Tensor.addcdiv = method(B.addcdiv)
Tensor.hypot = method(B.hypot)
Tensor.logaddexp = method(B.logaddexp)
Tensor.logaddexp2 = method(B.logaddexp2)
Tensor.nan_to_num = method(B.nan_to_num)
Tensor.copysign = method(B.copysign)
Tensor.heaviside = method(B.heaviside)
Tensor.nextafter = method(B.nextafter)
Tensor.ldexp = method(B.ldexp)
Tensor.frexp = method(B.frexp)
Tensor.signbit = method(G.signbit)
Tensor.gcd = method(B.gcd)
Tensor.lcm = method(B.lcm)
Tensor.bitwise_left_shift = method(B.bitwise_left_shift)
Tensor.bitwise_right_shift = method(B.bitwise_right_shift)
Tensor.divide = method(B.divide)
Tensor.multiply = method(B.multiply)
Tensor.subtract = method(B.subtract)
Tensor.greater = method(A.greater)
Tensor.greater_equal = method(A.greater_equal)
Tensor.less = method(A.less)
Tensor.less_equal = method(A.less_equal)
Tensor.not_equal = method(A.not_equal)
Tensor.allclose = method(G.allclose)
Tensor.isclose = method(G.isclose)
Tensor.isnan = method(G.isnan)
Tensor.isinf = method(G.isinf)
Tensor.isposinf = method(G.isposinf)
Tensor.isneginf = method(G.isneginf)
Tensor.isfinite = method(G.isfinite)
Tensor.isreal = method(G.isreal)
Tensor.logical_and = method(G.logical_and)
Tensor.logical_or = method(G.logical_or)
Tensor.logical_xor = method(G.logical_xor)
Tensor.logical_not = method(G.logical_not)
Tensor.bitwise_and = method(G.bitwise_and)
Tensor.bitwise_or = method(G.bitwise_or)
Tensor.bitwise_xor = method(G.bitwise_xor)
Tensor.bitwise_not = method(G.bitwise_not)
Tensor.lerp_ = lerp_
Tensor.addcmul_ = addcmul_
Tensor.addcdiv_ = addcdiv_
Tensor.nan_to_num_ = method(B.nan_to_num_)
Tensor.divide_ = divide_
Tensor.subtract_ = subtract_
Tensor.float_power_ = float_power_
Tensor.floor_divide_ = _inplace_of(B.floor_divide, "floor_divide_")
Tensor.remainder_ = _inplace_of(B.remainder, "remainder_")
Tensor.__ifloordiv__ = method(Tensor.floor_divide_, "__ifloordiv__")
Tensor.__imod__ = method(Tensor.remainder_, "__imod__")
Tensor.fmod_ = _inplace_of(B.fmod, "fmod_")
Tensor.atan2_ = _inplace_of(B.atan2, "atan2_")
Tensor.arctan2_ = _inplace_of(B.arctan2, "arctan2_")
Tensor.hypot_ = _inplace_of(B.hypot, "hypot_")
Tensor.copysign_ = _inplace_of(B.copysign, "copysign_")
Tensor.heaviside_ = _inplace_of(B.heaviside, "heaviside_")
Tensor.nextafter_ = _inplace_of(B.nextafter, "nextafter_")
Tensor.ldexp_ = method(B.ldexp_)
Tensor.gcd_ = _inplace_of(B.gcd, "gcd_")
Tensor.lcm_ = _inplace_of(B.lcm, "lcm_")
Tensor.xlogy_ = _inplace_of(SF.xlogy, "xlogy_")
Tensor.bitwise_left_shift_ = _inplace_of(B.bitwise_left_shift, "bitwise_left_shift_")
Tensor.bitwise_right_shift_ = _inplace_of(B.bitwise_right_shift, "bitwise_right_shift_")
Tensor.multiply_ = _inplace_of(A.mul, "multiply_")
Tensor.true_divide_ = _inplace_of(A.true_divide, "true_divide_")
Tensor.eq_ = _compared_in_place("eq_", G.EQ_IN_PLACE)
Tensor.ne_ = _compared_in_place("ne_", G.NE_IN_PLACE)
Tensor.not_equal_ = _compared_in_place("not_equal_", G.NE_IN_PLACE)
Tensor.lt_ = _compared_in_place("lt_", G.LT_IN_PLACE)
Tensor.less_ = _compared_in_place("less_", G.LT_IN_PLACE)
Tensor.le_ = _compared_in_place("le_", G.LE_IN_PLACE)
Tensor.less_equal_ = _compared_in_place("less_equal_", G.LE_IN_PLACE)
Tensor.gt_ = _compared_in_place("gt_", G.GT_IN_PLACE)
Tensor.greater_ = _compared_in_place("greater_", G.GT_IN_PLACE)
Tensor.ge_ = _compared_in_place("ge_", G.GE_IN_PLACE)
Tensor.greater_equal_ = _compared_in_place("greater_equal_", G.GE_IN_PLACE)
Tensor.logical_and_ = _inplace_of(G.logical_and, "logical_and_", recorded=False)
Tensor.logical_or_ = _inplace_of(G.logical_or, "logical_or_", recorded=False)
Tensor.logical_xor_ = _inplace_of(G.logical_xor, "logical_xor_", recorded=False)
Tensor.logical_not_ = _unary_inplace_of(G.logical_not, "logical_not_", recorded=False)
Tensor.bitwise_and_ = _inplace_of(G.bitwise_and, "bitwise_and_")
Tensor.bitwise_or_ = _inplace_of(G.bitwise_or, "bitwise_or_")
Tensor.bitwise_xor_ = _inplace_of(G.bitwise_xor, "bitwise_xor_")
# The in-place bitwise operators hand themselves to handlers, as in torch
Tensor.__iand__ = method(Tensor.bitwise_and_, "__iand__")
Tensor.__ior__ = method(Tensor.bitwise_or_, "__ior__")
Tensor.__ixor__ = method(Tensor.bitwise_xor_, "__ixor__")
Tensor.__ilshift__ = method(Tensor.bitwise_left_shift_, "__ilshift__")
Tensor.__irshift__ = method(Tensor.bitwise_right_shift_, "__irshift__")
Tensor.bitwise_not_ = _unary_inplace_of(G.bitwise_not, "bitwise_not_")
Tensor.__mod__ = method(B.remainder, "__mod__")
Tensor.__rmod__ = method(B.remainder, "__rmod__", swap=True)
Tensor.__floordiv__ = method(B.floor_divide, "__floordiv__")
Tensor.__rfloordiv__ = method(B.floor_divide, "__rfloordiv__", swap=True)
Tensor.__and__ = method(G.bitwise_and, "__and__")
Tensor.__rand__ = method(G.bitwise_and, "__rand__")  # & | ^ are symmetric: 2 & t is t & 2
Tensor.__or__ = method(G.bitwise_or, "__or__")
Tensor.__ror__ = method(G.bitwise_or, "__ror__")
Tensor.__xor__ = method(G.bitwise_xor, "__xor__")
Tensor.__rxor__ = method(G.bitwise_xor, "__rxor__")
Tensor.__lshift__ = method(B.bitwise_left_shift, "__lshift__")
Tensor.__rlshift__ = method(B.bitwise_left_shift, "__rlshift__", swap=True)
Tensor.__rshift__ = method(B.bitwise_right_shift, "__rshift__")
Tensor.__rrshift__ = method(B.bitwise_right_shift, "__rrshift__", swap=True)
Tensor.__invert__ = method(G.invert, "__invert__")
Tensor.__div__ = method(A.div, "__div__")  # Python 2's names for /, which torch keeps
Tensor.__rdiv__ = method(_rtruediv, "__rdiv__")
Tensor.__idiv__ = div_

# ---- methods of the reductions and scans
from ember._ops import extrema as EX, scans as SN, statistics as ST  # noqa: E402


@tensor_method
def cumsum_(self, dim, *, dtype=None):
    SN.check_inplace_dtype("cumsum_", self, dtype)
    return I.apply_inplace(self, SN.cumsum.__wrapped__, dim, dtype=SN.inplace_dtype(self, dtype), op="cumsum_")


@tensor_method
def cumprod_(self, dim, *, dtype=None):
    SN.check_inplace_dtype("cumprod_", self, dtype)
    return I.apply_inplace(self, SN.cumprod.__wrapped__, dim, dtype=SN.inplace_dtype(self, dtype), op="cumprod_")


Tensor.max = method(EX.max)
Tensor.min = method(EX.min)
Tensor.argmax = method(EX.argmax)
Tensor.argmin = method(EX.argmin)
Tensor.aminmax = method(EX.aminmax)
Tensor.maximum = method(EX.maximum)
Tensor.minimum = method(EX.minimum)
Tensor.fmax = method(EX.fmax)
Tensor.fmin = method(EX.fmin)
Tensor.prod = method(ST.prod)
Tensor.nansum = method(ST.nansum)
Tensor.nanmean = method(ST.nanmean)
Tensor.count_nonzero = method(ST.count_nonzero)
Tensor.var = method(ST.var)
Tensor.std = method(ST.std)
Tensor.logsumexp = method(ST.logsumexp)
Tensor.softmax = method(ST.softmax)
Tensor.log_softmax = method(ST.log_softmax)
Tensor.cumsum = method(SN.cumsum)
Tensor.cumprod = method(SN.cumprod)
Tensor.cummax = method(SN.cummax)
Tensor.cummin = method(SN.cummin)
Tensor.logcumsumexp = method(SN.logcumsumexp)
Tensor.cumsum_ = cumsum_
Tensor.cumprod_ = cumprod_

# ---- methods of the sorting, selection and counting
from ember._ops import counting as CO, sorting as SO  # noqa: E402

Tensor.sort = method(SO.sort)
Tensor.argsort = method(SO.argsort)
Tensor.msort = method(SO.msort)
Tensor.topk = method(SO.topk)
Tensor.kthvalue = method(SO.kthvalue)
Tensor.median = method(SO.median)
Tensor.nanmedian = method(SO.nanmedian)
Tensor.mode = method(SO.mode)
Tensor.quantile = method(SO.quantile)
Tensor.nanquantile = method(SO.nanquantile)
Tensor.unique = method(CO.unique)
Tensor.unique_consecutive = method(CO.unique_consecutive)
Tensor.bincount = method(CO.bincount)
Tensor.histc = method(CO.histc)

# ---- methods of the shape, joining, splitting, repeating, triangles and diagonals
from ember._ops import diagonals as DG, shaping as SH  # noqa: E402

Tensor.unflatten = method(SH.unflatten)
Tensor.adjoint = method(SH.adjoint)
Tensor.movedim = method(SH.movedim)
Tensor.moveaxis = method(SH.moveaxis)
Tensor.ravel = method(SH.ravel)
Tensor.split = method(SH.split_method, "split")
Tensor.chunk = method(SH.chunk)
Tensor.tensor_split = method(SH.tensor_split)
Tensor.hsplit = method(SH.hsplit)
Tensor.vsplit = method(SH.vsplit)
Tensor.dsplit = method(SH.dsplit)
Tensor.broadcast_to = method(V.broadcast_to)
Tensor.repeat = method(SH.repeat)
Tensor.tile = method(SH.tile_method, "tile")
Tensor.repeat_interleave = method(SH.repeat_interleave)
Tensor.flip = method(SH.flip_method, "flip")
Tensor.fliplr = method(SH.fliplr)
Tensor.flipud = method(SH.flipud)
Tensor.roll = method(SH.roll)
Tensor.rot90 = method(SH.rot90)
Tensor.unsqueeze_ = method(SH.unsqueeze_)
Tensor.squeeze_ = method(SH.squeeze_)
Tensor.t_ = method(SH.t_)
Tensor.transpose_ = method(SH.transpose_)
Tensor.swapaxes_ = method(SH.swapaxes_)
Tensor.swapdims_ = method(SH.transpose_, "swapdims_")
Tensor.tril = method(DG.tril)
Tensor.triu = method(DG.triu)
Tensor.tril_ = method(DG.tril_)
Tensor.triu_ = method(DG.triu_)
Tensor.diag = method(DG.diag)
Tensor.diag_embed = method(DG.diag_embed)
Tensor.diagonal = method(DG.diagonal)
Tensor.diagflat = method(DG.diagflat)
Tensor.as_strided = method(DG.as_strided)
Tensor.unfold = method(DG.unfold)
Tensor.as_strided_ = method(DG.as_strided_)
Tensor.resize_ = method(DG.resize_)
Tensor.resize_as_ = method(DG.resize_as_)
Tensor.mT = tensor_property(property(SH.mT), "mT")
Tensor.T = tensor_property(property(SH.T), "T")
Tensor.mH = tensor_property(property(SH.mH), "mH")
Tensor.H = tensor_property(property(SH.H), "H")

# ---- methods of the gather, scatter, index and mask ops
from ember._ops import masking as MK, scatter as SC  # noqa: E402

Tensor.gather = method(SC.gather)
Tensor.scatter = method(SC.scatter)
Tensor.scatter_add = method(SC.scatter_add)
Tensor.scatter_reduce = method(SC.scatter_reduce)
Tensor.index_select = method(SC.index_select)
Tensor.index_add = method(SC.index_add)
Tensor.index_copy = method(SC.index_copy)
Tensor.index_fill = method(SC.index_fill)
Tensor.index_reduce = method(SC.index_reduce)
Tensor.masked_fill = method(MK.masked_fill)
Tensor.masked_scatter = method(MK.masked_scatter)
Tensor.masked_select = method(MK.masked_select)
Tensor.take = method(MK.take)
Tensor.take_along_dim = method(MK.take_along_dim)
Tensor.put = method(MK.put)
Tensor.nonzero = method(MK.nonzero)
Tensor.argwhere = method(MK.argwhere)
Tensor.nonzero_static = method(MK.nonzero_static)
Tensor.select_scatter = method(SC.select_scatter)
Tensor.slice_scatter = method(SC.slice_scatter)
Tensor.diagonal_scatter = method(SC.diagonal_scatter)


@tensor_method
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    return I.apply_inplace(self, SC.scatter.__wrapped__, dim, index, src, value=value, reduce=reduce, op="scatter_")


@tensor_method
def scatter_add_(self, dim, index, src):
    return I.apply_inplace(self, SC.scatter_add.__wrapped__, dim, index, src, op="scatter_add_")


@tensor_method
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return I.apply_inplace(self, SC.scatter_reduce.__wrapped__, dim, index, src, reduce, include_self=include_self,
                           op="scatter_reduce_")


@tensor_method
def index_add_(self, dim, index, source, *, alpha=1):
    return I.apply_inplace(self, SC.index_add.__wrapped__, dim, index, source, alpha=alpha, op="index_add_")


@tensor_method
def index_copy_(self, dim, index, source):
    return I.apply_inplace(self, SC.index_copy.__wrapped__, dim, index, source, op="index_copy_")


@tensor_method
def index_fill_(self, dim, index, value):
    return I.apply_inplace(self, SC.index_fill.__wrapped__, dim, index, value, op="index_fill_")


@tensor_method
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return I.apply_inplace(self, SC.index_reduce.__wrapped__, dim, index, source, reduce, include_self=include_self,
                           op="index_reduce_")


@tensor_method
def masked_fill_(self, mask, value):
    MK.check_mask_fits("masked_fill_", self, mask)
    return I.apply_inplace(self, MK.masked_fill.__wrapped__, mask, value, op="masked_fill_")


@tensor_method
def fill_diagonal_(self, fill_value, wrap=False):
    return I.apply_inplace(self, MK.masked_fill.__wrapped__, MK.diagonal_mask("fill_diagonal_", self, wrap), fill_value,
                           op="fill_diagonal_")


@tensor_method
def masked_scatter_(self, mask, source):
    MK.check_mask_fits("masked_scatter_", self, mask)
    return I.apply_inplace(self, MK.masked_scatter.__wrapped__, mask, source, op="masked_scatter_")


@tensor_method
def put_(self, index, source, accumulate=False):
    return I.apply_inplace(self, MK.put.__wrapped__, index, source, accumulate, op="put_")


Tensor.scatter_, Tensor.scatter_add_, Tensor.scatter_reduce_ = scatter_, scatter_add_, scatter_reduce_
Tensor.index_add_, Tensor.index_copy_, Tensor.index_fill_ = index_add_, index_copy_, index_fill_
Tensor.index_reduce_, Tensor.masked_fill_, Tensor.masked_scatter_, Tensor.put_ = (
    index_reduce_, masked_fill_, masked_scatter_, put_)
Tensor.fill_diagonal_ = fill_diagonal_

# ---- methods of the products and ember.linalg
from ember._ops import linalg_aliases as LA, products as P  # noqa: E402

Tensor.bmm = method(P.bmm)
Tensor.mv = method(P.mv)
Tensor.vdot = method(P.vdot)
Tensor.inner = method(P.inner)
Tensor.outer = method(P.outer)
Tensor.ger = method(P.ger)
Tensor.kron = method(P.kron)
Tensor.cross = method(P.cross)
Tensor.trace = method(P.trace)
Tensor.addmv = method(P.addmv)
Tensor.addr = method(P.addr)
Tensor.baddbmm = method(P.baddbmm)
Tensor.addbmm = method(P.addbmm)
Tensor.inverse = method(LA.inverse)
Tensor.det = method(LA.det)
Tensor.logdet = method(LA.logdet)
Tensor.slogdet = method(LA.slogdet)
Tensor.cholesky = method(LA.cholesky)
Tensor.qr = method(LA.qr)
Tensor.svd = method(LA.svd)
Tensor.pinverse = method(LA.pinverse)
Tensor.matrix_power = method(LA.matrix_power)
Tensor.matrix_exp = method(LA.matrix_exp)
Tensor.cholesky_solve = method(LA.cholesky_solve)
Tensor.cholesky_inverse = method(LA.cholesky_inverse)
Tensor.lu = method(LA.lu)
Tensor.triangular_solve = method(LA.triangular_solve)
Tensor.orgqr = method(LA.orgqr)
Tensor.geqrf = method(LA.geqrf)


@tensor_method
def lu_solve(self, LU_data, LU_pivots):
    return LA.lu_solve.__wrapped__(self, LU_data, LU_pivots)


Tensor.lu_solve = lu_solve


def _scaled_product_(function, name: str):
    """The in-place ``name`` of ``function(self, p, q, beta=, alpha=)`` (addmm_, addmv_ ...)."""

    def inplace(self, p, q, *, beta=1, alpha=1):
        return I.apply_inplace(self, function.__wrapped__, p, q, beta=beta, alpha=alpha, op=name)

    return overridable("ember.Tensor", name)(inplace)


Tensor.addmm_ = _scaled_product_(L.addmm, "addmm_")
Tensor.addmv_ = _scaled_product_(P.addmv, "addmv_")
Tensor.addr_ = _scaled_product_(P.addr, "addr_")
Tensor.baddbmm_ = _scaled_product_(P.baddbmm, "baddbmm_")
Tensor.addbmm_ = _scaled_product_(P.addbmm, "addbmm_")

# ---- methods of the creation, random sampling and type utilities
Tensor.fix = method(M.fix)
Tensor.fix_ = method(M.fix_, "fix_")
Tensor.positive = method(M.positive)
Tensor.__pos__ = Tensor.positive  # +t, as in torch
Tensor.conj = method(Cx.conj)
Tensor.conj_physical = method(Cx.conj_physical)
Tensor.conj_physical_ = method(Cx.conj_physical_, "conj_physical_")
Tensor.resolve_conj = method(M.resolve_conj)
Tensor.resolve_neg = method(M.resolve_neg)
Tensor.is_conj = method(M.is_conj)
Tensor.is_neg = method(M.is_neg)
Tensor.real = tensor_property(property(Cx.real.__wrapped__, Cx._set_real), "real")
Tensor.imag = tensor_property(property(Cx.imag.__wrapped__, Cx._set_imag), "imag")
Tensor.angle = method(M.angle)
Tensor.is_same_size = method(M.is_same_size)
Tensor.is_signed = method(M.is_signed)
Tensor.diff = method(M.diff)
Tensor.cov = method(M.cov)
Tensor.corrcoef = method(M.corrcoef)
Tensor.dist = method(M.dist)
Tensor.renorm = method(M.renorm)
Tensor.renorm_ = method(M.renorm_, "renorm_")
Tensor.histogram = method(M.histogram)
Tensor.bernoulli = method(SA.bernoulli)
Tensor.multinomial = method(SA.multinomial)
Tensor.is_nonzero = method(SA.is_nonzero)
Tensor.random_ = method(SA.random_, "random_")
Tensor.exponential_ = method(SA.exponential_, "exponential_")
Tensor.geometric_ = method(SA.geometric_, "geometric_")
Tensor.log_normal_ = method(SA.log_normal_, "log_normal_")
Tensor.cauchy_ = method(SA.cauchy_, "cauchy_")
Tensor.bernoulli_ = method(SA.bernoulli_, "bernoulli_")
Tensor.apply_ = method(SA.apply_, "apply_")
Tensor.map_ = method(SA.map_, "map_")


# ---- DLPack (ember/utils/dlpack.py)
from ember.utils import dlpack as DL  # noqa: E402

Tensor.__dlpack__ = method(DL.dlpack, "__dlpack__")
Tensor.__dlpack_device__ = method(DL.dlpack_device, "__dlpack_device__")

# ---- split and narrow variants, element-wise maps of three, and small utilities torch's Tensor has
from ember._ops import split_variants as SV  # noqa: E402

Tensor.split_with_sizes = method(SV.split_with_sizes)
Tensor.unsafe_split = method(SV.unsafe_split)
Tensor.unsafe_chunk = method(SV.unsafe_chunk)
Tensor.unsafe_split_with_sizes = method(SV.unsafe_split_with_sizes)
Tensor.narrow_copy = method(SV.narrow_copy)
Tensor.map2_ = method(SA.map2_, "map2_")
Tensor.new_empty_strided = method(SV.new_empty_strided, "new_empty_strided")
Tensor.const_data_ptr = method(Tensor.data_ptr, "const_data_ptr")

# ---- removed methods, which say what replaced them
Tensor.solve = method(_removed_names.solve)
Tensor.lstsq = method(_removed_names.lstsq)
Tensor.symeig = method(_removed_names.symeig)
Tensor.eig = method(_removed_names.eig)

# ---- storages and memory placement
Tensor.untyped_storage = method(_storage.untyped_storage)
Tensor.storage = method(_storage.storage)
Tensor.is_shared = method(_storage.is_shared)
Tensor.is_pinned = method(_storage.is_pinned)
Tensor.pin_memory = method(_storage.pin_memory)
Tensor.set_ = method(_storage.set_)

# ---- complex conversions
from ember import _complex_casts as CC  # noqa: E402

Tensor.cfloat = method(CC.cfloat, "cfloat")
Tensor.cdouble = method(CC.cdouble, "cdouble")
Tensor.chalf = method(CC.chalf, "chalf")

# ---- the short-time Fourier transform and its inverse (ember/_ops/stft.py)
from ember._ops import stft as STFT  # noqa: E402

Tensor.stft = method(STFT.stft)
Tensor.istft = method(STFT.istft)

# ---- copies of views and as_strided_scatter
from ember._ops import copies as CP  # noqa: E402

Tensor.as_strided_scatter = method(CP.as_strided_scatter)

# ---- inference tensors and the legacy constructor
from ember._ops import tensor_extras as TX  # noqa: E402

Tensor.is_inference = method(TX.is_inference)
Tensor.new = method(TX.new, "new")
Tensor.slice_inverse = method(TX.slice_inverse)
Tensor.resize = method(TX.resize, "resize")
Tensor.resize_as = method(TX.resize_as, "resize_as")

# ---- ormqr
from ember._ops import orthogonal_extras as _orthogonal_extras  # noqa: E402

Tensor.ormqr = method(_orthogonal_extras.ormqr)

# ---- hash_tensor
from ember._ops import hashing as _hashing  # noqa: E402

Tensor.hash_tensor = method(_hashing.hash_tensor)

# ---- the last small methods: dim_order, is_set_to, share_memory_, storage_type, module_load, and refusals
from ember import _dim_order, _tensor_leftovers as _leftovers  # noqa: E402

Tensor.dim_order = method(_dim_order.dim_order)
Tensor.is_set_to = method(_leftovers.is_set_to)
Tensor.share_memory_ = method(_leftovers.share_memory_)
Tensor.storage_type = method(_leftovers.storage_type)
Tensor.module_load = method(_leftovers.module_load)
Tensor.reinforce = method(_leftovers.reinforce)
Tensor.is_distributed = method(_leftovers.is_distributed)
Tensor.record_stream = method(_leftovers.record_stream)
Tensor.ipu = method(_leftovers.ipu)
Tensor.xpu = method(_leftovers.xpu)
Tensor.mtia = method(_leftovers.mtia)
# ---- quantized tensors: their integers, parameters and real values (ember/_ops/quantize.py)
from ember._ops import quantize as QZ, quantized_readers as QR  # noqa: E402

Tensor.int_repr = method(QR.int_repr)
Tensor.q_scale = method(QR.q_scale)
Tensor.q_zero_point = method(QR.q_zero_point)
Tensor.q_per_channel_scales = method(QR.q_per_channel_scales)
Tensor.q_per_channel_zero_points = method(QR.q_per_channel_zero_points)
Tensor.q_per_channel_axis = method(QR.q_per_channel_axis)
Tensor.qscheme = method(QR.qscheme, "qscheme")
Tensor.dequantize = method(QZ.dequantize)
# ---- the sparse COO layout: a dense tensor's answers (a sparse tensor's come through ember.sparse._dispatch)
from ember._ops import sparse_methods as SP  # noqa: E402

Tensor.is_sparse_csr = False  # ember has the COO layout only
Tensor.to_sparse = method(SP.to_sparse)
Tensor.to_sparse_coo = method(SP.to_sparse_coo)
Tensor.to_dense = method(SP.to_dense)
Tensor.coalesce = method(SP.coalesce)
Tensor.is_coalesced = method(SP.is_coalesced)
Tensor.indices = method(SP.indices)
Tensor.values = method(SP.values)
Tensor._indices = method(SP.indices, "_indices")
Tensor._values = method(SP.values, "_values")
Tensor._nnz = method(SP._nnz)
Tensor.sparse_dim = method(SP.sparse_dim)
Tensor.dense_dim = method(SP.dense_dim)
Tensor.sparse_mask = method(SP.sparse_mask)
Tensor.smm = method(SP.smm)
Tensor.hspmm = method(SP.hspmm)
Tensor.sspaddmm = method(SP.sspaddmm)
# ---- the compressed sparse layouts: a dense tensor's answers (a compressed one's come through
# ember.sparse._compressed_dispatch)
from ember._ops import sparse_compressed_methods as SCM  # noqa: E402

Tensor.crow_indices = method(SCM.refusing("crow_indices"))
Tensor.col_indices = method(SCM.refusing("col_indices"))
Tensor.ccol_indices = method(SCM.refusing("ccol_indices"))
Tensor.row_indices = method(SCM.refusing("row_indices"))
Tensor.to_sparse_csr = method(SCM.to_sparse_csr)
Tensor.to_sparse_csc = method(SCM.to_sparse_csc)
Tensor.to_sparse_bsr = method(SCM.to_sparse_bsr)
Tensor.to_sparse_bsc = method(SCM.to_sparse_bsc)
Tensor.sparse_resize_ = method(SCM.sparse_resize_)
Tensor.sparse_resize_and_clear_ = method(SCM.sparse_resize_and_clear_)
Tensor.resize_as_sparse_ = method(SCM.resize_as_sparse_)
