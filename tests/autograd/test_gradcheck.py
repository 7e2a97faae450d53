"""``gradcheck`` and ``gradgradcheck``, proved against PyTorch 2.13.

Most programs are written once against a module ``lib`` and run with
``lib = torch`` and ``lib = ember``: both must pass or fail alike, and a
Jacobian mismatch must print the same text (``torch`` read as ``ember``) before
ember's own diagnosis. The custom Functions are the ones of the seeds in
/work/shared/seeds (PyTorch's note "Extending PyTorch").
"""
import re
import sys
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember.autograd import GradcheckError
import ember.autograd.gradcheck  # noqa: E402  (the module; the attribute of that name is the function)

from seed_functions import exp_function, linear_function, mul_constant, my_cube
from twins import LIBS, both_raise

gradcheck_module = sys.modules["ember.autograd.gradcheck"]

TorchGradcheckError = sys.modules["torch.autograd.gradcheck"].GradcheckError  # the name is shadowed by the function


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def failure_text(lib, func, inputs, checker="gradcheck", **options) -> str:
    error_type = TorchGradcheckError if lib is torch else GradcheckError
    with pytest.raises(error_type) as info:
        getattr(lib.autograd, checker)(func, inputs, **options)
    return str(info.value)


def torch_header(text: str) -> str:
    """The part of torch's message ember reproduces, with torch's names read as ember's."""
    return squash(text.replace("torch.", "ember."))


def double(lib, values, requires_grad=True):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


# ---------------------------------------------------------------- the seeds' Functions, written against lib (the rest are in seed_functions.py)


def seed_004_linear_function(lib, wrong_weight_grad=False):
    """Seed 004's LinearFunction, y = input @ weight + bias; ``wrong_weight_grad`` is its deliberate mistake."""
    class LinearFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight)
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight.t())
            if ctx.needs_input_grad[1]:
                grad_weight = input.mm(grad_output) if wrong_weight_grad else input.t().mm(grad_output)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0).squeeze(0)
            return grad_input, grad_weight, grad_bias

    return LinearFunction


def elementwise(lib, formula, needs_grad_output=True, materialize=True):
    """A one-input Function y = x**3 whose backward is ``formula(grad_output, x)``."""
    class Elementwise(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return formula(grad_output, x)

    return Elementwise


# ---------------------------------------------------------------- seed 004: the model failure


SEED_004_MESSAGE = """Jacobian mismatch for output 0 with respect to input 1,
numerical:tensor([[0.0000, 0.0000, 0.0000, 2.0000, 0.0000, 0.0000],
        [0.0000, 0.0000, 0.0000, 0.0000, 2.0000, 0.0000],
        [0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 2.0000],
        [1.0000, 0.0000, 0.0000, 3.0000, 0.0000, 0.0000],
        [0.0000, 1.0000, 0.0000, 0.0000, 3.0000, 0.0000],
        [0.0000, 0.0000, 1.0000, 0.0000, 0.0000, 3.0000]],
       dtype=ember.float64)
analytical:tensor([[0., 0., 0., 1., 0., 0.],
        [0., 0., 0., 0., 1., 0.],
        [0., 0., 0., 0., 0., 1.],
        [2., 0., 0., 3., 0., 0.],
        [0., 2., 0., 0., 3., 0.],
        [0., 0., 2., 0., 0., 3.]], dtype=ember.float64)
"""


def seed_004_inputs(lib):
    a = lib.arange(4).view(2, 2).double()
    b = lib.arange(6).view(2, 3).double()
    a.requires_grad = True
    b.requires_grad = True
    return a, b


def test_seed_004_correct_linear_passes():
    assert ember.autograd.gradcheck(seed_004_linear_function(ember).apply, seed_004_inputs(ember), eps=1e-6, atol=1e-4)


def test_seed_004_wrong_grad_weight_message_is_torchs_then_the_diagnosis():
    text = failure_text(ember, seed_004_linear_function(ember, wrong_weight_grad=True).apply, seed_004_inputs(ember),
                        eps=1e-6, atol=1e-4)
    assert squash(text).startswith(squash(SEED_004_MESSAGE))
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 1,\nnumerical:tensor([[")
    expected_torch = failure_text(torch, seed_004_linear_function(torch, wrong_weight_grad=True).apply,
                                  seed_004_inputs(torch), eps=1e-6, atol=1e-4)
    assert squash(text).startswith(torch_header(expected_torch))
    diagnosis = text.split("analytical:")[1].split("\n", 6)[-1]
    assert "row 3 (input 1 at index [1, 0]), column 0 (output 0 at index [0, 0])" in diagnosis
    assert "numerical 1, analytical 2, difference 1" in diagnosis
    assert "The analytical Jacobian is the numerical one transposed" in diagnosis
    assert "input.t().mm(grad)" in diagnosis


def test_seed_004_wrong_grad_weight_really_is_the_transpose():
    """The model case of the diagnosis, checked by building both Jacobians with torch."""
    a, b = seed_004_inputs(torch)
    numerical = torch.autograd.functional.jacobian(lambda w: a.detach().mm(w), b.detach())  # [2,3] x [2,3]
    numerical = numerical.reshape(6, 6).T  # rows: input elements, columns: output elements (gradcheck's layout)
    wrong = seed_004_linear_function(torch, wrong_weight_grad=True).apply
    analytical = torch.stack([torch.autograd.grad(wrong(a, b).reshape(-1)[k], b)[0].reshape(-1) for k in range(6)], 1)
    assert torch.equal(analytical, numerical.T)
    assert not torch.equal(analytical, numerical)


def test_raise_exception_false_returns_false():
    wrong = seed_004_linear_function(ember, wrong_weight_grad=True).apply
    assert ember.autograd.gradcheck(wrong, seed_004_inputs(ember), atol=1e-4, raise_exception=False) is False
    square = detached_square(ember).apply
    assert ember.autograd.gradgradcheck(square, (double(ember, [0.5, 2.0]),), raise_exception=False) is False


# ---------------------------------------------------------------- correct functions pass


def sample(*shape, low=-1.5, high=1.5, seed=0):
    values = np.random.default_rng(seed).uniform(low, high, size=shape)
    return ember.tensor(values, dtype=ember.float64, requires_grad=True)


def non_contiguous(rows, columns, seed=0):
    return ember.tensor(np.random.default_rng(seed).uniform(-1, 1, (columns, rows)), dtype=ember.float64).t() \
        .detach().requires_grad_()


BUILT_INS = [
    ("mul_broadcast", lambda x, y: x * y, lambda: (sample(3, 4), sample(4, seed=1))),
    ("div", lambda x, y: x / y, lambda: (sample(3), sample(3, low=0.5, high=2, seed=1))),
    ("exp_0d", lambda x: x.exp(), lambda: (sample(),)),
    ("tanh", lambda x: x.tanh(), lambda: (sample(2, 3),)),
    ("sum", lambda x: x.sum(), lambda: (sample(2, 3),)),
    ("sum_dim", lambda x: x.sum(1, keepdim=True), lambda: (sample(2, 3),)),
    ("mm", lambda x, y: x.mm(y), lambda: (sample(2, 3), sample(3, 4, seed=1))),
    ("matmul_batched", lambda x, y: x.matmul(y), lambda: (sample(2, 2, 3), sample(3, 2, seed=1))),
    ("view_transpose", lambda x: x.view(3, 2).t() * 2, lambda: (sample(2, 3),)),
    ("expand", lambda x: x.expand(3, 4), lambda: (sample(1, 4),)),
    ("indexing", lambda x: x[1:, ::2] * x[0, 1], lambda: (sample(3, 4),)),
    ("empty", lambda x: x.exp(), lambda: (sample(0, 3),)),
    ("non_contiguous_input", lambda x: x * x, lambda: (non_contiguous(3, 2),)),
    ("two_outputs", lambda x: (x.exp(), x.sum()), lambda: (sample(3),)),
    ("identity_view", lambda x: x.view(-1), lambda: (sample(2, 2),)),
]


def to_torch(x):
    """A torch copy with torch's own strides: from an empty NumPy array torch keeps strides (0, 0), which its
    gradcheck refuses."""
    values = x.detach().numpy()
    return torch.zeros(values.shape, dtype=torch.float64).copy_(torch.from_numpy(values)).requires_grad_()


@pytest.mark.parametrize("name, func, make_inputs", BUILT_INS, ids=[row[0] for row in BUILT_INS])
def test_built_in_ops_pass_like_in_torch(name, func, make_inputs):
    inputs = make_inputs()
    assert ember.autograd.gradcheck(func, inputs)
    torch_inputs = tuple(to_torch(x) for x in inputs)
    assert torch.autograd.gradcheck(func, torch_inputs)


@pytest.mark.parametrize("name, func, make_inputs", BUILT_INS[:8], ids=[row[0] for row in BUILT_INS[:8]])
def test_built_in_ops_pass_gradgradcheck(name, func, make_inputs):
    assert ember.autograd.gradgradcheck(func, make_inputs())


def test_inputs_are_restored_and_not_bumped():
    x = non_contiguous(3, 2)
    before, version = x.detach().numpy().copy(), x._version
    assert ember.autograd.gradcheck(lambda t: t.exp(), (x,))
    assert np.array_equal(x.detach().numpy(), before)
    assert x._version == version


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_seed_functions_pass(lib):
    x, w = double(lib, [[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]]), double(lib, [[0.1, 0.4, -0.2], [0.3, -0.5, 0.6]])
    b = double(lib, [0.7, -0.8])
    assert lib.autograd.gradcheck(linear_function(lib, with_setup_context=True).apply, (x, w, b), eps=1e-6, atol=1e-4)
    assert lib.autograd.gradcheck(seed_004_linear_function(lib).apply, (x, w.t().detach().requires_grad_()))
    assert lib.autograd.gradcheck(mul_constant(lib, with_setup_context=False).apply, (x, 3.5))  # the number is passed through
    assert lib.autograd.gradcheck(mul_constant(lib, materialize=False, with_setup_context=False).apply, (x, 3.5))
    assert lib.autograd.gradcheck(exp_function(lib).apply, (double(lib, 2.0),), eps=1e-6, atol=1e-4)
    cube = my_cube(lib)
    assert lib.autograd.gradcheck(cube.apply, (x,))
    assert lib.autograd.gradgradcheck(cube.apply, (x,))
    assert lib.autograd.gradgradcheck(lambda t: cube.apply(t)[0], (x,), gen_non_contig_grad_outputs=True)


def test_gradgradcheck_with_given_grad_outputs():
    x = sample(2, 3)
    grad_out = sample(2, 3, seed=5)
    assert ember.autograd.gradgradcheck(lambda t: t.tanh() * t, (x,), (grad_out,))
    # a grad_output that does not require grad is used as a constant
    assert ember.autograd.gradgradcheck(lambda t: t.tanh() * t, (x,), grad_out.detach())


# ---------------------------------------------------------------- failures: torch's text, ember's diagnosis


WRONG_BACKWARDS = [
    # name, backward formula for y = x**3 (right: 3 * g * x**2), inputs, the diagnosis sentence
    ("scaled", lambda g, x: g * x * x, [[0.5, -1.0], [2.0, 1.5]], "scaled by 0.3333"),
    ("negated", lambda g, x: -3 * g * x * x, [0.5, -1.0, 2.0], "negated: the backward has a sign error"),
    ("zero", lambda g, x: g * 0, [0.5, -1.0, 2.0], "is zero although the numerical one is not"),
    ("missing_term", lambda g, x: 3 * g * x * x * (x > 0), [0.5, -1.0, 2.0], "forgot a term"),
    ("0d", lambda g, x: 2 * g * x * x, 1.5, "scaled by 0.6667"),
]


@pytest.mark.parametrize("name, formula, values, sentence", WRONG_BACKWARDS, ids=[r[0] for r in WRONG_BACKWARDS])
def test_wrong_backward_message_matches_torch_and_names_the_pattern(name, formula, values, sentence):
    texts = {lib: failure_text(lib, elementwise(lib, formula).apply, (double(lib, values),)) for lib in LIBS}
    assert texts[ember].startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor(")
    assert squash(texts[ember]).startswith(torch_header(texts[torch]))
    assert sentence in texts[ember].split("analytical:")[1]


def test_worst_element_names_multi_dim_indices():
    # only the element at [1, 0] gets a wrong gradient
    text = failure_text(ember, elementwise(ember, lambda g, x: 3 * g * x * x + g * (x == 2.0)).apply,
                        (double(ember, [[0.5, -1.0], [2.0, 1.5]]),))
    assert "Worst element: row 2 (input 0 at index [1, 0]), column 2 (output 0 at index [1, 0])" in text
    assert "numerical 12, analytical 13, difference 1" in text


def test_numerical_zero_but_analytical_not():
    class Constant(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return ember.ones_like(x) * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    text = failure_text(ember, Constant.apply, (double(ember, [0.5, 1.0]),))
    assert "The numerical Jacobian is zero but the analytical one is not" in text


def _swapped(lib):
    class Swapped(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a * 2 + b * b

        @staticmethod
        def backward(ctx, grad):  # b's gradient where a's belongs, and a's where b's does
            (b,) = ctx.saved_tensors
            return grad * 2 * b, grad * 2

    return Swapped


def test_gradients_returned_in_the_wrong_order_are_named():
    texts = {lib: failure_text(lib, _swapped(lib).apply, (double(lib, [0.5, -1.0]), double(lib, [1.5, 2.0])))
             for lib in LIBS}
    assert squash(texts[ember]).startswith(torch_header(texts[torch]))
    assert ("The analytical Jacobian for input 0 is the numerical one for input 1: backward returns input 1's "
            "gradient in input 0's place") in texts[ember]


def test_mismatch_names_the_output_and_input_among_the_differentiable_ones():
    wrong = elementwise(ember, lambda g, x: g * x).apply
    x, skipped, y = double(ember, [0.5, 2.0]), double(ember, [1.0, 1.0], requires_grad=False), double(ember, [1.5])
    text = failure_text(ember, lambda a, b, c: (a * 2, ember.ones(2), b * a + wrong(c)), (x, skipped, y))
    assert text.startswith("Jacobian mismatch for output 1 with respect to input 1,")


def test_mismatch_matches_torch_for_an_mm_backward_and_a_non_contiguous_input():
    def program(lib):
        class BadMM(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a.mm(b)

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad.mm(b.t()), a.t().mm(grad) * 2

        a = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -2.0]], dtype=lib.float64).t().requires_grad_()
        b = double(lib, [[1.0, -0.5], [0.75, 2.0]])
        return failure_text(lib, BadMM.apply, (a, b))

    ember_text = program(ember)
    assert squash(ember_text).startswith(torch_header(program(torch)))
    assert "scaled by 2:" in ember_text


# ---------------------------------------------------------------- numerical Jacobian against torch


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=0, max_size=3), seed=st.integers(0, 2 ** 16))
def test_numerical_jacobian_matches_torchs_jacobian(shape, seed):
    values = np.random.default_rng(seed).uniform(-1, 1, size=shape)
    x = ember.tensor(values, dtype=ember.float64, requires_grad=True)
    func = lambda t: (t * t.tanh(), t.exp().sum() * 2)  # noqa: E731
    numerical = gradcheck_module._numerical_jacobians(func, (x,), list(func(x)), [0, 1], 1e-6)
    tx = torch.tensor(values)
    for i, expected in enumerate(torch.autograd.functional.jacobian(func, tx)):
        expected = expected.reshape(-1, tx.numel()).T.numpy()  # rows: input elements
        np.testing.assert_allclose(numerical[i][0], expected, atol=1e-8)


@settings(max_examples=10, deadline=None)
@given(scale=st.sampled_from([0.5, 2.0, 3.0, -2.0, 10.0]), n=st.integers(1, 4))
def test_any_constant_factor_is_named(scale, n):
    func = elementwise(ember, lambda g, x: scale * 3 * g * x * x).apply
    text = failure_text(ember, func, (sample(n, low=0.5, high=2.0),))
    assert f"scaled by {scale:.4g}:" in text


# ---------------------------------------------------------------- the other checks


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_non_double_input_warns_like_torch(lib):
    x = lib.tensor([0.5, 1.0], requires_grad=True)  # float32: passes only with loose eps and atol
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lib.autograd.gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2)
    messages = [str(w.message) for w in caught if w.category is UserWarning]
    assert messages == [
        "Input #0 requires gradient and is not a double precision floating point or complex. This check "
        "will likely fail if all the inputs are not of double precision floating point or complex. "
    ]
    if lib is ember:  # torch points the warning at its own gradcheck.py; ember at the caller
        assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match="Input #0 requires gradient"):  # the default tolerances fail
        assert not lib.autograd.gradcheck(lambda t: t * 2, (x,), raise_exception=False)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_no_input_requires_grad(lib):
    message = ("gradcheck expects at least one input tensor to require gradient, but none of them have "
               "requires_grad=True.")
    with pytest.raises(ValueError, match=re.escape(message)):
        lib.autograd.gradcheck(lambda t: t * 2, (double(lib, [1.0], requires_grad=False),), raise_exception=False)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_stride_zero_input_is_refused(lib):
    x = lib.ones(1, 3, dtype=lib.float64).expand(2, 3).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        lib.autograd.gradcheck(lambda t: t * 2, (x,))


def test_read_only_input_is_refused():
    values = np.ones(3)
    values.flags.writeable = False
    with pytest.raises(RuntimeError, match="input #0 is backed by read-only memory"):
        ember.autograd.gradcheck(lambda t: t * 2, (ember.from_numpy(values).requires_grad_(),))


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_outputs_that_do_not_require_grad(lib):
    x = double(lib, [0.5, 1.0])
    assert lib.autograd.gradcheck(lambda t: (t * 2, lib.ones(2)), (x,))
    assert lib.autograd.gradcheck(lambda t: lib.ones(2), (x,))
    text = failure_text(lib, lambda t: t.detach() * 2, (x,))
    assert text.startswith("Numerical gradient for function expected to be zero")


@pytest.mark.parametrize("extra", [3, None, "text"], ids=["int", "None", "str"])
@pytest.mark.parametrize("first", [True, False], ids=["first", "last"])
def test_non_tensor_outputs_are_refused_like_torch(extra, first):
    """torch reads ``requires_grad`` of every output, so a non-tensor one fails with AttributeError."""
    def program(lib):
        lib.autograd.gradcheck(lambda t: (extra, t * 2) if first else (t * 2, extra), (double(lib, [0.5, 1.0]),),
                               raise_exception=False)

    torch_message, ember_message = both_raise(program, AttributeError, "object has no attribute 'requires_grad'")
    assert ember_message.splitlines()[0] == torch_message
    assert f"output {0 if first else 1} of func" in ember_message


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_nan_and_inf_in_jacobians_raise_no_numpy_warning(lib):
    """sqrt at 0 and -1: NaN and inf in both Jacobians are reported, not warned about."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = failure_text(lib, lambda t: t.sqrt(), (double(lib, [0.0, -1.0]),))
    if lib is ember:
        torch_text = failure_text(torch, lambda t: t.sqrt(), (double(torch, [0.0, -1.0]),))
        assert text.startswith(torch_text.replace("torch.", "ember."))


PERTURBED = [
    (lambda lib, t: t[t > 1.0] * 2, [1.0, 2.0], False, "shape", "(0,)", "ember.Size([1]) and ember.Size([2])"),
    (lambda lib, t: t[t > 1.0] * 2, [[1.0, 2.0]], False, "shape", "(0, 0)", "ember.Size([1]) and ember.Size([2])"),
    (lambda lib, t: (t * 2).expand(2) if t > 1 else t * 2, 1.0, False, "shape", "()",
     "ember.Size([]) and ember.Size([2])"),
    (lambda lib, t: t * 2 if t.sum() > 3 else (t * 2).float(), [1.0, 2.0], False, "dtype", "(0,)",
     "ember.float32 and ember.float64"),
    (lambda lib, t: t[t > 1.0] * 2, [1.0, 2.0], True, "shape", None, "ember.Size([1]) and ember.Size([2])"),
    (lambda lib, t: t.detach()[t > 1.0] * 2, [1.0, 2.0], False, "shape", "(0,)", "ember.Size([1]) and ember.Size([2])"),
]


@pytest.mark.parametrize("func, values, fast_mode, what, index, got", PERTURBED,
                         ids=["shape", "shape_2d", "shape_0d", "dtype", "shape_fast", "no_differentiable_output"])
def test_output_changing_shape_or_dtype_when_perturbed(func, values, fast_mode, what, index, got):
    """torch raises AssertionError (not GradcheckError, so raise_exception=False does not hide it)."""
    def program(lib):
        lib.autograd.gradcheck(lambda t: func(lib, t), (double(lib, values),), fast_mode=fast_mode,
                               raise_exception=False)

    where = "" if index is None else f"on index {index} "
    torch_message, ember_message = both_raise(program, AssertionError)
    assert torch_message.replace("torch.", "ember.") == ember_message == (
        f"Expected `func` to return outputs with the same {what} when inputs are perturbed {where}by 1e-06, but got: "
        f"{what}s {got}.")


def noisy(lib, size):
    """A correct backward plus noise far below the tolerance: not reentrant, yet numerically right."""
    rng = np.random.default_rng(0)
    noise = lambda: lib.tensor(rng.normal(0, 1e-12, size))  # noqa: E731
    return elementwise(lib, lambda g, x: g * (3 * x * x + noise()))


@pytest.mark.parametrize("fast_mode", [False, True], ids=["full", "fast"])
@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_non_reentrant_backward_is_detected(lib, fast_mode):
    x = double(lib, [0.5, -1.0, 2.0])
    text = failure_text(lib, noisy(lib, 3).apply, (x,), fast_mode=fast_mode)
    assert text.splitlines()[0] == (  # torch's first line, to the letter (no space after "gradient.")
        "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
        "gives different values, although analytical gradient matches numerical gradient."
        "The tolerance for nondeterminism was 0.0.")
    assert lib.autograd.gradcheck(noisy(lib, 3).apply, (x,), nondet_tol=1e-9, fast_mode=fast_mode)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_backward_must_scale_with_grad_output(lib):
    class SumOfSquares(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x * x).sum()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x  # right for grad == 1, which is all the Jacobian check uses

    text = failure_text(lib, SumOfSquares.apply, (double(lib, [0.5, -1.0]),))
    assert text.startswith("backward not multiplied by grad_output")


UNDEFINED = "Expected backward function to handle undefined output grads."
NOT_ZERO = ("Expected all input grads to be undefined or zero when all output grads are undefined or zero.")


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_undefined_output_grads_must_give_zero_or_none(lib):
    made_up = elementwise(lib, lambda g, x: 3 * x * x if g is None else 3 * g * x * x, materialize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch adds a backwards-compatibility warning
        text = failure_text(lib, made_up.apply, (double(lib, [0.5, -1.0]),))
    assert text.startswith(NOT_ZERO)
    assert lib.autograd.gradcheck(made_up.apply, (double(lib, [0.5, -1.0]),), check_undefined_grad=False)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_backward_that_fails_on_undefined_grads(lib):
    def strict(g, x):
        if g is None:
            raise RuntimeError("no gradient")
        return 3 * g * x * x

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            lib.autograd.gradcheck(elementwise(lib, strict, materialize=False).apply, (double(lib, [0.5]),))
    assert str(info.value).startswith(UNDEFINED)
    assert "no gradient" in str(info.value.__cause__)


def test_python_errors_on_none_are_reported_too():
    """ember goes further than torch: ``None * x`` (TypeError) is the usual way a backward fails on None."""
    func = elementwise(ember, lambda g, x: 3 * g * x * x, materialize=False).apply
    text = failure_text(ember, func, (double(ember, [0.5]),))
    assert text.startswith(UNDEFINED) and "TypeError" in text
    assert ember.autograd.gradcheck(func, (double(ember, [0.5]),), check_undefined_grad=False)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_two_outputs_without_materialized_grads(lib):
    """Each output's gradient is undefined in turn (and in the Jacobian check, the other one is)."""
    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            parts = [g * k for g, k in ((grad_a, 2), (grad_b, 3)) if g is not None]
            return sum(parts) if parts else None

    assert lib.autograd.gradcheck(TwoOutputs.apply, (double(lib, [0.5, 1.0]),))


def test_gradient_attribute_checks():
    x = double(ember, [1.0, 2.0])
    with pytest.raises(GradcheckError, match="^Analytical gradient has incorrect size"):
        gradcheck_module._check_gradient_attributes(ember.ones(3, dtype=ember.float64), x, 0, False)
    with pytest.raises(GradcheckError, match="^Gradient has dtype mismatch"):
        gradcheck_module._check_gradient_attributes(ember.ones(2), x, 0, True)
    gradcheck_module._check_gradient_attributes(ember.ones(2), x, 0, False)


# ---------------------------------------------------------------- gradgradcheck


def detached_square(lib):
    """First derivative right, second wrong: backward uses x.detach(), so d(grad)/dx loses a term."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * grad * x.detach()

    return Square


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_gradgradcheck_catches_a_wrong_double_backward(lib):
    x, grad_out = double(lib, [0.5, -1.0, 2.0]), double(lib, [1.0, -0.5, 0.25])
    square = detached_square(lib).apply
    assert lib.autograd.gradcheck(square, (x,))
    text = failure_text(lib, square, (x,), "gradgradcheck", grad_outputs=(grad_out,))
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    if lib is ember:
        torch_text = failure_text(torch, detached_square(torch).apply, (double(torch, [0.5, -1.0, 2.0]),),
                                  "gradgradcheck", grad_outputs=(double(torch, [1.0, -0.5, 0.25]),))
        assert squash(text).startswith(torch_header(torch_text))
        assert "The analytical Jacobian is zero although the numerical one is not" in text


def test_gradgradcheck_catches_a_wrong_second_derivative_formula():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return WrongSquare.apply(x) * 3 * grad

    class WrongSquare(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2 * grad * x

    x = double(ember, [0.5, -1.0])
    assert ember.autograd.gradcheck(Cube.apply, (x,))
    text = failure_text(ember, Cube.apply, (x,), "gradgradcheck")
    assert "scaled by 0.5:" in text


# ---------------------------------------------------------------- options


@pytest.mark.parametrize("backward_too", [True, False])
def test_check_forward_ad_compares_forward_mode_jacobians_as_torch(backward_too):
    def program(lib):
        class CubeWithWrongJvp(my_cube(lib)):
            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0], output[1])
                ctx.save_for_forward(inputs[0], output[1])

            @staticmethod
            def jvp(ctx, tangent):
                x, dx = ctx.saved_tensors
                return -dx * tangent, 6 * x * tangent  # the first with the wrong sign

        x = double(lib, [1.0, 2.0])
        options = {"check_forward_ad": True, "check_backward_ad": backward_too}
        assert lib.autograd.gradcheck(lambda t: (t.sin() * t).sum(0), (double(lib, [[0.5, 1.0]]),), **options)
        lib.autograd.gradcheck(CubeWithWrongJvp.apply, (x,), **options)

    messages = both_raise(program, RuntimeError, "Jacobian computed with forward mode mismatch for output 0 "
                                                  "with respect to input 0,")
    assert "negated: the jvp has a sign error" in messages[1]


GRADCHECK_FLAG_ERRORS = [
    ("gradcheck", {"check_backward_ad": False},
     "Expected at least one of check_forward_ad or check_backward_ad to be True"),
    ("gradcheck", {"check_backward_ad": False, "check_batched_grad": True, "raise_exception": False},
     "Expected at least one of check_forward_ad or check_backward_ad to be True"),
    ("gradcheck", {"check_batched_grad": True, "check_backward_ad": False, "check_forward_ad": True},
     "Setting check_batched_grad=True requires check_backward_ad to be True"),
    ("gradcheck", {"check_batched_forward_grad": True},
     "Setting check_batched_forward_grad=True requires check_forward_ad to be True"),
    ("gradgradcheck", {"check_rev_over_rev": False},
     "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True"),
    ("gradgradcheck", {"check_rev_over_rev": False, "check_fwd_over_rev": True},
     "Setting check_undefined_grad=True requires check_rev_over_rev to be True"),
    ("gradgradcheck", {"check_rev_over_rev": False, "check_fwd_over_rev": True, "check_undefined_grad": False,
                       "check_batched_grad": True},
     "Setting check_batched_grad=True requires check_rev_over_rev to be True"),
]


@pytest.mark.parametrize("checker, options, first_line", GRADCHECK_FLAG_ERRORS)
def test_contradictory_options_fail_like_torch(checker, options, first_line):
    """torch checks its options first, with AssertionError; ember too, torch's text on the first line."""
    def program(lib):
        getattr(lib.autograd, checker)(lambda t: t * t, (double(lib, [1.0]),), **options)

    for message in both_raise(program, AssertionError):
        assert message.splitlines()[0] == first_line


FORWARD_OVER_REVERSE = [{"check_fwd_over_rev": True},
                        {"check_fwd_over_rev": True, "check_rev_over_rev": False, "check_undefined_grad": False}]


@pytest.mark.parametrize("options", FORWARD_OVER_REVERSE)
@pytest.mark.parametrize("lib", [torch, ember])
def test_forward_over_reverse_passes_correct_second_derivatives(lib, options):
    x = double(lib, [0.3, 1.2, -0.5])
    for f in (lambda a: a.sin() * a, lambda a: a.tanh().sum(), lambda a: a.exp().log_softmax(0)):
        assert lib.autograd.gradgradcheck(f, (x,), **options)


def _cube_with_a_detached_backward(lib):
    """Right first derivatives in both modes; the backward detaches its input, so its own derivative is wrong."""
    detached = elementwise(lib, lambda g, a: g * 3 * a.detach() ** 2)

    class Cube(detached):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_forward(a)
            return detached.forward(ctx, a)

        @staticmethod
        def jvp(ctx, t):
            (a,) = ctx.saved_tensors
            return 3 * a ** 2 * t
    return Cube


def test_forward_over_reverse_finds_a_wrong_second_derivative():
    def program(lib):
        cube = _cube_with_a_detached_backward(lib)
        x = double(lib, [0.3, 1.2, -0.5])
        assert lib.autograd.gradcheck(cube.apply, (x,), check_forward_ad=True)
        lib.autograd.gradgradcheck(cube.apply, (x,), **FORWARD_OVER_REVERSE[1])

    both_raise(program, RuntimeError, "Jacobian computed with forward mode mismatch for output 0 "
                                      "with respect to input 0,")


def test_some_mode_must_be_on():
    with pytest.raises(AssertionError, match="turn on check_backward_ad \\(reverse mode\\) or check_forward_ad"):
        ember.autograd.gradcheck(lambda t: t * 2, (double(ember, [1.0]),), check_backward_ad=False)
    with pytest.raises(AssertionError, match="turn on check_rev_over_rev \\(reverse over reverse\\)"):
        ember.autograd.gradgradcheck(lambda t: t * t, (double(ember, [1.0]),), check_rev_over_rev=False)


def test_masked_runs_the_full_check():
    wrong = elementwise(ember, lambda g, x: g * x).apply
    assert ember.autograd.gradcheck(lambda t: t * t, (double(ember, [1.0, 2.0]),), masked=True)
    assert not ember.autograd.gradcheck(wrong, (double(ember, [1.0, 2.0]),), raise_exception=False, masked=True)


# ---------------------------------------------------------------- fast_mode: v . J u instead of every element


@pytest.mark.parametrize("lib", [torch, ember])
def test_fast_mode_passes_correct_gradients(lib):
    a, b = double(lib, [[0.3, -1.2, 0.5], [2.0, 0.7, -0.4]]), double(lib, [[1.5], [-0.5], [0.25]])
    assert lib.autograd.gradcheck(lambda x, y: ((x @ y).tanh(), x.exp() * 2), (a, b), fast_mode=True)
    assert lib.autograd.gradgradcheck(lambda x, y: (x @ y).sigmoid(), (a, b), fast_mode=True)


def test_fast_mode_finds_what_the_full_check_finds_and_shows_both():
    """Seed 004's wrong grad_weight: fast mode fails in both libraries; ember then shows the full Jacobians."""
    def program(lib):
        inputs = (double(lib, [[0.3, -1.2], [2.0, 0.7]]), double(lib, [[1.5, -0.5], [0.25, 1.0]]))
        lib.autograd.gradcheck(seed_004_linear_function(lib, wrong_weight_grad=True).apply, inputs, fast_mode=True)

    torch_message, ember_message = both_raise(
        program, RuntimeError, "^Jacobian mismatch for output 0 with respect to input 1,\nnumerical:-?[0-9.]+\n",
        "fast mode",
    )
    assert "The analytical Jacobian is the numerical one transposed" in ember_message


FAST_NUMBERS = re.compile(
    r"^(Jacobian mismatch for output \d+ with respect to input \d+,\n)numerical:\S+\nanalytical:\S+\n")


def fast_text_without_projections(lib, func, inputs, **options) -> str:
    """The fast-mode message with v . J u masked: u and v are random, and each library draws its own."""
    text = failure_text(lib, func, inputs, fast_mode=True, **options).replace("torch.", "ember.")
    assert FAST_NUMBERS.match(text), text
    return FAST_NUMBERS.sub(r"\1numerical:?\nanalytical:?\n", text)


def _full_jacobians(text: str) -> tuple:
    """The whole Jacobians a fast-mode failure shows after the projections (torch's text or ember's)."""
    numerical = re.search(r"\nNumerical:\n (tensor\(.*?\))\nAnalytical:\n", text, re.S).group(1)
    analytical = re.search(r"\nAnalytical:\n(tensor\(.*?\))\n\n", text, re.S).group(1)
    return numerical, analytical


def test_fast_mode_message_is_torchs_then_the_diagnosis():
    """After the projections (torch's first lines), both libraries show the pair's whole Jacobians, printed
    alike, and the largest difference; ember then says what the mistake looks like."""
    torch_text, ember_text = (fast_text_without_projections(lib, seed_004_linear_function(lib, True).apply,
                                                            seed_004_inputs(lib)) for lib in LIBS)
    first_lines = "\n".join(torch_text.split("\n")[:3])
    assert ember_text.startswith(first_lines)
    assert _full_jacobians(ember_text) == _full_jacobians(torch_text)
    assert re.search(r"The largest difference between their elements is 1\.0000\d*\.\n", ember_text)
    assert "The analytical Jacobian is the numerical one transposed" in ember_text


def almost_right_difference(lib):
    """y = x[0] - x[1] with a backward off by 9% of each element: the full check passes with rtol=0.1, but the
    errors add up where the two columns cancel, so fast mode fails."""
    class Difference(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[0] - x[1]

        @staticmethod
        def backward(ctx, grad):
            return grad * lib.tensor([1.09, -0.91], dtype=lib.float64)

    return Difference


def test_fast_mode_failure_the_full_check_would_pass_is_named_like_torch():
    texts = []
    for lib in LIBS:
        inputs = (double(lib, [1.0, 2.0]),)
        assert lib.autograd.gradcheck(almost_right_difference(lib).apply, inputs, atol=0, rtol=0.1)
        texts.append(fast_text_without_projections(lib, almost_right_difference(lib).apply, inputs, atol=0, rtol=0.1))
    torch_text, ember_text = texts
    assert "element-wise differences are small" in torch_text  # torch says the full check would pass: so does ember
    assert "Element by element they agree within the tolerances" in ember_text
    assert "fast_mode=False" in ember_text
    assert _full_jacobians(ember_text) == _full_jacobians(torch_text)


def two_outputs_two_inputs(lib, noisy_output_1=False):
    """y0 = 2a + 3b, y1 = 5a + 7b; backward wrong for (y0, b) and (y1, a), or with noise on (y1, a)."""
    class Affine(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2 + b * 3, a * 5 + b * 7

        @staticmethod
        def backward(ctx, g0, g1):
            if noisy_output_1:  # output 0 is wrong, output 1 is right but not reentrant
                noise = lib.tensor(np.random.default_rng().normal(0, 1e-12, 2))
                return g0 * 4 + g1 * (5 + noise), g0 * 3 + g1 * 7
            return g0 * 2 + g1 * 6, g0 * 4 + g1 * 7

    return Affine


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_fast_mode_order_of_checks_is_torchs(lib):
    """Fast mode computes every analytical projection (checking reentrancy) before comparing, and compares input
    by input; the full check goes output by output."""
    inputs = lambda: (double(lib, [1.0, 2.0]), double(lib, [3.0, 4.0]))  # noqa: E731
    fast = failure_text(lib, two_outputs_two_inputs(lib).apply, inputs(), fast_mode=True)
    assert fast.startswith("Jacobian mismatch for output 1 with respect to input 0,\n")
    full = failure_text(lib, two_outputs_two_inputs(lib).apply, inputs())
    assert full.startswith("Jacobian mismatch for output 0 with respect to input 1,\n")
    noisy_fast = failure_text(lib, two_outputs_two_inputs(lib, noisy_output_1=True).apply, inputs(), fast_mode=True)
    assert noisy_fast.startswith("Backward is not reentrant")


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_fast_mode_without_differentiable_outputs_checks_every_output(lib):
    """With no output requiring grad, fast mode differences every tensor output, integer ones too, against
    nondet_tol; the full check looks at floating outputs only."""
    rounded = lambda t: (t * 3).long()  # noqa: E731  (3 * (1 +- 1e-6) rounds to 2 and 3)
    x = double(lib, [1.0, 2.0])
    assert lib.autograd.gradcheck(rounded, (x,))
    text = failure_text(lib, rounded, (x,), fast_mode=True)
    assert text.startswith("Numerical gradient for function expected to be zero")
    assert lib.autograd.gradcheck(rounded, (x,), fast_mode=True, nondet_tol=1e9)
    assert lib.autograd.gradcheck(lambda t: t.detach()[:0] * 2, (x,), fast_mode=True)
    detached = failure_text(lib, lambda t: t.detach() * 2, (x,), fast_mode=True)
    assert detached.startswith("Numerical gradient for function expected to be zero")


def test_fast_mode_calls_the_function_a_fixed_number_of_times():
    calls = []

    def counted(t):
        calls.append(1)
        return (t * t).sum(0)

    x = double(ember, np.linspace(-1, 1, 60).reshape(6, 10).tolist())
    assert ember.autograd.gradcheck(counted, (x,), fast_mode=True)
    fast = len(calls)
    calls.clear()
    assert ember.autograd.gradcheck(counted, (x,))
    assert fast < 10 < 2 * x.numel() <= len(calls)


def test_fast_mode_leaves_the_users_random_state_alone():
    ember.manual_seed(7)
    expected = ember.rand(3)
    ember.manual_seed(7)
    ember.autograd.gradcheck(lambda t: t * 2, (double(ember, [1.0, 2.0]),), fast_mode=True)
    assert ember.equal(ember.rand(3), expected)


def test_a_single_tensor_input_and_list_output():
    assert ember.autograd.gradcheck(lambda t: [t * 2, t.exp()], double(ember, [1.0, 2.0]))


def test_exports():
    assert ember.autograd.GradcheckError is gradcheck_module.GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    assert ember.autograd.gradcheck is gradcheck_module.gradcheck
    assert ember.autograd.gradgradcheck is gradcheck_module.gradgradcheck
