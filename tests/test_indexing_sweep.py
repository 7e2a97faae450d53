"""Indexing (``x[key]``) and assignment (``x[key] = value``) against torch: values, views, nodes, versions, errors.

Keys are written as specs (``("T", values)`` for an int64 index tensor, ``("I32", values)``, ``("U8", values)``),
turned into each library's tensors by :func:`key_of`, so one key runs on both.
"""
import random
import warnings

import numpy as np
import pytest

from twins import both, both_raise, grad_fn_name

_DTYPES = {"T": "int64", "I32": "int32", "U8": "uint8", "I16": "int16", "I8": "int8", "F": "float32"}


def key_of(lib, spec):
    """A key spec as ``lib``'s key: tuples recursed, ``(kind, values)`` as an index tensor of that kind."""
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and spec[0] in _DTYPES:
        values = np.asarray(spec[1])
        dtype = "bool" if values.dtype == np.bool_ else _DTYPES[spec[0]]
        return lib.tensor(values.tolist(), dtype=getattr(lib, dtype))
    if isinstance(spec, tuple):
        return tuple(key_of(lib, k) for k in spec)
    return spec


def get_report(lib, shape: tuple, spec):
    """``x[key]`` of a float64 non-leaf: value, whether a view, node name, and first and second gradients."""
    x0 = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).requires_grad_()
    x = x0 * 1
    y = x[key_of(lib, spec)]
    report = [y, y._base is not None, grad_fn_name(y), x._version]
    if y.numel():
        (g,) = lib.autograd.grad((y * y).sum(), x0, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x0)
        report += [g, gg]
    return report


def set_report(lib, shape: tuple, spec, value):
    """``x[key] = value`` on a float64 non-leaf (a number, or a leaf tensor made of ``value``): result, node,
    version bump, and first and second gradients of the input and the value."""
    x0 = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).requires_grad_()
    x = x0 * 1
    inputs = [x0]
    if not isinstance(value, float):
        value = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        inputs.append(value)
    before = x._version
    x[key_of(lib, spec)] = value if isinstance(value, float) else value * 1
    report = [x, grad_fn_name(x), x._version - before]
    weights = lib.arange(float(x.numel()), dtype=lib.float64).reshape(x.shape)
    grads = lib.autograd.grad((x * x * weights).sum(), inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), inputs)
    return report + list(grads) + list(second)


def report_or_error(report, lib, *args):
    try:
        return report(lib, *args)
    except Exception as error:  # noqa: BLE001 - compared by type
        return ("error", type(error).__name__)


def both_report(report, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # uint8 masks are deprecated in both
        both(lambda lib: report_or_error(report, lib, *args))


# ---------------------------------------------------------------- keys found to differ, one by one

@pytest.mark.parametrize("spec", [
    (slice(None), ("T", [0, 1]), slice(None), 1),  # an int among index tensors is applied first, as a view
    (1, slice(None), ("T", [[0], [2]])),
    (Ellipsis, 1, ("T", [2, 0]), slice(None)),
    ("T", True), ("T", False), (slice(None), ("T", True)),  # 0-d bool tensors index as a new dim, a copy
    ("U8", [1, 0, 1]),  # uint8: a (deprecated) mask
    ("T", [True, False, True]), (("T", [0, 2]), True),
    (slice(None, None, 1),), (0, slice(None, None, 1)), (slice(0, None), 1), (slice(None, 10), ("T", [1])),
    (Ellipsis, Ellipsis), (Ellipsis, 0, Ellipsis), (Ellipsis, None, Ellipsis),  # torch's later `...` take no dim
    (("T", [[0], [1]]), ("T", [5]), False),  # an empty result reads no index, so none is out of bounds
])
def test_getitem_matches_torch(spec):
    both_report(get_report, (3, 4, 5), spec)


@pytest.mark.parametrize("spec", [
    (("T", [0, 2]), 1), (1, ("T", [0, 2])), (None, ("T", [0, 2])), (("T", [0]), None), (slice(1, None), ("T", [0])),
    (("T", [True, False, True]), 1), (slice(0, 0), ("T", [1])), (("T", []), 1),  # a view first: CopySlices
    True, (True,), (0, True), (False, 0), (None, True, 1),  # bools: a view with a new dim
    ("T", True), (slice(None), ("T", True)),  # were not written at all
    False,  # torch: no write, no version bump
    (slice(None, None, 1), ("T", [0])), (("T", [True, False, True]), slice(None, 5)),  # whole dims: no view
    (Ellipsis, None, Ellipsis),
])
@pytest.mark.parametrize("value", [7.0, [1.0], [[2.0]]], ids=["number", "vector", "leading-ones"])
def test_setitem_matches_torch(spec, value):
    both_report(set_report, (3, 4), spec, value)


@pytest.mark.parametrize("spec", [0, (0, slice(1, 3)), (-2, Ellipsis, 3), (("T", [2]), ("T", [3, 0]))])
def test_setitem_drops_the_values_leading_ones_as_torch(spec):
    both_report(set_report, (3, 4), spec, [[2.0]])


@pytest.mark.parametrize("spec", [(0, 1), (Ellipsis, 1, 2), (0, ("T", 1)), (("T", 1), ("T", 2))])
@pytest.mark.parametrize("value", [[5.0], [[5.0]]], ids=["vector", "matrix"])
def test_setitem_without_grad_drops_the_values_leading_ones_even_into_one_element(spec, value):
    def program(lib):
        x = lib.zeros(3, 4, dtype=lib.float64)
        x[key_of(lib, spec)] = lib.tensor(value, dtype=lib.float64)
        return x

    both(program)


@pytest.mark.parametrize("spec", [range(2), (slice(None), range(1, 4, 2)), ((0, 2),), (slice(None), (0, 3)),
                                  ((0, 2), (1, 3)), (1, (2, 0), slice(None)), (slice(None), [[0, 1], (1, 2)])])
def test_a_tuple_or_range_inside_a_key_indexes_as_a_list(spec):
    both_report(get_report, (3, 4, 5), spec)
    both_report(set_report, (3, 4, 5), spec, 7.0)


@pytest.mark.parametrize("spec", [
    (slice(None), ("T", [0, 1])), (Ellipsis, ("T", [2, 0])), (slice(None), ("T", [[0], [1]]), ("T", [1, 2])),
    (("T", [0, 1]), slice(None), ("T", [0, 1])), (slice(None), ("T", [True, False, True])),
    (0, slice(None), ("T", [0, 1])),
])
def test_advanced_indexing_of_a_contiguous_tensor_gives_a_contiguous_result_as_torch(spec):
    def program(lib):
        y = lib.arange(24.0).reshape(2, 3, 4)[key_of(lib, spec)]
        return y, y.is_contiguous(), y.reshape(-1).shape == y.view(-1).shape

    both(program)


def test_a_later_ellipsis_followed_by_a_dim_is_an_error():
    both_raise(lambda lib: lib.ones(2, 3, 4)[..., 0, ..., 1], IndexError)


@pytest.mark.parametrize("kind", ["I16", "I8"])
def test_index_tensors_of_int16_and_int8_are_refused(kind):
    both_raise(lambda lib: lib.ones(3, 4)[key_of(lib, (kind, [1, 0]))], IndexError,
               "tensors used as indices must be long, int, byte or bool tensors")

    def write(lib):
        lib.ones(3, 4)[key_of(lib, (kind, [1, 0]))] = 1.0

    both_raise(write, IndexError, "tensors used as indices must be long, int, byte or bool tensors")


def test_a_uint8_index_tensor_is_a_mask_with_a_deprecation_warning():
    def program(lib):
        with pytest.warns(UserWarning, match="uint8"):
            return lib.arange(12.0).view(3, 4)[key_of(lib, ("U8", [1, 0, 1]))]

    both(program)


@pytest.mark.parametrize("spec, message", [
    (("T", [3]), r"index 3 is out of bounds for dimension 0 with size 3"),
    ((0, ("T", [4])), r"index 4 is out of bounds for dimension 0 with size 4"),  # a dim of the view, as torch
    (("T", [True, False]), r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor "
                           r"\[3, 4\] at index 0"),
    ((slice(None), ("T", [True] * 3)), r"mask \[3\] at index 0 does not match .* tensor \[3, 4\] at index 1"),
    (("T", np.ones((3, 4, 1), bool)), r"too many indices for tensor of dimension 2"),
    ((("T", [0]), ("T", [0]), ("T", [0])), r"too many indices for tensor of dimension 2"),
    ((Ellipsis, 0, 0, 0), r"too many indices for tensor of dimension 2"),
    ((slice(None),) * 3, r"too many indices for tensor of dimension 2"),
    ((("T", [0, 1]), ("T", [1, 2, 3])), r"shape mismatch: indexing tensors could not be broadcast together with "
                                        r"shapes \[2\], \[3\]"),
    (np.bool_(True), r"only integers, slices .* \(got numpy.bool"),
])
def test_indexing_errors_in_torch_words(spec, message):
    both_raise(lambda lib: lib.arange(12.0).view(3, 4)[key_of(lib, spec)], IndexError, message)

    def write(lib):
        lib.arange(12.0).view(3, 4)[key_of(lib, spec)] = 1.0

    both_raise(write, IndexError, message)


def test_an_int_index_of_a_0d_tensor_is_an_error():
    both_raise(lambda lib: lib.tensor(1.0)[0], IndexError, "invalid index of a 0-dim tensor", "item()")


def test_a_mask_with_a_dim_after_it_checks_that_dims_bounds():
    both(lambda lib: lib.arange(60.0).view(3, 4, 5)[lib.ones(3, 4, dtype=lib.bool), 4])


def test_0d_index_arrays_of_numpy_select_as_views():
    def program(lib):
        x = lib.arange(4.0)
        y = x[np.array(1)]
        return y, y._base is not None

    both(program)


@pytest.mark.parametrize("statement", [
    "x[lib.tensor([0])] = lib.tensor([1.5, 2.0, 3.0, 4.0])",  # float into int64
    "x[lib.tensor([0]), 1] = lib.tensor(1.0)",
    "x[x >= 0] = lib.tensor([1.0] * 12)",
    "x[lib.tensor([0])] = lib.tensor([True])",
])
def test_index_put_with_a_value_of_another_dtype_is_an_error(statement):
    def program(lib):
        x = lib.zeros(3, 4, dtype=lib.int64)
        x[0, 0] = 1
        exec(statement, {"lib": lib, "x": x})

    both_raise(program, RuntimeError, "Index put requires the source and destination dtypes match, got Long for "
                                      "the destination and (Float|Bool) for the source")


@pytest.mark.parametrize("statement", [
    "x[x > 0] = lib.tensor(2.5)",  # a 0-d value at one mask: a masked fill, any dtype
    "x[True] = lib.tensor([[2.5, 1.0, 0.0, 1.0]])",  # a lone True: a view, as x[None]
    "x[1:] = lib.tensor([2.5, 1.0, 0.0, 1.0])",
])
def test_writes_that_take_a_value_of_another_dtype(statement):
    def program(lib):
        x = lib.zeros(3, 4, dtype=lib.int64)
        x[0, 0] = 1
        exec(statement, {"lib": lib, "x": x})
        return x, x._version

    both(program)


@pytest.mark.parametrize("value", [[1.0, 2.0], np.array([1.0, 2.0]), None, np.float32(2.5), np.bool_(True), "a"])
def test_assigning_what_is_not_a_number_or_tensor_is_a_type_error(value):
    def program(lib):
        lib.zeros(3)[:2] = value

    both_raise(program, TypeError, f"can't assign a {'numpy.' if type(value).__module__ == 'numpy' else ''}"
                                   f"{type(value).__name__}")


def test_assigning_numpy_ints_and_doubles_works():
    def program(lib):
        x = lib.zeros(3, dtype=lib.float64)
        x[0] = np.int64(2)
        x[1] = np.float64(1.5)
        x[lib.tensor([2])] = np.int32(4)
        return x

    both(program)


def test_assigning_a_complex_with_an_imaginary_part_is_an_error():
    def program(lib):
        lib.zeros(3)[0] = 2 + 1j

    both_raise(program, RuntimeError, "value cannot be converted to type .* without overflow")


def test_a_write_through_a_view_at_index_tensors_reaches_the_base_with_gradients():
    def program(lib):
        b0 = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        b = b0 * 1
        v = b[:, 1:]
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        v[lib.tensor([0, 2]), 1] = w * w
        loss = (b * b * lib.arange(12.0, dtype=lib.float64).view(3, 4)).sum()
        grads = lib.autograd.grad(loss, (b0, w), create_graph=True)
        second = lib.autograd.grad(grads[1].sum(), w)
        return b, b._version, grad_fn_name(b), grads, second

    both(program)


def test_a_broadcast_value_gets_its_gradient_summed():
    def program(lib):
        x = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True) * 1
        v = lib.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        x[lib.tensor([0, 2])] = v
        (grad,) = lib.autograd.grad((x * x).sum(), v, create_graph=True)
        return grad, lib.autograd.grad(grad.sum(), v)

    both(program)


# ---------------------------------------------------------------- a random sweep of keys

def _random_item(rng: random.Random, size: int):
    r = rng.random()
    if r < 0.2:
        return rng.randint(-size, size - 1) if size else slice(None)
    if r < 0.45:
        bound = lambda: rng.choice([None, rng.randint(-size - 2, size + 2)])  # noqa: E731
        return slice(bound(), bound(), rng.choice([None, 1, 2, 3]))
    if r < 0.55:
        return None
    if r < 0.75:
        n = rng.randint(0, 3)
        values = np.array([rng.randint(-size, size - 1) if size else 0 for _ in range(n)], np.int64)
        return (rng.choice(["T", "T", "I32"]), values.reshape(rng.choice([(n,), (n, 1)])).tolist())
    if r < 0.85:
        return ("T", [rng.random() < 0.5 for _ in range(size)])
    if r < 0.9:
        return rng.choice([True, False])
    if r < 0.95:
        return [rng.randint(-size, size - 1) for _ in range(2)] if size else slice(None)
    return ("T", rng.randint(-size, size - 1) if size else 0)


def _random_cases(count: int, seed: int) -> list:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        shape = rng.choice([(3, 4), (2, 3, 4), (4, 1, 3), (2, 0, 3)])
        key = [_random_item(rng, size) for size in shape[:rng.randint(1, len(shape))]]
        if rng.random() < 0.2:
            key.insert(rng.randint(0, len(key)), Ellipsis)
        cases.append((shape, tuple(key), rng.choice(["get", "get", 7.0, [1.0], [[2.0]]])))
    return cases


@pytest.mark.parametrize("chunk", range(4))
def test_random_keys_match_torch(chunk):
    for shape, key, mode in _random_cases(400, seed=chunk):
        if mode == "get":
            both_report(get_report, shape, key)
        else:
            both_report(set_report, shape, key, mode)
