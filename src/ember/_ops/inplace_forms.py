"""``ember.<name>_(input, ...)``: the function forms of in-place Tensor methods, as torch exposes them.

Each runs the method's own implementation, so the function and the method cannot drift.

>>> import ember
>>> x = ember.tensor([1., 4.])
>>> ember.sqrt_(x)
tensor([1., 2.])
>>> x
tensor([1., 2.])
"""
from __future__ import annotations

import inspect
from typing import Callable

from ember._tensor import Tensor
from ember.overrides import overridable


def _function_form(name: str) -> Callable:
    """The public ``ember.<name>``, dispatching as such, around ``Tensor.<name>``'s implementation.

    Its tensor parameter is called ``input`` (the method's is ``self``), so ``ember.sqrt_(input=x)`` works as in torch.
    """
    method_impl = getattr(Tensor, name).__wrapped__

    def function(input, *args, **kwargs):
        return method_impl(input, *args, **kwargs)

    signature = inspect.signature(method_impl)
    first, *rest = signature.parameters.values()
    function.__signature__ = signature.replace(parameters=[first.replace(name="input"), *rest])
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"The function form of ``Tensor.{name}``: changes ``input`` in place and returns it."
    return overridable("ember", name)(function)


abs_ = _function_form("abs_")
acos_ = _function_form("acos_")
acosh_ = _function_form("acosh_")
addmv_ = _function_form("addmv_")
arccos_ = _function_form("arccos_")
arccosh_ = _function_form("arccosh_")
arcsin_ = _function_form("arcsin_")
arcsinh_ = _function_form("arcsinh_")
arctan_ = _function_form("arctan_")
arctanh_ = _function_form("arctanh_")
as_strided_ = _function_form("as_strided_")
asin_ = _function_form("asin_")
asinh_ = _function_form("asinh_")
atan_ = _function_form("atan_")
atanh_ = _function_form("atanh_")
ceil_ = _function_form("ceil_")
clamp_ = _function_form("clamp_")
clamp_max_ = _function_form("clamp_max_")
clamp_min_ = _function_form("clamp_min_")
clip_ = _function_form("clip_")
cos_ = _function_form("cos_")
cosh_ = _function_form("cosh_")
deg2rad_ = _function_form("deg2rad_")
detach_ = _function_form("detach_")
erf_ = _function_form("erf_")
erfc_ = _function_form("erfc_")
exp2_ = _function_form("exp2_")
exp_ = _function_form("exp_")
expm1_ = _function_form("expm1_")
fill_ = _function_form("fill_")
fix_ = _function_form("fix_")
floor_ = _function_form("floor_")
frac_ = _function_form("frac_")
gcd_ = _function_form("gcd_")
i0_ = _function_form("i0_")
lcm_ = _function_form("lcm_")
log10_ = _function_form("log10_")
log1p_ = _function_form("log1p_")
log2_ = _function_form("log2_")
log_ = _function_form("log_")
logit_ = _function_form("logit_")
neg_ = _function_form("neg_")
negative_ = _function_form("negative_")
rad2deg_ = _function_form("rad2deg_")
reciprocal_ = _function_form("reciprocal_")
relu_ = _function_form("relu_")
resize_as_ = _function_form("resize_as_")
round_ = _function_form("round_")
rsqrt_ = _function_form("rsqrt_")
sigmoid_ = _function_form("sigmoid_")
sin_ = _function_form("sin_")
sinc_ = _function_form("sinc_")
sinh_ = _function_form("sinh_")
sqrt_ = _function_form("sqrt_")
square_ = _function_form("square_")
tan_ = _function_form("tan_")
tanh_ = _function_form("tanh_")
trunc_ = _function_form("trunc_")
xlogy_ = _function_form("xlogy_")
zero_ = _function_form("zero_")
conj_physical_ = _function_form("conj_physical_")
