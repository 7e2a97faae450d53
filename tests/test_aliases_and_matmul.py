"""NumPy's keyword names (axis=, keepdims=, x=, x2= ...), matmul's graph as torch records it, and strides.

Each case is a small program run with torch and with ember (see twins.py).
"""
import itertools

import numpy as np
import pytest

import ember
from ember import overrides
from twins import both, both_raise, normalise


def _t(lib, shape=(2, 3), dtype="float64"):
    """A tensor with the same values in both libraries."""
    values = np.arange(float(np.prod(shape))).reshape(shape) / 7 - 1
    return lib.tensor(values, dtype=getattr(lib, dtype))


# ----------------------------------------------------------------- NumPy's keyword names

ACCEPTED = [
    # reductions: axis, keepdims, and x / a / x1 for the input of the function
    "lib.sum(x, axis=0)", "x.sum(axis=1, keepdims=True)", "lib.sum(x=x, dim=0, keepdims=True)",
    "x.mean(axis=(0, 1), keepdims=True)", "lib.mean(a=x, axis=1)", "x.amax(axis=0)", "lib.amin(x1=x, axis=1)",
    "(x > 0).all(axis=0, keepdims=True)", "lib.any(a=x > 0, axis=1)", "x.sum(axis=None)",
    # dims of views and joins
    "x.squeeze(axis=0)", "lib.squeeze(x=x[None], axis=0)", "x.unsqueeze(axis=1)", "lib.unsqueeze(a=x, axis=2)",
    "x.narrow(axis=1, start=0, length=2)", "lib.select(x, axis=1, index=0)", "x.unbind(axis=1)",
    "lib.unbind(x1=x, axis=0)", "lib.cat([x, x], axis=1)", "lib.concat([x, x], axis=0)",
    "lib.concatenate([x, x], axis=1)", "lib.concatenate([x, x], dim=1)", "lib.stack([x, x], axis=2)",
    "x.size(axis=1)", "x.stride(axis=0)",
    # sorting
    "lib.argsort(x, axis=1)", "x.argsort(axis=0)", "lib.sort(x=x, axis=0)", "x.sort(axis=1)",
    # x / a / x1 for input, x2 for other
    "lib.exp(x=x)", "lib.tanh(a=x)", "lib.abs(x1=x)", "lib.clamp(x=x, min=0.0)", "lib.round(a=x, decimals=1)",
    "lib.add(x1=x, x2=y)", "lib.add(x, x2=y, alpha=2)", "lib.sub(a=x, other=y)", "lib.mul(x=x, x2=2.0)",
    "lib.div(x1=x, x2=y)", "lib.rsub(x, x2=y)", "lib.eq(x1=x, x2=y)", "lib.lt(x, x2=y)", "lib.equal(x1=x, x2=y)",
    "lib.where(x > 0, x=x, x2=y)", "lib.matmul(x1=x, x2=y.t())", "lib.pow(x=x, exponent=2)",
    "lib.clone(x=x)", "lib.flatten(x=x)", "lib.transpose(x1=x, dim0=0, dim1=1)",
    "lib.t(x=x)", "lib.broadcast_to(x=x[:1], size=(2, 3))",
    "lib.mm(x=x, mat2=y.t())", "lib.addmm(x=y[0], mat1=x.t(), mat2=y)", "lib.dot(x=x[0], tensor=y[0])",
    "lib.zeros_like(a=x)", "lib.full_like(x=x, fill_value=2.0)", "lib.ones_like(x1=x).shape",
    "lib.numel(x=x)", "lib.is_floating_point(a=x)",
    "lib.nn.functional.linear(x=x, weight=y)",
    # methods: x2 for other (self is positional: no name for the input)
    "x.add(x2=y)", "x.sub(x2=y, alpha=2)", "x.mul(x2=y)", "x.div(x2=y)", "x.true_divide(x2=y)", "x.ge(x2=y)",
    "x.equal(x2=y)", "x.matmul(x2=y.t())", "x.where(x > 0, x2=y)", "x[:1].expand_as(x2=y)", "x.view_as(x2=y)",
    "x.reshape_as(x2=y)", "x.type_as(x2=y.float())", "x.clone().add_(x2=y)", "x.clone().sub_(x2=y)",
    "x.clone().mul_(x2=y)", "x.clone().div_(x2=y)", "x.clone().copy_(x2=y)", "x.clone().copy_(other=y)",
    # linalg takes them for its input (whatever the docs call it), dim and keepdim
    "lib.linalg.vector_norm(a=x, axis=1, keepdims=True)", "lib.linalg.vector_norm(input=x)",
    "lib.linalg.matrix_norm(x=x, keepdims=True)", "lib.linalg.matrix_norm(input=x, axis=(1, 0))",
    "lib.linalg.norm(x1=x, axis=0)", "lib.linalg.vecdot(x, y, axis=0)", "lib.linalg.matmul(a=x, x2=y.t())",
]


@pytest.mark.parametrize("expression", ACCEPTED)
def test_numpy_names_are_accepted_as_in_torch(expression):
    both(lambda lib: eval(expression, {"lib": lib, "x": _t(lib), "y": _t(lib) * 2 + 1}), prepare=normalise)


REFUSED = [
    # two names for one parameter
    ("x.sum(dim=0, axis=0)", r"sum\(\)", "axis"), ("lib.sum(x, dim=0, axis=0)", r"sum\(\)", "axis"),
    ("x.squeeze(dim=0, axis=0)", r"squeeze\(\)", "axis"), ("lib.cat([x], dim=0, axis=0)", r"cat\(\)", "axis"),
    ("x.sum(0, keepdim=True, keepdims=True)", r"sum\(\)", "keepdims"), ("x.unbind(dim=0, axis=0)", "unbind", "axis"),
    ("lib.exp(x=x, a=x)", r"exp\(\)", "'x'"), ("lib.add(input=x, x=x, other=y)", r"add\(\)", "'x'"),
    ("lib.add(x, other=y, x2=y)", r"add\(\)", "x2"), ("x.add(other=y, x2=y)", r"add\(\)", "x2"),
    # methods have no input parameter to name
    ("x.exp(x=x)", "exp", ""), ("x.sum(x=x)", r"sum\(\)", ""), ("x.add(x=y)", r"add\(\)", ""),
    # only for dim, keepdim, input and other (torch.dot's second operand is "tensor"; mm's is "mat2")
    ("lib.dot(x[0], x2=y[0])", r"dot\(\)", ""), ("lib.dot(x[0], other=y[0])", r"dot\(\)", ""),
    ("lib.mm(x, x2=y.t())", r"mm\(\)", ""), ("x.pow(x2=2)", r"pow\(\)", ""),
    ("lib.transpose(x, axis0=0, axis1=1)", "transpose", ""), ("lib.linalg.svdvals(x=x)", "svdvals", ""),
    ("lib.linalg.vecdot(x1=x, x2=y)", "vecdot", ""),
    # functions torch writes in Python take none
    ("lib.norm(x=x)", r"norm\(\)", "'x'"), ("x.norm(axis=0)", r"norm\(\)", "'axis'"),
    ("lib.nn.functional.relu(x=x)", r"relu\(\)", "'x'"), ("lib.nn.functional.mse_loss(x=x, target=y)", "mse_loss", ""),
]


@pytest.mark.parametrize("expression, function, name", REFUSED)
def test_other_names_are_refused_as_in_torch(expression, function, name):
    """A TypeError in both; where given, both messages name the function and the keyword."""
    both_raise(lambda lib: eval(expression, {"lib": lib, "x": _t(lib), "y": _t(lib) * 2 + 1}), TypeError,
               function, name)


def test_a_name_given_twice_is_refused_before_anything_runs():
    """The clash is found on the keywords alone: an in-place op does not write first."""

    def program(lib):
        x = _t(lib)
        with pytest.raises(TypeError):
            x.add_(other=x, x2=x)
        return x

    both(program)


def test_every_function_in_the_table_exists():
    """A misspelt name in the table would silently take no NumPy names."""
    registered = set(overrides._names.values())
    assert set(overrides._NUMPY_NAMES) <= registered, set(overrides._NUMPY_NAMES) - registered


def _handed(lib, call):
    """What a subclass's handler and a mode receive for ``call(lib, s, t)``: func's name, args' types, kwargs."""
    seen = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(("handler", func.__name__, [type(a).__name__ for a in args], _kinds(kwargs)))
            return super().__torch_function__(func, types, args, kwargs)

    class Mode(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(("mode", func.__name__, [type(a).__name__ for a in args], _kinds(kwargs)))
            return func(*args, **(kwargs or {}))

    s, t = _t(lib).as_subclass(Sub), _t(lib)
    result = call(lib, s, t)
    with Mode():
        call(lib, t, t)
    return seen, result


def _kinds(kwargs):
    return None if kwargs is None else {k: type(v).__name__ if hasattr(v, "shape") else v for k, v in kwargs.items()}


@pytest.mark.parametrize("call", [
    lambda lib, s, t: lib.sum(s, axis=0, keepdims=True), lambda lib, s, t: s.sum(axis=1),
    lambda lib, s, t: lib.exp(x=s), lambda lib, s, t: lib.add(x1=t, x2=s), lambda lib, s, t: lib.cat([s, t], axis=1),
    lambda lib, s, t: s.squeeze(axis=0), lambda lib, s, t: t.add(x2=s),
], ids=["sum", "Tensor.sum", "exp", "add", "cat", "Tensor.squeeze", "Tensor.add"])
def test_handlers_and_modes_see_the_keywords_as_written(call):
    """torch hands the handler NumPy's names untouched, and renames them only to run the op."""
    both(lambda lib: _handed(lib, call), prepare=normalise)


# ----------------------------------------------------------------- Tensor.where, concatenate(dim=)

def test_tensor_where_takes_the_tensor_as_the_values_where_the_condition_holds():
    both(lambda lib: (_t(lib).where(_t(lib) > 0, _t(lib) * 10), _t(lib).where(_t(lib) > 0, 0.5)))


# ----------------------------------------------------------------- matmul, step by step as torch

def _graph(fn, depth=0):
    """The names of the nodes below ``fn``, depth first, indented by depth."""
    if fn is None:
        return []
    lines = ["  " * depth + fn.name().replace("torch::autograd::", "")]
    for child, _ in fn.next_functions:
        lines += _graph(child, depth + 1)
    return lines


SHAPES = [
    ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)), ((2, 2, 3), (3,)),
    ((3,), (2, 3, 2)), ((2, 3), (2, 3, 4)), ((2, 2, 3), (2, 3, 4)), ((1, 2, 3), (4, 3, 2)), ((4, 2, 3), (1, 3, 2)),
    ((2, 1, 2, 3), (3, 3, 2)), ((2, 1, 2, 3), (3, 4)), ((2, 1, 2, 3), (3,)), ((3,), (2, 1, 3, 2)),
    ((2, 3), (2, 1, 3, 4)), ((2, 1, 2, 3), (1, 3, 3, 4)), ((1, 2, 3), (3, 4)), ((2, 0, 3), (3, 4)),
    ((2, 2, 3), (3, 0)), ((3, 1, 2, 3), (3, 2)),
]
GRADS = [(True, True), (True, False), (False, True), (False, False)]


def _operand(lib, shape, requires_grad, transposed):
    """A float64 operand; ``transposed``: the same values in memory laid out with the last two dims swapped."""
    if transposed and len(shape) >= 2:
        t = _t(lib, shape[:-2] + shape[:-3:-1]).transpose(-2, -1)
    else:
        t = _t(lib, shape)
    return t.requires_grad_(requires_grad)


def _product(lib, shape_a, shape_b, grads, layout):
    a = _operand(lib, shape_a, grads[0], layout[0])
    b = _operand(lib, shape_b, grads[1], layout[1])
    result = lib.matmul(a, b)
    facts = [result, tuple(result.shape), result.stride(), result._base is None, _graph(result.grad_fn)]
    if result.requires_grad:
        inputs = [t for t in (a, b) if t.requires_grad]
        facts.append(lib.autograd.grad((result * result).sum(), inputs))
    return facts


@pytest.mark.parametrize("shape_a, shape_b", SHAPES)
def test_matmul_values_strides_and_graph_are_torchs(shape_a, shape_b):
    """Every pair of ranks and broadcast batches, with each operand requiring grad or not, in either layout."""
    for grads, layout in itertools.product(GRADS, itertools.product((False, True), repeat=2)):
        both(lambda lib: _product(lib, shape_a, shape_b, grads, layout))


@pytest.mark.parametrize("shape_a, shape_b", [s for s in SHAPES if 0 not in s[0] + s[1]])
def test_matmul_passes_gradcheck_and_gradgradcheck(shape_a, shape_b):
    a = _operand(ember, shape_a, True, False)
    b = _operand(ember, shape_b, True, True)
    assert ember.autograd.gradcheck(ember.matmul, (a, b))
    assert ember.autograd.gradgradcheck(ember.matmul, (a, b))


def test_matmul_gradient_graphs_are_torchs():
    """The gradient of a bmm is itself a bmm (not matmul's views around one), as in torch."""

    def program(lib):
        a, b = _operand(lib, (2, 2, 3), True, False), _operand(lib, (2, 3, 4), True, False)
        grads = lib.autograd.grad((lambda r: (r * r).sum())(lib.matmul(a, b)), (a, b), create_graph=True)
        return [_graph(g.grad_fn) for g in grads], grads

    both(program)


def test_matmul_refuses_what_torch_refuses():
    for shapes in [((2, 2, 3), (3, 3, 2)), ((2, 3, 2), (4,)), ((2, 2, 3), (3, 2, 2))]:
        both_raise(lambda lib: lib.matmul(lib.ones(*shapes[0]), lib.ones(*shapes[1])), RuntimeError)


# ----------------------------------------------------------------- strides of empty tensors and size-1 dims

STRIDES = [
    "lib.zeros(2, 0, 3)", "lib.ones(0, 3)", "lib.empty(3, 0)", "lib.randn(2, 1, 0)", "lib.tensor([[], []])",
    "lib.eye(0, 3)", "lib.arange(0)",
    "y[0:0]", "y[:, 0:0]", "y[2:2, 1:]", "y[::2][0:0]", "y.t()[0:0]", "y.t()[:, 4:]", "y[:0].t()",
    "y[:0].t().clone()", "y[:0].t().contiguous()", "y[:, 1:1].sum(0)", "y[:, 0:0].clone()",
    "y.t()[0:0].to(lib.float32)", "y[::2][0:0].clone()", "lib.zeros(2, 0, 3).clone()",
    "y.unsqueeze(0)", "y.unsqueeze(1)", "y.unsqueeze(2)", "y.t().unsqueeze(2)", "y[None]", "y[:, None]",
    "y[..., None]", "y[0].expand(1, 3)", "y[0].expand(2, 1, 3)", "y[:, :1]", "y.view(1, 12)", "y.reshape(4, 1, 3)",
]


def _strides(t):
    return t.stride(), t.is_contiguous()


@pytest.mark.parametrize("expression", STRIDES)
def test_strides_are_torchs(expression):
    both(lambda lib: _strides(eval(expression, {"lib": lib, "y": _t(lib, (4, 3))})))


@pytest.mark.parametrize("grads", [(False, False), (True, False)])
def test_matmul_folds_a_batch_with_new_dims_of_size_one_as_torch(grads):
    """``y[None]`` has stride 0 in NumPy for its new dim, which is no obstacle to torch's fold."""

    def program(lib):
        a = _t(lib, (2, 3))[None, :, None].requires_grad_(grads[0])  # [1, 2, 1, 3]
        result = lib.matmul(a, _t(lib, (3, 2)).requires_grad_(grads[1]))
        return result, result.stride(), _graph(result.grad_fn)

    both(program)
