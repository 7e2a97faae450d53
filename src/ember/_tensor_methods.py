"""Tensor methods and operators, one line each, bound to the ops that define them.

Each line makes ``Tensor.<name>`` a public function of its own (what a
``__torch_function__`` handler receives as ``func``) around the op's
implementation, so a method costs the same as the function.
"""
from __future__ import annotations

import numpy as np

from ember._ops import (
    arithmetic as A, copy as C, indexing as X, inplace as I, linalg as L, reduction as R, unary as U, views as V,
)
from ember._ops import pointwise as P, special_functions as SF
from ember import _dtype as D
from ember import _creation as CR, functional
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


@tensor_method
def __getitem__(self, key):
    return X.getitem(self, key)


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
    return V.view.__wrapped__(self, other._data.shape)


@tensor_method
def reshape_as(self, other):
    return V.reshape.__wrapped__(self, other._data.shape)


@tensor_method
def contiguous(self, memory_format=None):
    return C.contiguous(self, memory_format)


@tensor_method
def to(self, *args, **kwargs):
    return C.to(self, *args, **kwargs)


_LEGACY_TYPE_NAMES = {
    D.float32: "FloatTensor", D.float64: "DoubleTensor", D.float16: "HalfTensor", D.int64: "LongTensor",
    D.int32: "IntTensor", D.int16: "ShortTensor", D.int8: "CharTensor", D.uint8: "ByteTensor", D.bool_: "BoolTensor",
}


@tensor_method
def type(self, dtype=None, non_blocking=False):
    """With no argument, the legacy type name ('ember.FloatTensor'); else a cast to ``dtype`` (or such a name)."""
    if dtype is None:
        return "ember." + _LEGACY_TYPE_NAMES[self.dtype]
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


def _mT(self):
    return V.transpose(self, -2, -1)


def _T(self):
    return V.permute(self, tuple(range(self._data.ndim - 1, -1, -1)))


Tensor.mT = tensor_property(property(_mT), "mT")
Tensor.T = tensor_property(property(_T), "T")

# ---- in-place methods: the out-of-place op, written back (see _ops/inplace.py)


@tensor_method
def add_(self, other, *, alpha=1):
    return I.apply_inplace(self, A.add.__wrapped__, other, alpha=alpha, op="add_")


@tensor_method
def sub_(self, other, *, alpha=1):
    return I.apply_inplace(self, A.sub.__wrapped__, other, alpha=alpha, op="sub_")


@tensor_method
def mul_(self, other):
    return I.apply_inplace(self, A.mul.__wrapped__, other, op="mul_")


@tensor_method
def div_(self, other, *, rounding_mode=None):
    return I.apply_inplace(self, A.div.__wrapped__, other, rounding_mode=rounding_mode, op="div_")


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
    return I.apply_inplace(self, U.clamp.__wrapped__, min, max, op="clamp_")


@tensor_method
def clip_(self, min=None, max=None):
    return I.apply_inplace(self, U.clamp.__wrapped__, min, max, op="clip_")


@tensor_method
def clamp_min_(self, min):
    return I.apply_inplace(self, U.clamp_min.__wrapped__, min, op="clamp_min_")


@tensor_method
def clamp_max_(self, max):
    return I.apply_inplace(self, U.clamp_max.__wrapped__, max, op="clamp_max_")


@tensor_method
def log_(self):
    return I.apply_inplace(self, U.log.__wrapped__, op="log_")


@tensor_method
def abs_(self):
    return I.apply_inplace(self, U.abs.__wrapped__, op="abs_")


@tensor_method
def absolute_(self):
    return I.apply_inplace(self, U.absolute.__wrapped__, op="absolute_")


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
def round_(self, *, decimals=0):
    return I.apply_inplace(self, U.round.__wrapped__, decimals=decimals, op="round_")


@tensor_method
def index_put_(self, indices, values, accumulate=False):
    return I.index_put_(self, indices, values, accumulate)


@tensor_method
def zero_(self):
    return I.zero_(self)


@tensor_method
def fill_(self, value):
    return I.fill_(self, value)


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
Tensor.long = long
Tensor.int = int
Tensor.short = short
Tensor.char = char
Tensor.byte = byte
Tensor.bool = bool
Tensor.add_ = Tensor.__iadd__ = add_
Tensor.sub_ = Tensor.__isub__ = sub_
Tensor.mul_ = Tensor.__imul__ = mul_
Tensor.div_ = Tensor.__itruediv__ = div_
Tensor.pow_ = Tensor.__ipow__ = pow_
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
    return I.apply_inplace(self, lambda x, k: SF.polygamma.__wrapped__(k, x), n, op="polygamma_")



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
Tensor.xlogy_ = _inplace(SF.xlogy, "xlogy_")
Tensor.mvlgamma_ = _inplace(SF.mvlgamma, "mvlgamma_")
Tensor.igamma_ = _inplace(SF.igamma, "igamma_")
Tensor.igammac_ = _inplace(SF.igammac, "igammac_")
Tensor.polygamma = polygamma
Tensor.polygamma_ = polygamma_

# ---- methods of the binary pointwise, comparison and logic

# ---- methods of the reductions and scans

# ---- methods of the sorting, selection and counting

# ---- methods of the shape, joining, splitting, repeating, triangles and diagonals

# ---- methods of the gather, scatter, index and mask ops

# ---- methods of the products and ember.linalg

# ---- methods of the creation, random sampling and type utilities

