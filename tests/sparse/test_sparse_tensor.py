"""Sparse COO tensors against torch: construction, repr, conversion, arithmetic and refusals.

Each case is one expression, evaluated with ``torch`` and with ``ember`` bound to the
same name; the reprs (torch's prefix renamed) or the errors must agree.
"""
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember

I = "torch.tensor([[0, 1, 1], [2, 0, 2]])"
V = "torch.tensor([3., 4., 5.])"
S = f"torch.sparse_coo_tensor({I}, {V}, (2, 3))"
HYBRID = "torch.tensor([[[0., 1.], [0., 0.]], [[2., 0.], [0., 3.]]]).to_sparse(2)"


def _outcome(lib, source: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note that it skips invariant checks
        try:
            return repr(eval(source, {"torch": lib})).replace("torch.", "ember.")
        except Exception as error:  # the error type must agree; the message is ember's own
            return type(error).__name__


SAME_AS_TORCH = [
    S, f"{S}.coalesce()", "torch.zeros(2, 3).to_sparse()", "torch.eye(3, dtype=torch.float64).to_sparse(1)",
    f"{S}.double().requires_grad_()", f"torch.sparse_coo_tensor({I}, {V}, (2, 3), requires_grad=True) * 2",
    f"torch.sparse_coo_tensor({I}, {V}.requires_grad_(), (2, 3))",
    f"{S} + {S}", f"-{S}", f"{S}.t()", f"{S}.transpose(0, 1)", f"{S}.sum()", f"torch.sparse.sum({S}, 0)",
    f"torch.sparse.sum({S}, 1)", f"torch.sparse.sum({S})", f"torch.mm({S}, torch.ones(3, 2))",
    f"{S} @ torch.ones(3)", f"torch.ones(4, 2) @ {S}", f"torch.smm({S}, torch.ones(3, 2))",
    f"torch.hspmm({S}, torch.ones(3, 2))", f"torch.sparse.softmax({S}, 1)", f"torch.sparse.log_softmax({S}, 0)",
    f"torch.sparse.addmm(torch.ones(2, 2), {S}, torch.ones(3, 2), beta=2, alpha=3)",
    f"torch.ones(2, 3).sparse_mask({S})", f"{S} * torch.arange(6.).view(2, 3)",
    f"torch.arange(6.).view(2, 3) + {S}", f"{S}.to_dense()", "torch.sparse_coo_tensor([[0, 1]], [1, 2])",
    "torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.long), torch.zeros(0), (3,))",
    f"{S}.coalesce().values()", f"{S}.coalesce().indices()",
    f"{S}.sparse_dim(), {S}.dense_dim(), {S}._nnz(), {S}.is_coalesced(), {S}.coalesce().is_coalesced()",
    "torch.ones(2, 3).to_dense()", f"{S}.to_sparse()", f"{S} * 2.5 + {S}", f"{S} - {S} * 2",
    f"{S} + {S}.double()", f"{S}.to(torch.float64)", f"{S}.clone()", f"torch.sparse_coo_tensor({I}, {V}, (2, 3), requires_grad=True).clone()", f"{S}.detach()", f"{S} / 2", HYBRID, f"{HYBRID}.to_dense()",
    f"torch.sparse.sum({HYBRID}, 2)", f"torch.sparse.sum({HYBRID}, (0, 1))",
    f"{S}.shape, {S}.dtype, {S}.layout, {S}.is_sparse, {S}.numel(), {S}.dim(), {S}.size(1)",
    "torch.tensor([[1, 0], [0, 2]]).to_sparse()", "torch.tensor([[True, False]]).to_sparse()",
    "torch.ones(2, 3).layout, torch.ones(2, 3).is_sparse, torch.ones(2, 3).dense_dim()",
    "torch.ones(2, 3).to_sparse_coo().layout", "torch.sparse_coo, torch.strided",
    "torch.randn(30, 30).to_sparse()._nnz()",
    # refused, as by torch
    "torch.sparse_coo_tensor(torch.tensor([[5]]), torch.tensor([1.]), (2,), check_invariants=True)",
    "torch.sparse_coo_tensor(torch.tensor([[1]]), torch.tensor([1., 2]), (2,))",
    f"torch.sparse.mm({S}, torch.ones(3, 2, dtype=torch.float64))", f"{S}.values()", f"{S}.indices()",
    "torch.ones(2, 3).indices()", "torch.ones(2, 3).coalesce()", f"{S}.cumsum(0)", f"{S} + torch.ones(2, 3)",
    f"{S}.exp()", f"{S}.view(6)", f"{S}.mean()", f"torch.sparse.mm({S}, torch.ones(4, 2))",
]


S5 = "torch.sparse_coo_tensor([[0, 1, 1, 2, 0], [2, 0, 2, 1, 2]], torch.tensor([1., 2., 3., 4., 5.]), (3, 3))"
SAME_AS_TORCH += [
    f"{S5}.index_select(0, torch.tensor([2, 0, 0]))", f"{S5}.index_select(1, torch.tensor([2, 1]))",
    f"{S5}[1]", f"{S5}.select(1, 2)", f"{S5}[-1]", f"{S5}[:, 1]", f"{S5}[0:2]", f"{S5}[5]",
    "torch.sparse_coo_tensor([[0, 1]], torch.tensor([1., 2.]))[1]", "torch.eye(3).to_sparse(1)[1]",
    "torch.eye(3).to_sparse(1).index_select(1, torch.tensor([0, 0]))",
    f"torch.index_select({S5}, 0, torch.tensor([], dtype=torch.long))",
]
GAPPED = "torch.tensor([[0., 2.], [0., 0.], [3., 0.]]).to_sparse()"  # a row with no entries
SAME_AS_TORCH += [
    f"torch.smm({GAPPED}, torch.tensor([[1., 0.], [0., 1.]]))",
    f"torch.sspaddmm(torch.eye(3, 2).to_sparse(), {GAPPED}, torch.ones(2, 2), beta=2, alpha=3)",
    f"torch.eye(3, 2).to_sparse().sspaddmm({GAPPED}, torch.ones(2, 2))",
    f"torch.saddmm(torch.eye(3, 2).to_sparse(), {GAPPED}, torch.ones(2, 2))",
    f"torch.dsmm({GAPPED}, torch.ones(2, 2))", f"torch.hsmm({GAPPED}, torch.ones(2, 2))",
    f"torch.spmm({GAPPED}, torch.ones(2, 2))", "torch.dsmm(torch.ones(2, 2), torch.ones(2, 2))",
    "torch.sparse.spdiags(torch.tensor([[1., 2., 3.], [4., 5., 6.]]), torch.tensor([0, -1]), (3, 3))",
    "torch.sparse.spdiags(torch.tensor([[1., 2., 3.], [4., 5., 6.]]), torch.tensor([0, 1]), (2, 3))",
    "torch.sparse.spdiags(torch.tensor([[1., 2., 3., 4.]]), torch.tensor([2]), (4, 4))",
    "torch.sparse.check_sparse_tensor_invariants.is_enabled()",
]
NEG = "torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], torch.tensor([3., -4., 5.]), (2, 3))"
SAME_AS_TORCH += [template.format(s=NEG) for template in [
    "torch.zeros_like({s})", "torch.zeros_like({s}, dtype=torch.float64)", "torch.empty_like({s}).shape",
    "torch.ones_like({s})", "{s}.new_zeros(2, 2)", "{s}.zero_()", "{s}.copy_(torch.eye(2, 3).to_sparse())",
    "{s}.mul_(2)", "{s}.div_(2)", "{s}.neg_()", "{s}.sum(0)", "{s}.sum(dim=1)", "{s}.sum(0, keepdim=True)",
    "{s}.sum((0, 1))", "{s}.norm()", "{s}.norm(1)", "{s}.norm(dim=1)", "torch.norm({s})", "{s}.int()", "{s}.long()",
    "{s}.bool()", "{s}.permute(1, 0)", "{s}.unsqueeze(0)", "{s}.unsqueeze(2)", "{s}.is_sparse_csr", "{s}.type()",
    "{s}.type(torch.float64)", "{s}.type('torch.DoubleTensor')", "{s}.to_sparse(1)", "{s}.reshape(6)",
    "{s}.view(6)", "{s}.mean()", "{s}.max()", "{s} == {s}", "{s} > 0",
]] + [
    f"torch.cat([{NEG}, {NEG}])", f"torch.cat([{NEG}, {NEG}.coalesce()], 1)", f"torch.stack([{NEG}, {NEG}], 1)",
    f"torch.cat([{NEG}, torch.ones(2, 3)])", f"torch.cat([torch.sparse_coo_tensor([[0]], [1.], (2,)), {NEG}])",
    "torch.zeros(2, 3, layout=torch.sparse_coo)", "torch.zeros(2, 3, layout=torch.sparse_coo, dtype=torch.int64)",
    "torch.empty(2, 3, layout=torch.sparse_coo)._nnz()", "torch.ones(2, layout=torch.sparse_coo)",
    "torch.full((2,), 1., layout=torch.sparse_coo)", "torch.ones(3).is_sparse_csr",
]
A = "torch.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], torch.tensor([1., 2., 3., 4.]), (2, 3))"
B = "torch.sparse_coo_tensor([[2, 0, 2], [1, 0, 0]], torch.tensor([5., 6., 7.]), (3, 2))"
SAME_AS_TORCH += [f"torch.sparse.mm({A}, {B})", f"{A} @ {B}", f"torch.mm({A}, {B})", f"({A} @ {B}).is_coalesced()",
                  f"torch.sparse.mm({A}, torch.zeros(3, 2, layout=torch.sparse_coo))", f"torch.mm({A}, {A})",
                  f"torch.ones(2, 4) @ {A}", f"{A} @ torch.ones(4)"]


@pytest.mark.parametrize("source", SAME_AS_TORCH)
def test_same_as_torch(source):
    expected = _outcome(torch, source)
    assert expected not in ("NameError", "SyntaxError"), "the case itself is broken"
    assert _outcome(ember, source) == expected


def test_refusal_names_the_op_and_the_layout():
    s = ember.eye(2).to_sparse()
    with pytest.raises(NotImplementedError, match=r"cumsum.*sparse_coo.*to_dense"):
        s.cumsum(0)
    with pytest.raises(RuntimeError, match="add\\(dense, sparse\\)"):
        s + ember.ones(2, 2)
    with pytest.raises(RuntimeError, match="uncoalesced"):
        ember.sparse_coo_tensor([[1, 0]], [1., 2.]).values()
    with pytest.raises(RuntimeError, match="negative index"):
        ember.sparse_coo_tensor([[-1]], [1.], (2,))
    with pytest.raises(RuntimeError, match="int64"):
        ember.sparse_coo_tensor([[0.5]], [1.], (2,))
    with pytest.raises(NotImplementedError, match="reduce='mean'.*CSR"):
        ember.sparse.mm(s, ember.ones(2, 2), reduce="mean")


def test_a_sparse_tensor_is_a_tensor_with_its_own_layout():
    s = ember.eye(3).to_sparse()
    assert isinstance(s, ember.Tensor) and s.is_sparse and s.layout is ember.sparse_coo
    assert repr(ember.sparse_coo) == "ember.sparse_coo"
    assert not ember.ones(1).is_sparse and ember.ones(1).layout is ember.strided


def _random_coo(data, rows: int, cols: int):
    nnz = data.draw(st.integers(0, 12))
    indices = np.array([data.draw(st.lists(st.integers(0, n - 1), min_size=nnz, max_size=nnz)) for n in (rows, cols)],
                       dtype=np.int64).reshape(2, nnz)
    values = np.array(data.draw(st.lists(st.floats(-4, 4, width=32), min_size=nnz, max_size=nnz)), np.float64)
    return indices, values


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_random_matrices_agree_with_torch(data):
    rows, cols, k = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
    (i1, v1), (i2, v2) = _random_coo(data, rows, cols), _random_coo(data, rows, cols)
    dense = np.random.default_rng(0).standard_normal((cols, k))
    results = []
    for lib in (torch, ember):
        a = lib.sparse_coo_tensor(lib.tensor(i1), lib.tensor(v1), (rows, cols))
        b = lib.sparse_coo_tensor(lib.tensor(i2), lib.tensor(v2), (rows, cols))
        c = a.coalesce()
        results.append([a.to_dense(), c.indices(), c.values(), lib.sparse.mm(a, lib.tensor(dense)),
                        (a + b).to_dense(), (a * 3).to_dense(), a.t().to_dense(), lib.sparse.sum(a, 1).to_dense(),
                        (a * b).to_dense(), a.sum()])
    for expected, got in zip(*results):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_to_sparse_keeps_the_dense_dimensions_asked_for():
    x = np.array([[[0., 1.], [0., 0.]], [[2., 0.], [0., 3.]]])
    for sparse_dim in (1, 2, 3):
        expected = torch.tensor(x).to_sparse(sparse_dim)
        got = ember.tensor(x).to_sparse(sparse_dim)
        assert (got.sparse_dim(), got.dense_dim(), got._nnz()) == (expected.sparse_dim(), expected.dense_dim(),
                                                                   expected._nnz())
        np.testing.assert_array_equal(got.to_dense().numpy(), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_the_numpy_product_equals_the_scipy_one(monkeypatch, dtype):
    from ember._ops import sparse_product

    rng = np.random.default_rng(1)
    indices = np.unique(rng.integers(0, 40, (2, 60)), axis=1)
    values = rng.integers(-3, 4, indices.shape[1]).astype(dtype)
    dense = rng.integers(-3, 4, (8, 5)).astype(dtype)
    s = ember.sparse_coo_tensor(indices % 8, values, (8, 8)).coalesce()
    with_scipy = [ember.sparse.mm(s, ember.tensor(dense)), ember.sparse.mm(s.t(), ember.tensor(dense))]
    monkeypatch.setattr(sparse_product, "_scipy_sparse", None)
    by_numpy = [ember.sparse.mm(s, ember.tensor(dense)), ember.sparse.mm(s.t(), ember.tensor(dense))]
    expected = s.to_dense().numpy()
    for a, b, matrix in zip(with_scipy, by_numpy, (expected, expected.T)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_allclose(b.numpy(), matrix @ dense)
        assert b.dtype == s.dtype


def test_scipy_is_imported_by_the_first_sparse_product_not_by_ember():
    program = ("import sys, ember\n"
               "print(sorted(name for name in sys.modules if name.split('.')[0] == 'scipy'))\n"
               "s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2., 3.], (2, 2))\n"
               "print(ember.sparse.mm(s, ember.ones(2, 1)).tolist(), 'scipy.sparse' in sys.modules)\n")
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    ran = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["[]", "[[2.0], [3.0]] True"]


def test_without_scipy_the_product_runs_in_numpy(monkeypatch):
    from ember._ops import sparse_product

    monkeypatch.setattr(sparse_product, "_scipy_sparse", sparse_product._NOT_YET_IMPORTED)
    for name in ("scipy", "scipy.sparse"):
        monkeypatch.setitem(sys.modules, name, None)  # the import then raises ImportError, as if not installed
    s = ember.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], [2., 3., 4.], (2, 2))
    assert ember.sparse.mm(s, ember.tensor([[1.], [10.]])).tolist() == [[20.], [43.]]
    assert sparse_product._scipy_sparse is None


UNARY = ("abs absolute asin arcsin asinh arcsinh atan arctan atanh arctanh ceil deg2rad erf erfinv expm1 floor frac "
         "log1p rad2deg round sgn sign signbit sin sinh sqrt square tan tanh trunc fix nan_to_num relu isnan isinf "
         "isposinf isneginf").split()
UNCOALESCED = "torch.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], torch.tensor([0.3, -0.4, 0.5, 0.1]), (2, 3))"


@pytest.mark.parametrize("name", UNARY)
def test_zero_preserving_ops_as_torch(name):
    for source in (f"torch.{name}({UNCOALESCED})", f"{UNCOALESCED}.{name}()"):
        assert _outcome(ember, source) == _outcome(torch, source)


@pytest.mark.parametrize("source", [f"{UNCOALESCED} ** 2", f"torch.pow({UNCOALESCED}, 3)", f"{UNCOALESCED}.pow(0)",
                                    f"{UNCOALESCED}.exp()", f"torch.nn.functional.relu({UNCOALESCED})"])
def test_powers_and_refusals_as_torch(source):
    assert _outcome(ember, source) == _outcome(torch, source)


def _module_with_sparse_buffer(lib):
    import io

    class Layer(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("adj", lib.tensor([[0., 1.], [1., 0.]]).to_sparse())
            self.lin = lib.nn.Linear(2, 2)

        def forward(self, x):
            return lib.sparse.mm(self.adj, self.lin(x))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = Layer().double()
        copy = Layer().double()
        copy.load_state_dict(layer.state_dict())
        saved = io.BytesIO()
        lib.save(layer.state_dict(), saved)
        saved.seek(0)
        shown = [layer.adj, copy.adj, lib.load(saved)["adj"], layer.float()(lib.ones(2, 2)).shape]
    return [repr(t).replace("torch.", "ember.") for t in shown]


def test_a_module_with_a_sparse_buffer_as_torch():
    assert _module_with_sparse_buffer(ember) == _module_with_sparse_buffer(torch)
