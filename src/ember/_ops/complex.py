"""Complex tensors' own ops: their parts, the conjugate, and the ways between complex and real tensors.

Gradients follow torch's convention. For a real loss L of z = x + iy, ``z.grad`` is dL/dx + i dL/dy: the
direction of steepest ascent, so ``z - lr * z.grad`` descends as it does for real parameters. A backward
formula therefore multiplies by the conjugate of a holomorphic derivative (``grad * b.conj()`` for ``a * b``).

>>> import ember
>>> z = ember.tensor([3 + 4j], requires_grad=True)
>>> z.abs().sum().backward()
>>> z.grad
tensor([0.6000+0.8000j])
>>> ember.view_as_real(ember.tensor([1 + 2j]))
tensor([[1., 2.]])
"""
from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._ops._support import check_broadcast, ember_function, require_tensor, view_of, wrap
from ember._ops.out import into_elementwise_out_of_its_dtype, into_out
from ember._tensor import Tensor
from ember.autograd.function import Function

_as_strided = np.lib.stride_tricks.as_strided
_PY_COMPLEX = type(1j)  # (this module's own ``complex`` makes tensors)
_COMPLEX_NUMBERS = frozenset({_PY_COMPLEX, np.complex64, np.complex128})


def conjugated(value):
    """``value`` conjugated if it is complex (an array, a tensor or a number); real values come back unchanged.

    What a backward formula multiplies by, so that one formula serves real and complex tensors.

    >>> conjugated(np.array([1 + 2j])), conjugated(2.0)
    (array([1.-2.j]), 2.0)
    """
    kind = type(value)
    if kind is np.ndarray:
        return value.conj() if value.dtype.kind == "c" else value
    if kind in _COMPLEX_NUMBERS:  # (NumPy's too: arithmetic on 0-d arrays gives NumPy scalars)
        return value.conjugate()
    if isinstance(value, Tensor) and value._data.dtype.kind == "c":
        return conj(value)
    return value


def _require_complex(op: str, input: Tensor) -> np.ndarray:
    data = require_tensor(input, op)._data
    if data.dtype.kind != "c":
        raise RuntimeError(f"{op} is only supported for complex tensors, got dtype {input.dtype}; "
                           f"make one with ember.complex(real, imag) or t.to(ember.complex64)")
    return data


# ----------------------------------------------------------------- the parts, as views


class Real(Function):
    backward_name = "RealBackward0"

    @classmethod
    def forward(cls, ctx, x):
        ctx.dtype = _dtype.from_numpy_dtype(x._data.dtype)
        return view_of(x, cls.part_of(x._data), (cls.public, ()))

    @staticmethod
    def part_of(data: np.ndarray) -> np.ndarray:
        return data.real

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.dtype)  # the real gradient, with no imaginary part


class Imag(Real):
    backward_name = "ImagBackward0"

    @staticmethod
    def part_of(data: np.ndarray) -> np.ndarray:
        return data.imag

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.dtype) * 1j  # y's gradient, packed as the imaginary part


@ember_function
def real(input: Tensor) -> Tensor:
    """The real part, as a view of ``input``'s memory; a real tensor is its own real part.

    >>> ember.real(ember.tensor([1 + 2j, 3 - 1j]))
    tensor([1., 3.])
    """
    if require_tensor(input, "real")._data.dtype.kind != "c":
        return input
    return Real.apply(input)


@ember_function
def imag(input: Tensor) -> Tensor:
    """The imaginary part, as a view of ``input``'s memory; refused for a real tensor, as in torch.

    >>> ember.imag(ember.tensor([1 + 2j, 3 - 1j]))
    tensor([ 2., -1.])
    """
    if require_tensor(input, "imag")._data.dtype.kind != "c":
        raise RuntimeError(
            f"imag is not implemented for tensors with non-complex dtypes (got {input.dtype}); a real tensor has no "
            "imaginary part (use ember.zeros_like(input) for zeros)"
        )
    return Imag.apply(input)


Real.public, Imag.public = real, imag  # what a view replays


def _set_real(self: Tensor, value) -> None:
    real(self).copy_(value)


def _set_imag(self: Tensor, value) -> None:
    imag(self).copy_(value)


# ----------------------------------------------------------------- the conjugate


class Conj(Function):
    backward_name = "ConjPhysicalBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, x):
        return wrap(np.conj(x._data))

    @staticmethod
    def backward(ctx, grad):
        return conjugated(grad)

    @staticmethod
    def jvp(ctx, tangent):
        return conjugated(tangent)


@ember_function
def conj(input: Tensor) -> Tensor:
    """The complex conjugate; a real tensor is its own.

    ember computes the conjugate at once (torch marks a lazy view), so ``is_conj`` is always False.

    >>> ember.conj(ember.tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    if require_tensor(input, "conj")._data.dtype.kind != "c":
        return input
    return Conj.apply(input)


@ember_function
def conj_physical(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex conjugate, computed at once; a real tensor is its own.

    >>> ember.conj_physical(ember.tensor([1 - 1j]))
    tensor([1.+1.j])
    """
    result = conj(input)
    if out is None:
        return result
    return into_elementwise_out_of_its_dtype("conj_physical", result.clone() if result is input else result, out)


def conj_physical_(self: Tensor) -> Tensor:
    if require_tensor(self, "conj_physical_")._data.dtype.kind == "c":
        self.copy_(conj(self.clone()))  # (through a copy, so that a recorded history reaches the old values)
    return self


# ----------------------------------------------------------------- between complex and real tensors


class ViewAsReal(Function):
    backward_name = "ViewAsRealBackward0"

    @staticmethod
    def forward(ctx, x):
        return view_of(x, _real_pairs(x._data), (view_as_real, ()))

    @staticmethod
    def backward(ctx, grad):
        return view_as_complex(grad.contiguous())


def _real_pairs(data: np.ndarray) -> np.ndarray:
    """A complex array's memory seen as real numbers, each element a (real, imaginary) pair on a new last dim."""
    part = data.real.itemsize
    if data.size == 0:
        return np.empty(data.shape + (2,), data.real.dtype)
    first = data.reshape(1) if data.ndim == 0 else data[(0,) * (data.ndim - 1) + (slice(0, 1),)]
    return _as_strided(first.view(data.real.dtype), data.shape + (2,), data.strides + (part,))


class ViewAsComplex(Function):
    backward_name = "ViewAsComplexBackward0"

    @staticmethod
    def forward(ctx, x):
        return view_of(x, _complex_elements(x._data), (view_as_complex, ()))

    @staticmethod
    def backward(ctx, grad):
        return view_as_real(grad)


def _complex_elements(data: np.ndarray) -> np.ndarray:
    """Pairs along the last dim of a real array's memory, seen as complex numbers."""
    complex_type = np.result_type(data.dtype, np.complex64)
    shape = data.shape[:-1]
    if data.size == 0:
        return np.empty(shape, complex_type)
    first = data[(0,) * (data.ndim - 1)]
    return _as_strided(first.view(complex_type), shape, data.strides[:-1])


def _check_pairs(input: Tensor) -> np.ndarray:
    data = require_tensor(input, "view_as_complex")._data
    if data.dtype.kind != "f" or data.dtype == np.float16:
        raise RuntimeError(f"view_as_complex is only supported for float32 and float64 tensors, but got a tensor of "
                           f"scalar type: {_dtype.scalar_type_name(data.dtype)}")
    if data.ndim == 0:
        raise RuntimeError("view_as_complex: input tensor must have one or more dimensions (a last dim of size 2)")
    if data.shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: tensor must have a last dimension of size 2, got shape {list(data.shape)}")
    if data.size and data.strides[-1] != data.itemsize:  # (NumPy gives an empty array strides of 0)
        raise RuntimeError("view_as_complex: tensor must have a last dimension with stride 1; call .contiguous() first")
    if any(stride % (2 * data.itemsize) for stride in data.strides[:-1]):
        raise RuntimeError("view_as_complex: tensor must have a stride divisible by 2 for all but last dimension; "
                           "call .contiguous() first")
    if data.__array_interface__["data"][0] % (2 * data.itemsize):
        raise RuntimeError("view_as_complex: tensor must have a storage offset divisible by 2; call .clone() first")
    return data


@ember_function
def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's memory as a real one with a last dim of 2 (real part, imaginary part); a view.

    >>> ember.view_as_real(ember.tensor([1 + 2j, 3 - 4j]))
    tensor([[ 1.,  2.],
            [ 3., -4.]])
    """
    _require_complex("view_as_real", input)
    return ViewAsReal.apply(input)


@ember_function
def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dim has size 2 seen as a complex one (the inverse of ``view_as_real``); a view.

    >>> ember.view_as_complex(ember.tensor([[1., 2.], [3., -4.]]))
    tensor([1.+2.j, 3.-4.j])
    """
    _check_pairs(input)
    return ViewAsComplex.apply(input)


class Complex(Function):
    backward_name = "ComplexBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, re, im):
        return wrap(np.asarray(re._data + 1j * im._data, np.result_type(re._data.dtype, np.complex64)))

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        if type(grad) is np.ndarray:
            return (grad.real if needs[0] else None), (grad.imag if needs[1] else None)
        return (real(grad) if needs[0] else None), (imag(grad) if needs[1] else None)


def _check_parts(op: str, first: Tensor, second: Tensor, names: tuple) -> None:
    parts = [require_tensor(t, op, position, name) for position, (t, name) in enumerate(zip((first, second), names), 1)]
    for t, name in zip(parts, names):
        dtype = t._data.dtype
        if dtype.kind != "f" or dtype == np.float16:
            raise RuntimeError(f"{op}: expected both inputs to be float32 or float64 tensors, but got {first.dtype} "
                               f"and {second.dtype}; convert {name} first, e.g. {name}.float()")
    if first._data.dtype != second._data.dtype:
        raise RuntimeError(f"{op}: expected object of scalar type {_dtype.scalar_type_name(first._data.dtype)} but "
                           f"got scalar type {_dtype.scalar_type_name(second._data.dtype)} for argument '{names[1]}'; "
                           "both parts must have the same dtype")
    check_broadcast(op, first.shape, second.shape)


@ember_function
def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex tensor ``real + i imag`` (broadcast; both float32 or both float64).

    >>> ember.complex(ember.tensor([1., 2.]), ember.tensor([3., -4.]))
    tensor([1.+3.j, 2.-4.j])
    """
    _check_parts("complex", real, imag, ("real", "imag"))
    result = Complex.apply(real, imag)
    return result if out is None else into_out("complex", result, _complex_out("complex", result, out))


@ember_function
def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex tensor with magnitudes ``abs`` and arguments ``angle``: ``abs * (cos(angle) + i sin(angle))``.

    >>> ember.polar(ember.tensor([2.]), ember.tensor([0.]))
    tensor([2.+0.j])
    """
    _check_parts("polar", abs, angle, ("abs", "angle"))
    result = complex(abs * angle.cos(), abs * angle.sin())
    return result if out is None else into_out("polar", result, _complex_out("polar", result, out))


def _complex_out(op: str, result: Tensor, out: object) -> object:
    """``out``, refused unless of the result's dtype: torch casts no complex result of its parts into another."""
    if isinstance(out, Tensor) and out._data.dtype != result._data.dtype:
        raise RuntimeError(f"{op}: expected object of scalar type {_dtype.scalar_type_name(result._data.dtype)} but "
                           f"got scalar type {_dtype.scalar_type_name(out._data.dtype)} for argument 'out'; pass an "
                           f"out of dtype {result.dtype}")
    return out


class ComplexAngle(Function):
    backward_name = "AngleBackward0"
    backward_on_arrays = False

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return wrap(np.angle(z._data))

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        # the argument's gradient is i z / |z|^2 (torch takes 0 at z = 0, where it has none)
        turned = (z * 1j) / z.abs().square()
        return grad * turned.masked_fill(z == 0, 0)


def complex_angle(input: Tensor) -> Tensor:
    """``angle`` of a complex tensor (``ember.angle`` passes complex tensors here)."""
    return ComplexAngle.apply(input)


def complex_sign(data: np.ndarray) -> np.ndarray:
    """z / |z|, and 0 where z is 0: torch's ``sgn`` of a complex array."""
    magnitude = np.abs(data)
    safe = np.where(magnitude == 0, 1, magnitude)
    return np.where(magnitude == 0, 0, data / safe).astype(data.dtype)


class ComplexSgn(Function):
    backward_name = "SgnBackward0"

    @staticmethod
    def forward(ctx, z):
        result = wrap(complex_sign(z._data))
        ctx.save_for_backward(z, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        z, s = ctx.saved_tensors
        # the change of z / |z| across the circle only: the part of grad along s is lost, then scaled by 1 / |z|
        magnitude = z.abs()
        tangential = (grad - s * real(grad * conj(s))) / magnitude.masked_fill(magnitude == 0, 1)
        return tangential.masked_fill(magnitude == 0, 0)


@ember_function
def view_as_real_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``view_as_real``, as a tensor of its own memory.

    >>> ember.view_as_real_copy(ember.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    result = view_as_real(input).clone()
    return result if out is None else into_out("view_as_real_copy", result, out)


@ember_function
def view_as_complex_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``view_as_complex``, as a tensor of its own memory.

    >>> ember.view_as_complex_copy(ember.tensor([[1., 2.]]))
    tensor([1.+2.j])
    """
    result = view_as_complex(input).clone()
    return result if out is None else into_out("view_as_complex_copy", result, out)
