"""Compressed sparse tensors (CSR, CSC, BSR, BSC) against torch: construction, repr, conversion, arithmetic,
refusals, and saving.

Each case is one expression, evaluated with ``torch`` and with ``ember`` bound to the same name; the reprs
(torch's prefix renamed) or the error types must agree.
"""
import io
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember

CROW, COL, VAL = "torch.tensor([0, 2, 3])", "torch.tensor([0, 2, 1])", "torch.tensor([1., 2., 3.])"
S = f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL})"
D = "torch.tensor([[1., 0., 2.], [0., 3., 0.]])"
E4 = "torch.tensor([[1., 2., 0., 0.], [0., 3., 0., 0.], [0., 0., 0., 0.], [4., 0., 5., 6.]])"
BATCH = "torch.tensor([[[1., 0.], [0., 2.]], [[0., 3.], [4., 0.]]])"
K = "check_invariants=True"
S_INT32 = f"torch.sparse_csr_tensor({CROW}.int(), {COL}.int(), {VAL})"


def _outcome(lib, source: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes on beta support and skipped checks
        try:
            return repr(eval(source, {"torch": lib})).replace("torch.", "ember.")
        except Exception as error:
            return type(error).__name__


SAME_AS_TORCH = [
    S, f"{S}.to_dense()", f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, (2, 4), dtype=torch.float64)",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, requires_grad=True)",
    f"torch.sparse_csr_tensor({CROW}.int(), {COL}.int(), {VAL})", f"{S_INT32}.to_sparse_csc()",
    f"{S_INT32}.to_sparse_bsr(1)", f"{S_INT32}.sum(1, keepdim=True)", f"{S_INT32} + {S_INT32}.t().t()",
    f"{S_INT32}.to_sparse()", f"torch.sparse_csc_tensor({CROW}, {COL}, {VAL})",
    f"torch.sparse_bsr_tensor({CROW}, {COL}, torch.arange(18.).view(3, 2, 3))",
    f"torch.sparse_bsc_tensor({CROW}, {COL}, torch.ones(3, 2, 1), (6, 2))",
    f"torch.sparse_compressed_tensor({CROW}, {COL}, {VAL}, layout=torch.sparse_csc)",
    f"torch.sparse_csr_tensor({CROW}, {COL}, torch.ones(3, 2))",
    "torch.sparse_csr_tensor(torch.tensor([[0, 2, 3], [0, 1, 3]]), torch.tensor([[0, 2, 1], [1, 0, 1]]), "
    "torch.ones(2, 3))",
    "torch.sparse_csr_tensor([0, 1], [0], [5])",
    f"{D}.to_sparse_csr()", f"{D}.to_sparse_csc()", f"{E4}.to_sparse_bsr((2, 2))", f"{E4}.to_sparse_bsc(2)",
    f"{E4}.to_sparse_bsr((1, 2))", f"{E4}.to_sparse(layout=torch.sparse_csr)",
    f"{E4}.to_sparse(layout=torch.sparse_bsc, blocksize=(2, 1))", "torch.zeros(2, 3).to_sparse_csr()",
    f"{BATCH}.to_sparse_csr()", f"{BATCH}.to_sparse_csc()", "torch.ones(3, 3, 2).to_sparse_csr(1)",
    "torch.ones(2, 2, 1).to_sparse(layout=torch.sparse_csc, dense_dim=1)",
    f"{S}.to_sparse()", f"{S}.to_sparse_coo()", f"{S}.to_sparse_csc()", f"{S}.to_sparse_csc().to_sparse()",
    f"{S}.to_sparse_bsr((2, 1))", f"{S}.to_sparse_bsc(1)", f"{E4}.to_sparse_bsr(2).to_sparse()",
    f"{D}.to_sparse().to_sparse_csr()", f"{D}.to_sparse().to_sparse_csc()", f"{D}.to_sparse().to_sparse_bsr(1)",
    f"{BATCH}.to_sparse_csr().to_dense()", f"{BATCH}.to_sparse_csc().to_sparse()",
    f"{S}.crow_indices(), {S}.col_indices(), {S}.values()", f"{S}.to_sparse_csc().ccol_indices()",
    f"{S}.to_sparse_csc().row_indices()", f"{E4}.to_sparse_bsr(2).crow_indices()",
    f"{S}.shape, {S}.dtype, {S}.layout, {S}.is_sparse, {S}.is_sparse_csr, {S}._nnz(), {S}.dim(), {S}.numel()",
    f"{S}.to_sparse_csc().is_sparse_csr, {S}.sparse_dim(), {S}.dense_dim(), len({S})",
    "torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc",
    f"{S}.t()", f"{S}.transpose(0, 1)", f"{S}.t().t()", f"{E4}.to_sparse_bsr((1, 2)).t()",
    f"{S}.to_sparse_csc().t()", f"{S} * 2", f"2 * {S}", f"{S} + {S}", f"-{S}", f"{S}.sin()", f"{S}.sqrt()",
    f"{S} * {S}", f"{S} * torch.tensor([[0., 1., 1.], [1., 0., 0.]]).to_sparse_csr()",
f"{S} * torch.arange(6.).view(2, 3)", f"{S} + torch.ones(2, 3)", f"torch.ones(2, 3) + {S}",
    f"{S}.sum()", f"{S}.sum(1, keepdim=True)", f"{S}.sum(-2, keepdim=True)",
    "torch.tensor([[1., -1., 0.], [0., 0., 0.], [0., 2., 0.]]).to_sparse_csr().sum(1, keepdim=True)",
    f"{S}.clone()", f"{S}.detach()", f"{S}.to(torch.float64)",
    f"{S}.double()", f"{S}.half()", f"{S}.int()", f"torch.zeros_like({S})",
    f"torch.mm({S}, torch.ones(3, 2))", f"{S} @ torch.arange(6.).view(3, 2)", f"{S} @ torch.ones(3)",
    f"torch.mv({S}, torch.ones(3))", f"torch.matmul({S}, torch.ones(3, 1))", f"torch.ones(1, 2) @ {S}",
    f"torch.mm(torch.ones(1, 2), {S})", f"{S}.to_sparse_csc() @ torch.ones(3, 1)",
    f"{E4}.to_sparse_bsr(2) @ torch.arange(8.).view(4, 2)",
    f"torch.addmm(torch.ones(2, 1), {S}, torch.ones(3, 1), beta=0.5, alpha=2)",
    f"torch.sparse.mm({S}, torch.ones(3, 1))", f"torch.sparse.addmm(torch.ones(2, 1), {S}, torch.ones(3, 1))",
    f"{S} @ {S}.t().to_sparse_csr()", f"torch.crow_indices_copy({S}), torch.col_indices_copy({S})",
    f"torch.ccol_indices_copy({S}.to_sparse_csc()), torch.row_indices_copy({S}.to_sparse_csc())",
    f"torch.values_copy({S})",
    # refused, as by torch
    f"torch.sparse_csr_tensor({CROW}.float(), {COL}, {VAL}, {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}.int(), {VAL}, {K})",
    f"torch.sparse_csr_tensor({CROW}.short(), {COL}.short(), {VAL}, {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}[:2], {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, (3, 3), {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, (2,), {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, (2, 2), {K})",
    f"torch.sparse_csr_tensor({CROW}, torch.tensor([0, -1, 1]), {VAL}, (2, 3), {K})",
    f"torch.sparse_csr_tensor(torch.tensor([1, 2, 3]), {COL}, {VAL}, {K})",
    f"torch.sparse_csr_tensor(torch.tensor([0, 2, 2]), {COL}, {VAL}, {K})",
    f"torch.sparse_csr_tensor(torch.tensor([0, 3, 2, 3]), {COL}, {VAL}, (3, 3), {K})",
    f"torch.sparse_csr_tensor({CROW}, torch.tensor([1, 0, 1]), {VAL}, {K})",
    f"torch.sparse_csr_tensor(torch.tensor(0), torch.tensor(0), torch.ones(1), {K})",
    f"torch.sparse_csr_tensor(torch.tensor([[0, 1]]), torch.tensor([0]), torch.ones(1), {K})",
    f"torch.sparse_bsr_tensor({CROW}, {COL}, torch.ones(3, 2, 3), (4, 5), {K})",
    f"torch.sparse_bsr_tensor(torch.tensor([0, 1]), torch.tensor([0]), torch.ones(1), {K})",
    f"torch.sparse_compressed_tensor({CROW}, {COL}, {VAL})",
    f"torch.sparse_compressed_tensor({CROW}, {COL}, {VAL}, layout=torch.strided)",
    f"torch.sparse_compressed_tensor({CROW}, {COL}, {VAL}, (2, 3), layout=torch.sparse_csc, {K})",
    f"{E4}.to_sparse_bsr((3, 3))", f"{E4}.to_sparse_bsr(0)", f"{E4}.to_sparse_bsr((2, 2, 2))",
    f"{E4}.to_sparse(layout=torch.sparse_bsr)", "torch.ones(3, 3).to_sparse_csr(1)",
    "torch.arange(8.).reshape(2, 2, 2).to_sparse_csr()", f"{S}.to_sparse_csr(1)",
    f"{E4}.to_sparse_bsr(2).to_sparse_csr()", f"{S}.ccol_indices()", f"{S}.row_indices()", f"{S}.indices()",
    f"{S}.coalesce()", f"{S}.is_coalesced()", f"{S}.numpy()", f"{S}.tolist()", f"{S}.item()", f"{S}.reshape(6)",
    f"torch.cat([{S}, {S}])", f"{S}.view(6)", "torch.ones(2).crow_indices()", f"{D}.to_sparse().crow_indices()",
    f"torch.sparse.sum({S})", f"{S}.sum(0)", f"{S}.stride()", f"{S}.is_contiguous()", f"{S}.cumsum(0)",
    f"torch.mm({S}, torch.ones(3, 2, dtype=torch.float64))", f"torch.mm({S}, torch.ones(2, 2))",
    f"{S} + {S}.to_sparse_csc()", f"{BATCH}.to_sparse_csr() @ torch.ones(2, 2, 1)",
    f"torch.ones(3, 3, 2).to_sparse_csr(1) @ torch.ones(3, 1)",
    "torch.eye(2, dtype=torch.int64).to_sparse_csr().requires_grad_()", f"torch.row_indices_copy({S})",
    f"torch.values_copy({D})", f"torch.values_copy({D}.to_sparse())", f"torch.indices_copy({D})",
    f"torch.sparse.sampled_addmm({S}, torch.arange(4.).view(2, 2), torch.arange(6.).view(2, 3), beta=0.5, alpha=2)",
    f"torch.sparse.sampled_addmm({S}.to_sparse_csc(), torch.ones(2, 2), torch.ones(2, 3))",
    "torch.sparse.spdiags(torch.tensor([[1., 2., 3.], [4., 5., 6.]]), torch.tensor([0, -1]), (3, 3), "
    "layout=torch.sparse_csr)",
    "torch.sparse.spdiags(torch.tensor([[1., 2., 3.], [4., 5., 6.]]), torch.tensor([0, 1]), (3, 3), "
    "layout=torch.sparse_csc)",
    "torch.sparse.spdiags(torch.ones(1, 3), torch.tensor([0]), (3, 3), layout=torch.sparse_bsr)",
    "torch.zeros(2, 3, layout=torch.sparse_csc)", "torch.zeros(2, 2, 3, layout=torch.sparse_csr)",
    "torch.zeros(2, 3, layout=torch.sparse_bsr)", f"{S}[0]", f"{S}[:, 1]", f"{S}.select(1, 0)",
    f"{S}.new_zeros((2, 2))",
    f"{S}.mul_(2)", f"{S}.zero_()", f"{S}.neg_()", f"{S}.add_({S})", f"{S}.copy_({S} * 3)", f"{S}.sin_()",
    f"{S}.fill_(1)", f"{S}.requires_grad_().mul_(2)", f"torch.nn.functional.linear({S}, torch.ones(4, 3))",
    f"torch.nn.functional.linear({S}, torch.ones(4, 3), torch.arange(4.))",
    f"torch.addmv(torch.ones(2), {S}, torch.ones(3))", f"{S}.to_sparse_csc() @ {S}.t().to_sparse_csc()",
    f"[torch.sparse.mm({S}, torch.arange(6.).view(3, 2) - 2, r) for r in ('sum', 'mean', 'amax', 'amin')]",
    f"torch.sparse.mm({S}, torch.ones(3, 2), 'prod')",
    f"torch.sparse.mm({S}.to_sparse_csc(), torch.ones(3, 2), 'mean')",
    # the in-place resizes of a COO tensor
    f"{D}.to_sparse().sparse_resize_((3, 4), 2, 0)", f"{D}.to_sparse().sparse_resize_and_clear_((3, 4, 5), 2, 1)",
    f"{D}.to_sparse().resize_as_sparse_(torch.zeros(5, 5).to_sparse())",
    f"torch.resize_as_sparse_(torch.zeros(2, 3).to_sparse(), torch.zeros(4, 4, 2).to_sparse(1))",
    f"{D}.to_sparse().sparse_resize_((1, 1), 2, 0)", f"{D}.to_sparse().sparse_resize_((3, 4, 5), 2, 1)",
    f"torch.resize_as_sparse_({D}.to_sparse(), torch.zeros(5, 5, 2).to_sparse(1))",
    f"{D}.to_sparse().requires_grad_().sparse_resize_((3, 4), 2, 0)", f"{S}.sparse_resize_((3, 4), 2, 0)",
    f"{D}.sparse_resize_((3, 4), 2, 0)",
]


@pytest.mark.parametrize("source", SAME_AS_TORCH)
def test_same_as_torch(source):
    assert _outcome(ember, source) == _outcome(torch, source)


INVARIANT_MESSAGES = [
    f"torch.sparse_csr_tensor({CROW}, {COL}.int(), {VAL}, {K})",
    f"torch.sparse_csr_tensor({CROW}.short(), {COL}.short(), {VAL}, {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}[:2], {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, (3, 3), {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, (2, 2), {K})",
    f"torch.sparse_csr_tensor(torch.tensor([1, 2, 3]), {COL}, {VAL}, {K})",
    f"torch.sparse_csc_tensor(torch.tensor([0, 2, 1]), torch.tensor([0, 1]), torch.ones(2), (2, 2), {K})",
    f"torch.sparse_csr_tensor(torch.tensor([0, 3, 2, 3]), {COL}, {VAL}, (3, 3), {K})",
    f"torch.sparse_csr_tensor({CROW}, torch.tensor([1, 0, 1]), {VAL}, {K})",
    f"torch.sparse_bsr_tensor({CROW}, {COL}, torch.ones(3, 2, 3), (4, 5), {K})",
    f"torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([[0]]), torch.ones(1), {K})",
    f"torch.sparse_csr_tensor({CROW}, {COL}, {VAL}, (2,), {K})",
    f"{E4}.to_sparse_bsr((3, 3))", f"{S}.ccol_indices()", f"{S}.indices()",
]


def _message(lib, source: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError) as caught:
            eval(source, {"torch": lib})
    return str(caught.value).replace("bot got", "but got").replace("torch.", "ember.").split(";")[0]


@pytest.mark.parametrize("source", INVARIANT_MESSAGES)
def test_messages_as_torch(source):
    """The substance of torch's message: ember's starts with it (and may add how to fix it)."""
    assert _message(ember, source) == _message(torch, source)


def _node_names(lib) -> list:
    x = lib.tensor([[1., 0.], [2., 3.]], requires_grad=True)
    s = x.to_sparse_csr()
    made = (x.to_sparse_csr(), x.to_sparse_csc(), x.to_sparse_bsr(1), x.to_sparse_bsc(1), x.to_sparse().to_sparse_csr(),
            s.to_sparse(), s.to_sparse_csc(), s * 2, s * s, -s, s + s, s.clone(), s.double(), s.t(), s.values(),
            s.to_dense(), s.sum(), s.sum(1, keepdim=True), s @ lib.ones(2, 1),
            lib.sparse.sampled_addmm(s, lib.ones(2, 2), lib.ones(2, 2)))
    return [t.grad_fn.name() for t in made]


def test_grad_fn_names_as_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _node_names(ember) == _node_names(torch)


def _random_matrix(data, rows: int, cols: int) -> np.ndarray:
    return np.asarray(data.draw(st.lists(st.sampled_from([0., 0., 0., 1.5, -2., 3.]), min_size=rows * cols,
                                         max_size=rows * cols))).reshape(rows, cols)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_random_matrices_agree_with_torch(data):
    rows, cols, k = (data.draw(st.integers(1, 5)) for _ in range(3))
    dense = _random_matrix(data, rows, cols)
    layout = data.draw(st.sampled_from(["csr", "csc"]))
    other = np.arange(cols * k, dtype=np.float64).reshape(cols, k) / 7
    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = getattr(lib.tensor(dense, dtype=lib.float64), f"to_sparse_{layout}")()
            results.append([repr(s).replace("torch.", "ember."), (s @ lib.tensor(other)).numpy(),
                            s.to_sparse().to_dense().numpy(), repr((s + s).to_sparse_csr()).replace("torch.",
                                                                                                    "ember.")])
    assert results[0][0] == results[1][0] and results[0][3] == results[1][3]
    np.testing.assert_allclose(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][2], results[1][2])


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_random_blocks_agree_with_torch(data):
    br, bc = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    rows, cols = br * data.draw(st.integers(1, 3)), bc * data.draw(st.integers(1, 3))
    dense = _random_matrix(data, rows, cols)
    layout = data.draw(st.sampled_from(["bsr", "bsc"]))
    reprs = []
    for lib in (torch, ember):
        s = getattr(lib.tensor(dense), f"to_sparse_{layout}")((br, bc))
        reprs.append((repr(s).replace("torch.", "ember."), repr(s.to_dense()).replace("torch.", "ember.")))
    assert reprs[0] == reprs[1]


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_batch_and_dense_dimensions_agree_with_torch(data):
    """Every batch shares one pattern (torch needs as many entries in each), values differ; a trailing dense
    dimension is stored whole where any of its elements is nonzero."""
    batch = tuple(data.draw(st.lists(st.integers(1, 2), max_size=2)))
    rows, cols, dense = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)), data.draw(st.integers(0, 1))
    pattern = _random_matrix(data, rows, cols) != 0
    values = np.arange(1., 1 + np.prod(batch + (rows, cols, 2)[: 3 if dense else 2])).reshape(
        batch + (rows, cols) + ((2,) if dense else ()))
    array = values * (pattern[..., None] if dense else pattern)
    layout = data.draw(st.sampled_from(["csr", "csc"]))
    reprs = []
    for lib in (torch, ember):
        s = getattr(lib.tensor(array), f"to_sparse_{layout}")(dense)
        reprs.append([repr(t).replace("torch.", "ember.") for t in (s, s.to_dense(), s.to_sparse(), s * 2)])
    assert reprs[0] == reprs[1]


def _values_gradients(lib, crow, col, values, dense, layout):
    v = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    d = lib.tensor(dense, dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = getattr(lib, f"{layout}_tensor")(lib.tensor(crow), lib.tensor(col), v, (3, 3))
    out = lib.mm(s, d) if s.shape[1] == d.shape[0] else lib.mm(s.t(), d)
    grads = lib.autograd.grad((out * out).sum(), (v, d))
    return [g.detach().numpy() for g in grads]


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc"])
def test_product_gradients_as_torch(layout):
    crow, col, values, dense = [0, 2, 3, 4], [0, 2, 1, 0], [1., -2., 3., 0.5], np.arange(6.).reshape(3, 2) / 5
    for mine, theirs in zip(_values_gradients(ember, crow, col, values, dense, layout),
                            _values_gradients(torch, crow, col, values, dense, layout)):
        np.testing.assert_allclose(mine, theirs)


CROW_E, COL_E = ember.tensor([0, 2, 3, 4]), ember.tensor([0, 2, 1, 0])


def _csr(v):
    return ember.sparse_csr_tensor(CROW_E, COL_E, v, (3, 3))


CHECKED = [
    lambda v, d: ember.mm(_csr(v), d),
    lambda v, d: _csr(v) @ d[:, 0],
    lambda v, d: ember.addmm(d, _csr(v), d, beta=0.5, alpha=2),
    lambda v, d: d.t() @ _csr(v),
    lambda v, d: _csr(v).to_sparse_csc() @ d,
    lambda v, d: (_csr(v) * d).to_dense() + (_csr(v) + _csr(v)).to_dense(),
    lambda v, d: (_csr(v) * ember.eye(3, dtype=ember.float64).to_sparse_csr()).to_dense() * d,
    lambda v, d: _csr(v).to_sparse_bsc((1, 3)).to_dense() * d.sum(),
    lambda v, d: (_csr(v).t().to_sparse().to_sparse_csr().values() ** 2).sum() * d,
    lambda v, d: _csr(v).to_dense().to_sparse_bsr((3, 1)).values().sum() + _csr(v).sin().sum() * d,
    lambda v, d: ember.mm(d.to_sparse_csr(), _csr(v).to_dense()),
    lambda v, d: ember.sparse.sampled_addmm(_csr(v), d, d.t(), beta=0.5, alpha=2).to_dense(),
    lambda v, d: _csr(v).sum(0, keepdim=True).to_dense() * d + _csr(v).sum() * d,
]


@pytest.mark.parametrize("index", range(len(CHECKED)))
def test_gradcheck_and_gradgradcheck(index):
    v = ember.tensor([1., -2., 3., 0.5], dtype=ember.float64, requires_grad=True)
    d = (ember.arange(9., dtype=ember.float64).view(3, 3) / 4 - 1.1).requires_grad_()  # no zero: a fixed pattern
    assert ember.autograd.gradcheck(CHECKED[index], (v, d))
    assert ember.autograd.gradgradcheck(CHECKED[index], (v, d))


def _leaf_gradient(lib, op: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leaf = lib.tensor([[1., 0., 2.], [0., 3., 0.]], dtype=lib.float64).to_sparse_csr().requires_grad_()
        d = lib.arange(6., dtype=lib.float64).view(3, 2)
        out = {"to_dense": lambda: leaf.to_dense() * 2, "values": lambda: leaf.values() * 3,
               "mul": lambda: (leaf * 2).to_dense(), "sparse.mm": lambda: lib.sparse.mm(leaf, d),
               "mm": lambda: lib.mm(leaf, d), "addmm": lambda: lib.addmm(d[:2], leaf, d, beta=2, alpha=3),
               "matmul": lambda: leaf @ d[:, 0], "linear": lambda: lib.nn.functional.linear(leaf, d.t()),
               "sparse.addmm": lambda: lib.sparse.addmm(d[:2], leaf, d)}[op]()
        (out * out).sum().backward()
        return repr(leaf.grad).replace("torch.", "ember.")


@pytest.mark.parametrize("op", ["to_dense", "values", "mul", "sparse.mm", "sparse.addmm", "mm", "addmm", "matmul",
                                "linear"])
def test_a_compressed_leaf_gets_its_gradient_in_torch_s_layout(op):
    """On its pattern from ``to_dense``, ``values``, ``sparse.mm``; dense from ``mm``, ``@``, ``addmm``."""
    assert _leaf_gradient(ember, op) == _leaf_gradient(torch, op)


@pytest.mark.parametrize("convert", ["to_sparse_csr()", "to_sparse_csc()", "to_sparse_bsr((1, 2))",
                                     "to_sparse_bsc(2)"])
def test_saving_round_trips_and_torch_reads_it(convert):
    s = eval(f"t.{convert}", {"t": ember.tensor([[1., 0., 2., 0.], [0., 3., 0., 4.]])})
    buffer = io.BytesIO()
    ember.save({"s": s}, buffer)
    buffer.seek(0)
    assert repr(ember.load(buffer)["s"]) == repr(s)
    buffer.seek(0)
    theirs = torch.load(buffer)["s"]
    assert repr(theirs).replace("torch.", "ember.") == repr(s)
    again = io.BytesIO()
    torch.save(theirs, again)
    again.seek(0)
    assert repr(ember.load(again)) == repr(s)


def test_a_file_with_broken_indices_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bad = torch.sparse_csr_tensor(torch.tensor([0, 2, 1]), torch.tensor([0, 1, 0]), torch.ones(3), (2, 2))
    buffer = io.BytesIO()
    torch.save(bad, buffer)
    buffer.seek(0)
    with pytest.raises(ember.serialization.UnpicklingError, match="crow_indices"):
        ember.load(buffer)


def test_scipy_and_numpy_products_agree(monkeypatch):
    from ember._ops import sparse_product

    s = ember.tensor([[1., 0., 2.], [0., 3., 0.]], dtype=ember.float64).to_sparse_csr()
    d = ember.arange(6., dtype=ember.float64).view(3, 2)
    with_scipy = (s @ d).numpy()
    monkeypatch.setattr(sparse_product, "_scipy_sparse", None)
    np.testing.assert_array_equal((s @ d).numpy(), with_scipy)


class Handled:
    """A tensor-like that answers every call with the name of the function called."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func.__name__


@pytest.mark.parametrize("name", ["sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor",
                                  "sparse_compressed_tensor"])
def test_constructors_dispatch_through_torch_function(name):
    assert getattr(ember, name)(Handled(), [0], [1.]) == name


@pytest.mark.parametrize("name", ["crow_indices_copy", "col_indices_copy", "ccol_indices_copy", "row_indices_copy",
                                  "values_copy", "indices_copy"])
def test_copies_dispatch_through_torch_function(name):
    assert getattr(ember, name)(Handled()) == name


def test_methods_dispatch_through_torch_function():
    assert ember.Tensor.to_sparse_csr(Handled()) == "to_sparse_csr"
    assert ember.resize_as_sparse_(Handled(), ember.ones(1)) == "resize_as_sparse_"


@pytest.mark.parametrize("convert", ["to_sparse_csr()", "to_sparse_csc()", "to_sparse_bsr((1, 2))"])
def test_gradcheck_takes_a_compressed_input_through_its_values(convert):
    leaf = eval(f"t.{convert}", {"t": ember.tensor([[1., 0., 0., 0.], [0., 3., 0., 4.]], dtype=ember.float64)})
    leaf.requires_grad_()
    d = ember.arange(8., dtype=ember.float64).view(4, 2).requires_grad_()
    assert ember.autograd.gradcheck(lambda s, d: ember.sparse.mm(s, d), (leaf, d), masked=True)
    assert ember.autograd.gradgradcheck(lambda s: (s * 3).to_dense(), (leaf,), masked=True)
    # every element perturbed: a gradient kept on the pattern does not pass, as for COO tensors
    assert not ember.autograd.gradcheck(lambda s: s.to_dense(), (leaf,), raise_exception=False)


def _second_order_of_a_leaf(lib):
    leaf = lib.tensor([[1., 0., 2.], [0., 3., 0.]], dtype=lib.float64).to_sparse_csr().requires_grad_()
    d = lib.arange(6., dtype=lib.float64).view(3, 2).requires_grad_()
    (leaf_grad,) = lib.autograd.grad((lib.mm(leaf, d) ** 2).sum(), leaf, create_graph=True)
    return [g.detach().numpy() for g in (leaf_grad, *lib.autograd.grad((leaf_grad ** 2).sum(), d))]


def _reduced_gradients(lib, reduce: str) -> list:
    s = lib.tensor([[1., 0., 2.], [0., 0., 0.], [0., -3., 0.]]).to_sparse_csr()
    v = lib.tensor([1., 2., -3.], requires_grad=True)
    d = (lib.arange(6.).view(3, 2) - 2).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = lib.sparse.mm(lib.sparse_csr_tensor(s.crow_indices(), s.col_indices(), v, (3, 3)), d, reduce)
    (out * lib.arange(6.).view(3, 2)).sum().backward()
    return [t.detach().numpy() for t in (out, v.grad, d.grad)]


@pytest.mark.parametrize("reduce", ["mean", "amax", "amin"])
def test_sparse_mm_reduce_and_its_gradients_as_torch(reduce):
    """A tie at zero included: the one product that gives a row's maximum takes all its gradient."""
    for mine, theirs in zip(_reduced_gradients(ember, reduce), _reduced_gradients(torch, reduce)):
        np.testing.assert_allclose(mine, theirs)


def test_the_dense_gradient_of_a_leaf_has_gradients_as_torch_s():
    for mine, theirs in zip(_second_order_of_a_leaf(ember), _second_order_of_a_leaf(torch)):
        np.testing.assert_allclose(mine, theirs)


DOCUMENTED = [ember.sparse_csr_tensor, ember.sparse_csc_tensor, ember.sparse_bsr_tensor, ember.sparse_bsc_tensor,
              ember.sparse_compressed_tensor, ember.crow_indices_copy, ember.col_indices_copy, ember.ccol_indices_copy,
              ember.row_indices_copy, ember.values_copy, ember.indices_copy, ember.resize_as_sparse_]


@pytest.mark.parametrize("function", DOCUMENTED, ids=lambda f: f.__name__)
def test_docstring_examples(function):
    """The public functions live under ``ember`` (``__module__``), where pytest's module doctests do not look."""
    import doctest

    flags = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL | doctest.NORMALIZE_WHITESPACE
    finder, runner = doctest.DocTestFinder(recurse=False), doctest.DocTestRunner(optionflags=flags)
    tests = finder.find(function, function.__name__, globs={"ember": ember})
    assert tests and tests[0].examples, f"{function.__name__} has no example"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{function.__name__}: {runner.failures} example(s) failed (output above)"


def _assert_close_outcome(lib, pair: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = eval(pair, {"torch": lib})
        try:
            lib.testing.assert_close(a, b)
        except AssertionError as error:
            return str(error).replace("torch.", "ember.")
    return "close"


CLOSE_PAIRS = [
    f"{D}.to_sparse_csr(), {D}.to_sparse_csr().clone()",
    f"{D}.to_sparse_csr(), torch.tensor([[1., 0., 2.], [0., 3.5, 0.]]).to_sparse_csr()",
    f"{D}.to_sparse_csr(), torch.tensor([[1., 2., 0.], [0., 3., 0.]]).to_sparse_csr()",
    f"{D}.to_sparse_csr(), torch.tensor([[1., 0., 2.], [3., 0., 0.]]).to_sparse_csr()",
    f"{D}.to_sparse_csr(), torch.tensor([[1., 1., 2.], [0., 3., 0.]]).to_sparse_csr()",
    f"{D}.to_sparse_csr(), {D}.to_sparse_csc()", f"{D}.to_sparse(), torch.tensor([[1., 0., 2.], [0., 4., 0.]]).to_sparse()",
    f"{D}.to_sparse(), torch.tensor([[1., 2., 0.], [0., 3., 0.]]).to_sparse()",
    f"{D}.to_sparse_bsc(1), torch.tensor([[1., 0., 2.], [0., 3., 1.]]).to_sparse_bsc(1)",
]


@pytest.mark.parametrize("pair", CLOSE_PAIRS)
def test_assert_close_compares_the_stored_parts_as_torch(pair):
    """Indices exactly, values within the tolerances, with torch's messages (a COO pair too)."""
    assert _assert_close_outcome(ember, pair) == _assert_close_outcome(torch, pair)


def test_assert_close_without_checking_the_layout_compares_the_dense_forms():
    s = ember.tensor([[1., 0.], [0., 2.]]).to_sparse_csr()
    ember.testing.assert_close(s, s.to_dense().to_sparse_csc(), check_layout=False)


@pytest.mark.parametrize("name, layout", [("crow_indices_copy", "csr"), ("col_indices_copy", "csr"),
                                          ("ccol_indices_copy", "csc"), ("row_indices_copy", "csc"),
                                          ("values_copy", "csr")])
def test_copies_write_into_out_as_torch(name, layout):
    dense = [[0.0, 2.0], [3.0, 0.0]]
    mine = getattr(ember.tensor(dense), f"to_sparse_{layout}")()
    theirs = getattr(torch.tensor(dense), f"to_sparse_{layout}")()
    expected = getattr(torch, name)(theirs)
    out = ember.empty(0, dtype=getattr(ember, str(expected.dtype).split(".")[-1]))
    assert getattr(ember, name)(mine, out=out) is out
    assert out.tolist() == expected.tolist()
