"""Twin tests (ember against torch) for a round of small differences: the base Function's apply, the structseq
behaviour of ``return_types``, Python ints beyond 64 bits, the strides of channels-last reductions and of
gradients, ``get_ignored_functions``, the edges of renamed composite nodes and batched ``autograd.grad``."""
import pickle

import pytest
import torch

import ember
from twins import both, both_raise


# ----------------------------------------------------------------- autograd.Function.apply on the base class

@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("grad_mode", [False, True])
def test_apply_of_the_base_function_asks_for_a_forward(requires_grad, grad_mode):
    def program(lib):
        with lib.set_grad_enabled(grad_mode):
            lib.autograd.Function.apply(lib.ones(2, requires_grad=requires_grad))

    both_raise(program, NotImplementedError, "You must implement the forward function for custom autograd.Function")


# ----------------------------------------------------------------- return_types as torch's structseqs

def _results(lib):
    """Named results of a few ops, keyed by their return type's name."""
    x = lib.tensor([[1.0, 3.0], [2.0, 0.5]], dtype=lib.float64)
    return {"max": x.max(1), "topk": x.topk(1), "sort": x.sort(), "linalg_slogdet": lib.linalg.slogdet(x),
            "svd": lib.svd(x), "aminmax": lib.aminmax(x), "frexp": lib.frexp(x)}


@pytest.mark.parametrize("name", ["max", "topk", "sort", "linalg_slogdet", "svd", "aminmax", "frexp"])
def test_return_type_is_a_structseq(name):
    def program(lib):
        result = _results(lib)[name]
        kind = getattr(lib.return_types, name)
        remade = kind(tuple(result))
        listed = kind(list(result))  # (a tuple compares its items by identity first: no tensor comparison)
        unpickled = pickle.loads(pickle.dumps(result))
        return (type(result) is kind, kind.n_fields, kind.n_sequence_fields, kind.n_unnamed_fields,
                type(remade) is kind, remade == result, listed == tuple(result), type(unpickled) is kind,
                tuple(unpickled), repr(remade).replace("torch.", "ember."), tuple(result))

    both(program)


@pytest.mark.parametrize("fields", [(1,), (1, 2, 3), ()])
def test_return_type_takes_a_sequence_of_its_length(fields):
    both_raise(lambda lib: lib.return_types.max(fields), TypeError, r"takes a 2-sequence \(\d-sequence given\)")


def test_return_type_refuses_a_non_sequence_and_names():
    both_raise(lambda lib: lib.return_types.max(5), TypeError, "requires a sequence")
    both_raise(lambda lib: lib.return_types.max(values=1, indices=2), TypeError, "sequence")


def test_return_type_takes_torchs_sequence_and_dict_form():
    both(lambda lib: (repr(lib.return_types.topk((1, 2), {})).replace("torch.", "ember."),
                      repr(lib.return_types.topk(sequence=iter((3, 4)))).replace("torch.", "ember.")))


def test_histogram_into_out_is_named_histogram_out():
    def program(lib):
        result = lib.histogram(lib.tensor([1.0, 2.0, 3.0]), 3, out=(lib.empty(0), lib.empty(0)))
        return type(result).__name__, type(result) is lib.return_types.histogram_out, tuple(result)

    both(program)


# ----------------------------------------------------------------- Python ints beyond 64 bits

_BEYOND = 2 ** 70

_OPS_GIVEN_A_NUMBER = {
    "add": lambda t, n: t + n, "radd": lambda t, n: n + t, "rsub": lambda t, n: n - t, "mul": lambda t, n: t * n,
    "div": lambda t, n: t / n, "eq": lambda t, n: t == n, "lt": lambda t, n: t < n, "pow": lambda t, n: t ** n,
    "alpha": lambda t, n: t.add(t, alpha=n), "mul_": lambda t, n: t.clone().mul_(n),
    "fill_": lambda t, n: t.clone().fill_(n), "clamp": lambda t, n: t.clamp(max=n),
    "addcmul": lambda t, n: t.addcmul(t, t, value=n), "remainder": lambda t, n: t.remainder(n),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
@pytest.mark.parametrize("op", ["add", "radd", "rsub", "mul", "div", "eq", "lt", "pow", "alpha", "mul_", "fill_",
                                "clamp", "addcmul", "remainder"])
@pytest.mark.parametrize("number", [_BEYOND, -_BEYOND, 2 ** 64, -2 ** 63 - 1])
def test_an_int_beyond_64_bits_is_refused_as_a_number(op, dtype, number):
    if dtype == "complex64" and op in ("lt", "clamp", "remainder"):
        pytest.skip("not an op of complex numbers")
    problem = "can't convert negative int to unsigned" if number < 0 else "int too big to convert"
    both_raise(lambda lib: _OPS_GIVEN_A_NUMBER[op](lib.tensor([1, 2], dtype=getattr(lib, dtype)), number),
               OverflowError, problem)


@pytest.mark.parametrize("number", [2 ** 63, 2 ** 64 - 1, -2 ** 63])
def test_an_int_of_64_bits_is_taken_by_a_float_tensor(number):
    both(lambda lib: (lib.tensor([1.0, 2.0], dtype=lib.float64) + number,
                      lib.tensor([1.0, 2.0]).clamp(max=number), lib.tensor([2.0]) ** number))


def test_where_and_full_refuse_an_int_beyond_64_bits():
    both_raise(lambda lib: lib.where(lib.tensor([True, False]), lib.tensor([1.0, 2.0]), _BEYOND), OverflowError,
               "int too big to convert")
    both_raise(lambda lib: lib.full((2,), _BEYOND, dtype=lib.float32), OverflowError, "int too big to convert")
    both_raise(lambda lib: lib.full((2,), 2 ** 63), RuntimeError, "value cannot be converted to type int64")


@pytest.mark.parametrize("number", [2 ** 63, _BEYOND, -2 ** 63 - 1])
def test_setitem_reads_an_int_as_int64(number):
    def program(lib):
        x = lib.tensor([1.0, 2.0])
        x[0] = number

    both_raise(program, ValueError, "Overflow when unpacking long long")


@pytest.mark.parametrize("values", [[2 ** 63], 2 ** 64, [[1], [-2 ** 63 - 1]]])
def test_tensor_of_an_int_beyond_int64(values):
    both_raise(lambda lib: lib.tensor(values), ValueError, "Overflow when unpacking long long")
