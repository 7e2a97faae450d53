"""``sparse.mm(S, D, reduce)``, ``sparse.mm``/``sparse.addmm``'s node, ``narrow_copy`` of a sparse tensor, and
the arguments of sparse tensor methods that were taken and not acted on (``layout=``, ``copy=``, ``dense_dim=``,
``keepdim=``, ``memory_format=``), each against torch: values, dtypes, layouts, grad_fn names, gradients and
exception types."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember

REDUCES = ["sum", "mean", "amax", "max", "amin", "min"]
# row 0: two entries; row 1: none; row 2: one, whose product with D's zero is -0.0; row 3: ties in column 1
MATRIX = [[1., 0., 2.], [0., 0., 0.], [0., -3., 0.], [2., 2., 0.]]
DENSE = [[0., 1.], [2., 1.], [-1., 3.]]
WEIGHTS = [[1., 2.], [3., 4.], [5., 6.], [7., 8.]]


def _quietly(function):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that CSR support is in beta
        return function()


def _outcome(lib, function):
    """What ``function(lib)`` gives: its result, or the name of the exception it raises."""
    try:
        return _quietly(lambda: function(lib))
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error).__name__


def _reduced_with_gradients(lib, reduce: str, dtype: str) -> dict:
    dtype = getattr(lib, dtype)
    a = _quietly(lambda: lib.tensor(MATRIX, dtype=dtype).to_sparse_csr().requires_grad_())
    d = lib.tensor(DENSE, dtype=dtype, requires_grad=True)
    out = _quietly(lambda: lib.sparse.mm(a, d, reduce))
    (out * lib.tensor(WEIGHTS, dtype=dtype)).sum().backward()
    return {"out": out.detach().numpy(), "dtype": str(out.dtype).split(".")[1], "node": out.grad_fn.name(),
            "grad layout": str(a.grad.layout).split(".")[1], "crow": a.grad.crow_indices().numpy(),
            "col": a.grad.col_indices().numpy(), "values grad": a.grad.values().numpy(), "dense grad": d.grad.numpy()}


def _assert_same(mine, theirs, rtol=1e-6):
    assert mine.keys() == theirs.keys()
    for key in mine:
        if isinstance(mine[key], np.ndarray):
            np.testing.assert_allclose(mine[key], theirs[key], rtol=rtol, err_msg=key)
            np.testing.assert_array_equal(np.signbit(mine[key]), np.signbit(theirs[key]), err_msg=key)
        else:
            assert mine[key] == theirs[key], key


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduce", REDUCES)
def test_each_reduce_of_a_csr_matrix_as_torch(reduce, dtype):
    """An empty row gives 0, a row of one entry its product (+0.0 for a sum of -0.0, -0.0 for amax), and a tie
    sends the whole gradient to the first of the tied entries."""
    _assert_same(_reduced_with_gradients(ember, reduce, dtype), _reduced_with_gradients(torch, reduce, dtype))


def _nan_and_infinity_gradients(lib, reduce: str) -> list:
    s = _quietly(lambda: lib.tensor([[1., 1., 1.]]).to_sparse_csr())
    d = lib.tensor([[1., float("inf")], [float("nan"), 1.], [float("nan"), -float("inf")]], requires_grad=True)
    out = _quietly(lambda: lib.sparse.mm(s, d, reduce))
    out.sum().backward()
    return [out.detach().numpy(), d.grad.numpy()]


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_a_nan_wins_the_extremum_and_the_last_nan_takes_the_gradient_as_torch(reduce):
    for mine, theirs in zip(_nan_and_infinity_gradients(ember, reduce), _nan_and_infinity_gradients(torch, reduce)):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_float16_results_as_torch(reduce):
    def reduced(lib):
        s = lib.tensor(MATRIX, dtype=lib.float16).to_sparse_csr()
        out = lib.sparse.mm(s, lib.tensor(DENSE, dtype=lib.float16), reduce)
        return str(out.dtype).split(".")[1], out.numpy()

    (mine_dtype, mine), (their_dtype, theirs) = _quietly(lambda: reduced(ember)), _quietly(lambda: reduced(torch))
    assert mine_dtype == their_dtype == "float16"
    np.testing.assert_allclose(mine, theirs, rtol=1e-3)


def _values_function(lib, reduce: str):
    s = _quietly(lambda: lib.tensor(MATRIX, dtype=lib.float64).to_sparse_csr())
    crow, col = s.crow_indices(), s.col_indices()
    return lambda v, d: lib.sparse.mm(lib.sparse_csr_tensor(crow, col, v, s.shape), d, reduce)


def _tie_free_inputs(lib):
    v = lib.tensor([1., 2., -3., 0.5, 1.5], dtype=lib.float64, requires_grad=True)
    d = lib.tensor([[0.3, 1.1], [2.2, -0.7], [-1.3, 3.1]], dtype=lib.float64, requires_grad=True)
    return v, d


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_gradcheck_passes_as_torch_s(reduce):
    for lib in (ember, torch):
        assert _quietly(lambda: lib.autograd.gradcheck(_values_function(lib, reduce), _tie_free_inputs(lib)))


def _second_order(lib, reduce: str, wrt: int):
    v, d = _tie_free_inputs(lib)
    out = _values_function(lib, reduce)(v, d)
    first = lib.autograd.grad(out.sum(), (v, d), create_graph=True)
    return lib.autograd.grad(first[wrt].sum(), (v, d), allow_unused=True)


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_the_gradient_is_not_differentiable_again_as_torch_s(reduce, wrt):
    mine, theirs = _outcome(ember, lambda lib: _second_order(lib, reduce, wrt)), \
        _outcome(torch, lambda lib: _second_order(lib, reduce, wrt))
    assert mine == theirs == "RuntimeError"
    with pytest.raises(RuntimeError, match="_sparse_mm_reduce_impl_backward is not implemented"):
        _second_order(ember, reduce, wrt)


def _csr(lib, matrix=MATRIX, dtype=None):
    return lib.tensor(matrix, dtype=dtype).to_sparse_csr()


REFUSED = {
    "prod": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor(DENSE), "prod"),
    "unknown name": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor(DENSE), "median"),
    "reduce None": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor(DENSE), None),
    "COO, sum given": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).to_sparse(), lib.tensor(DENSE), "sum"),
    "COO, mean": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).to_sparse(), lib.tensor(DENSE), "mean"),
    "COO, amax keyword": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).to_sparse(), lib.tensor(DENSE), reduce="amax"),
    "COO, prod": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).to_sparse(), lib.tensor(DENSE), "prod"),
    "dense mat1": lambda lib: lib.sparse.mm(lib.tensor(MATRIX), lib.tensor(DENSE), "sum"),
    "CSC": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).to_sparse_csc(), lib.tensor(DENSE), "mean"),
    "BSR": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).to_sparse_bsr(1), lib.tensor(DENSE), "sum"),
    "batched CSR": lambda lib: lib.sparse.mm(lib.tensor([MATRIX, MATRIX]).to_sparse_csr(),
                                             lib.tensor(DENSE), "sum"),
    "hybrid CSR": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).unsqueeze(-1).to_sparse_csr(dense_dim=1),
                                            lib.tensor(DENSE), "sum"),
    "CSR mat2": lambda lib: lib.sparse.mm(_csr(lib), _csr(lib, DENSE), "mean"),
    "vector mat2": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor(DENSE)[:, 0], "amax"),
    "3-d mat2": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor([DENSE]), "amax"),
    "sizes": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor(DENSE)[:2], "sum"),
    "dtypes": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor(DENSE, dtype=lib.float64), "sum"),
    "integers": lambda lib: lib.sparse.mm(_csr(lib, dtype=lib.int64), lib.tensor(DENSE).long(), "sum"),
    "complex": lambda lib: lib.sparse.mm(_csr(lib, dtype=lib.complex64), lib.tensor(DENSE).to(lib.complex64),
                                         "mean"),
}


def test_refusals_say_what_was_expected_and_how_to_fix_it():
    with pytest.raises(RuntimeError, match="prod has not been enabled.*'sum', 'mean', 'amax' or 'amin'"):
        REFUSED["prod"](ember)
    with pytest.raises(NotImplementedError, match="reduce='sum'.*CSR mat1 only.*sparse_coo.*to_sparse_csr"):
        REFUSED["COO, sum given"](ember)
    with pytest.raises(RuntimeError, match="expected mat2 to have dtype ember.float32.*got ember.float64.*\\.to\\("):
        REFUSED["dtypes"](ember)


def test_an_empty_matrix_and_no_columns_as_torch():
    def both(lib):
        empty = lib.sparse_csr_tensor(lib.tensor([0, 0, 0]), lib.tensor([], dtype=lib.int64), lib.tensor([]), (2, 3))
        return (lib.sparse.mm(empty, lib.ones(3, 2), "amax").numpy(),
                lib.sparse.mm(_csr(lib), lib.ones(3, 0), "mean").shape)

    mine, theirs = _quietly(lambda: both(ember)), _quietly(lambda: both(torch))
    np.testing.assert_array_equal(mine[0], theirs[0])
    assert tuple(mine[1]) == tuple(theirs[1]) == (4, 0)


def _product_nodes(lib, layout: str) -> list:
    a = _quietly(lambda: getattr(lib.tensor(MATRIX), layout)().requires_grad_())
    d = lib.tensor(DENSE, requires_grad=True)
    return [lib.sparse.mm(a, d).grad_fn.name(), lib.sparse.addmm(lib.ones(4, 2), a, d).grad_fn.name(),
            lib.mm(a, d).grad_fn.name()]


@pytest.mark.parametrize("layout", ["to_sparse", "to_sparse_csr"])
def test_the_plain_products_record_torch_s_nodes(layout):
    assert _quietly(lambda: _product_nodes(ember, layout)) == _quietly(lambda: _product_nodes(torch, layout))


def _addmm_gradients(lib, layout: str) -> list:
    a = _quietly(lambda: getattr(lib.tensor(MATRIX), layout)().requires_grad_())
    d = lib.tensor(DENSE, requires_grad=True)
    mat = lib.tensor([[1., -2.]], requires_grad=True)  # broadcast over the rows
    out = _quietly(lambda: lib.sparse.addmm(mat, a, d, beta=2., alpha=3.))
    (out * lib.tensor(WEIGHTS)).sum().backward()
    values = a.grad.coalesce().values() if a.grad.layout == lib.sparse_coo else a.grad.values()
    return [out.detach().numpy(), values.numpy(), d.grad.numpy(), mat.grad.numpy()]


@pytest.mark.parametrize("layout", ["to_sparse", "to_sparse_csr"])
def test_sparse_addmm_values_and_gradients_as_torch(layout):
    for mine, theirs in zip(_addmm_gradients(ember, layout), _addmm_gradients(torch, layout)):
        np.testing.assert_allclose(mine, theirs)


def test_sparse_addmm_with_beta_zero_does_not_read_mat_as_torch():
    def added(lib):
        return lib.sparse.addmm(lib.full((4, 2), float("nan")), _csr(lib), lib.tensor(DENSE), beta=0).numpy()

    np.testing.assert_array_equal(_quietly(lambda: added(ember)), _quietly(lambda: added(torch)))


PRODUCT_REFUSED = {
    "COO times a vector": lambda lib: lib.sparse.mm(lib.tensor(MATRIX).to_sparse(), lib.tensor(DENSE)[:, 0]),
    "CSR times a vector": lambda lib: lib.sparse.mm(_csr(lib), lib.tensor(DENSE)[:, 0]),
    "sparse mat added": lambda lib: lib.sparse.addmm(lib.ones(4, 2).to_sparse(), lib.tensor(MATRIX).to_sparse(),
                                                     lib.tensor(DENSE)),
    "mat too big": lambda lib: lib.sparse.addmm(lib.ones(5, 2), lib.tensor(MATRIX).to_sparse(), lib.tensor(DENSE)),
}


# ------------------------------------------------------------------------------------------------- narrow_copy

def _four_d(lib):
    return lib.arange(16).reshape(2, 2, 2, 2).to_sparse(2)


def _uncoalesced(lib):
    return _quietly(lambda: lib.sparse_coo_tensor([[2, 0, 1, 1], [0, 1, 0, 0]], [1., 2., 3., 4.], (3, 2)))


NARROWED = {
    "sparse dim 0 (torch's example)": lambda lib: lib.narrow_copy(_four_d(lib), 0, 0, 1),
    "sparse dim 1": lambda lib: lib.narrow_copy(_four_d(lib), 1, 1, 1),
    "dense dim 2": lambda lib: lib.narrow_copy(_four_d(lib), 2, 1, 1),
    "dense dim 3, whole": lambda lib: lib.narrow_copy(_four_d(lib), 3, 0, 2),
    "method": lambda lib: _four_d(lib).narrow_copy(0, 1, 1),
    "length 0": lambda lib: lib.narrow_copy(_four_d(lib), 1, 2, 0),
    "tensor start": lambda lib: lib.narrow_copy(_four_d(lib), 0, lib.tensor(1), 1),
    "uncoalesced, sparse dim": lambda lib: lib.narrow_copy(_uncoalesced(lib), 0, 1, 2),
    "uncoalesced, one entry left": lambda lib: lib.narrow_copy(_uncoalesced(lib), 0, 2, 1),
    "coalesced": lambda lib: lib.narrow_copy(_uncoalesced(lib).coalesce(), 1, 1, 1),
}


def _described(s) -> tuple:
    return (s._indices().numpy().tolist(), s._values().numpy().tolist(), tuple(s.shape), s._nnz(), s.is_coalesced(),
            str(s.layout).split(".")[1], str(s.dtype).split(".")[1])


@pytest.mark.parametrize("case", NARROWED)
def test_narrow_copy_of_a_sparse_tensor_as_torch(case):
    assert _described(NARROWED[case](ember)) == _described(NARROWED[case](torch))


NARROW_REFUSED = {
    "negative dim": lambda lib: lib.narrow_copy(_four_d(lib), -1, 0, 1),
    "dim too big": lambda lib: lib.narrow_copy(_four_d(lib), 4, 0, 1),
    "negative start": lambda lib: lib.narrow_copy(_four_d(lib), 1, -1, 1),
    "past the end": lambda lib: lib.narrow_copy(_four_d(lib), 1, 1, 2),
    "negative length": lambda lib: lib.narrow_copy(_four_d(lib), 1, 0, -1),
    "CSR": lambda lib: lib.narrow_copy(_csr(lib), 0, 1, 2),
    "out=": lambda lib: lib.narrow_copy(_four_d(lib), 0, 0, 1, out=lib.empty(0, dtype=lib.int64)),
    "backward": lambda lib: lib.narrow_copy(_uncoalesced(lib).coalesce().requires_grad_(), 0, 1, 2)
    .to_dense().sum().backward(),
}


def test_narrow_copy_records_torch_s_node():
    def node(lib):
        return lib.narrow_copy(_uncoalesced(lib).coalesce().requires_grad_(), 0, 1, 2).grad_fn.name()

    assert node(ember) == node(torch) == "NarrowCopyBackward0"


# ------------------------------------------------------------------- arguments that were taken and not acted on

def _coo(lib):
    return lib.tensor([[1., 0.], [0., 2.]]).to_sparse()


def _summary(t) -> tuple:
    layout = str(t.layout).split(".")[1]
    stored = None if layout == "strided" else t._nnz()
    return layout, str(t.dtype).split(".")[1], tuple(t.shape), t.requires_grad, stored


MADE_IN_A_LAYOUT = {
    "COO zeros_like, strided": lambda lib: lib.zeros_like(_coo(lib), layout=lib.strided, requires_grad=True),
    "COO zeros_like, CSR": lambda lib: lib.zeros_like(_coo(lib), layout=lib.sparse_csr),
    "COO empty_like, strided": lambda lib: lib.empty_like(_coo(lib), layout=lib.strided, dtype=lib.float64),
    "COO new_zeros, strided": lambda lib: _coo(lib).new_zeros((2, 3), layout=lib.strided),
    "COO new_zeros, CSC": lambda lib: _coo(lib).new_zeros((2, 3), layout=lib.sparse_csc),
    "COO new_empty, strided": lambda lib: _coo(lib).new_empty((2, 3), layout=lib.strided),
    "COO new_zeros": lambda lib: _coo(lib).new_zeros((2, 3)),
    "CSR zeros_like, COO": lambda lib: lib.zeros_like(_csr(lib), layout=lib.sparse_coo),
    "CSR new_zeros, strided": lambda lib: _csr(lib).new_zeros((2, 3), layout=lib.strided),
    "CSR new_empty, strided": lambda lib: _csr(lib).new_empty((2, 3), layout=lib.strided),
    "CSR new_zeros, COO": lambda lib: _csr(lib).new_zeros((2, 3), layout=lib.sparse_coo),
}


@pytest.mark.parametrize("case", MADE_IN_A_LAYOUT)
def test_layout_is_honoured_by_the_factories_of_a_sparse_tensor_as_torch(case):
    mine, theirs = _quietly(lambda: MADE_IN_A_LAYOUT[case](ember)), _quietly(lambda: MADE_IN_A_LAYOUT[case](torch))
    assert _summary(mine) == _summary(theirs)


@pytest.mark.parametrize("layout", ["to_sparse", "to_sparse_csr"])
def test_to_with_copy_returns_a_new_tensor_as_torch(layout):
    for lib in (ember, torch):
        s = _quietly(lambda: getattr(lib.tensor([[1., 0.], [0., 2.]]), layout)())
        copied = _quietly(lambda: s.to(lib.float32, copy=True))
        assert copied is not s and s.to(lib.float32) is s
        assert s.to(copy=True) is not s


def _unmasked_gradient(lib, make_sparse) -> tuple:
    s = _quietly(lambda: make_sparse(lib).requires_grad_())
    out = s.to_dense(masked_grad=False)
    weights = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) % 3  # zeros too: they are dropped
    (out * weights).sum().backward()
    grad = s.grad
    if grad.layout == lib.sparse_coo:
        parts = [grad._indices().numpy().tolist()]
    else:
        parts = [grad.crow_indices().numpy().tolist(), grad.col_indices().numpy().tolist()]
    return out.grad_fn.name(), str(grad.layout).split(".")[1], parts, grad.to_dense().numpy().tolist()


TO_DENSE_OF = {
    "COO": lambda lib: _coo(lib),
    "hybrid COO": lambda lib: lib.tensor([[[1., 2.], [0., 0.]], [[0., 0.], [3., 0.]]]).to_sparse(1),
    "CSR": lambda lib: _csr(lib),
}


@pytest.mark.parametrize("case", TO_DENSE_OF)
def test_to_dense_without_a_masked_gradient_as_torch(case):
    """The gradient is the dense one made sparse, every nonzero element of it, not only the tensor's pattern."""
    assert _unmasked_gradient(ember, TO_DENSE_OF[case]) == _unmasked_gradient(torch, TO_DENSE_OF[case])


def _relu_in_place(lib, layout: str) -> tuple:
    s = _quietly(lambda: getattr(lib.tensor([[1., -1.], [0., 2.]]), layout)())
    result = lib.nn.functional.relu(s, inplace=True)
    return result is s, s.to_dense().numpy().tolist(), s._nnz()


@pytest.mark.parametrize("layout", ["to_sparse", "to_sparse_csr"])
def test_functional_relu_in_place_as_torch(layout):
    assert _relu_in_place(ember, layout) == _relu_in_place(torch, layout)


ARGUMENT_REFUSED = {
    "COO to_sparse dense_dim": lambda lib: _coo(lib).to_sparse(dense_dim=0),
    "COO to_sparse blocksize": lambda lib: _coo(lib).to_sparse(layout=lib.sparse_coo, blocksize=(1, 1)),
    "COO norm keepdim": lambda lib: _coo(lib).norm(2, dim=(0, 1), keepdim=True),
    "COO clone memory_format": lambda lib: _coo(lib).clone(memory_format=lib.contiguous_format),
    "CSR clone memory_format": lambda lib: _csr(lib).clone(memory_format=lib.preserve_format),
    "COO double memory_format": lambda lib: _coo(lib).double(memory_format=lib.contiguous_format),
    "COO to memory_format": lambda lib: _coo(lib).to(lib.float64, memory_format=lib.contiguous_format),
    "CSR zeros_like, strided": lambda lib: lib.zeros_like(_csr(lib), layout=lib.strided),
    "COO zeros_like, BSR": lambda lib: lib.zeros_like(_coo(lib), layout=lib.sparse_bsr),
    "relu in place of a leaf": lambda lib: lib.nn.functional.relu(_coo(lib).requires_grad_(), inplace=True),
}


ALL_REFUSED = {**REFUSED, **PRODUCT_REFUSED, **NARROW_REFUSED, **ARGUMENT_REFUSED}


@pytest.mark.parametrize("case", ALL_REFUSED)
def test_refusals_raise_torch_s_exception_types(case):
    mine, theirs = _outcome(ember, ALL_REFUSED[case]), _outcome(torch, ALL_REFUSED[case])
    assert isinstance(theirs, str), f"torch computes {case}"
    assert mine == theirs
