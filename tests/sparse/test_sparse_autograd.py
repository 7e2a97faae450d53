"""Gradients through sparse COO tensors: values and layouts of ``.grad`` against torch, gradcheck to second order."""
import io
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck

INDICES = [[0, 1, 1, 2, 0], [2, 0, 2, 1, 2]]  # (0, 2) twice: an uncoalesced tensor


def _same(expected, got):
    """Equal reprs (torch's prefix renamed): the layout of a gradient, its indices and its values."""
    assert repr(got) == repr(expected).replace("torch.", "ember.")


def _grads(lib, program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = lib.tensor([3., 4., 5., 1., 2.], dtype=lib.float64)
        x = lib.sparse_coo_tensor(lib.tensor(INDICES), values, (3, 3), requires_grad=True)
        d = lib.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=lib.float64, requires_grad=True)
        leaf = values.clone().requires_grad_()
        program(lib, x, d, leaf)
        return x.grad, d.grad, leaf.grad


PROGRAMS = {
    "sparse.mm": lambda lib, x, d, v: (lib.sparse.mm(x, d) ** 2).sum().backward(),
    "to_dense": lambda lib, x, d, v: x.to_dense().pow(2).sum().backward(),
    "sparse.sum": lambda lib, x, d, v: lib.sparse.sum(x * 3).backward(),
    "values": lambda lib, x, d, v: (x.coalesce().values() ** 2).sum().backward(),
    "from values, mm": lambda lib, x, d, v: (
        lib.sparse.mm(lib.sparse_coo_tensor(lib.tensor(INDICES), v, (3, 3)), d) ** 2).sum().backward(),
    "from values, softmax": lambda lib, x, d, v: lib.sparse.sum(
        lib.sparse.softmax(lib.sparse_coo_tensor(lib.tensor(INDICES), v, (3, 3)), 1)
        * lib.arange(9., dtype=lib.float64).view(3, 3)).backward(),
    "from values, to_dense": lambda lib, x, d, v: (
        lib.sparse_coo_tensor(lib.tensor(INDICES), v, (3, 3)).to_dense() * lib.arange(9.).view(3, 3)).sum().backward(),
    "two backward passes accumulate": lambda lib, x, d, v: [
        lib.sparse.mm(x, d).sum().backward() for _ in range(2)],
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_gradients_as_torch(name):
    for expected, got in zip(_grads(torch, PROGRAMS[name]), _grads(ember, PROGRAMS[name])):
        if expected is None:
            assert got is None
        elif expected.is_sparse:
            _same(expected, got)
        else:
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


_S = ember.tensor(INDICES)


def _sparse(v):
    return ember.sparse_coo_tensor(_S, v, (3, 3))


THROUGH_VALUES = {
    "sparse.mm": lambda v, d: ember.sparse.mm(_sparse(v), d),
    "sparse @ vector": lambda v, d: _sparse(v) @ d[:, 0],
    "dense @ sparse": lambda v, d: d.t() @ _sparse(v),
    "sparse.addmm": lambda v, d: ember.sparse.addmm(d[:2].t().matmul(d[:2]).sum() * ember.ones(3, 2,
                                                    dtype=ember.float64), _sparse(v), d, beta=0.5, alpha=2),
    "to_dense": lambda v, d: _sparse(v).to_dense() * 3,
    "sparse + sparse": lambda v, d: (_sparse(v) + _sparse(v * 2)).to_dense(),
    "dense + sparse": lambda v, d: d[:, :1].expand(3, 3) + _sparse(v),
    "sparse * dense": lambda v, d: (_sparse(v) * d[:, :1].expand(3, 3)).to_dense(),
    "sparse * sparse": lambda v, d: (_sparse(v) * _sparse(v.flip(0))).to_dense(),
    "times a 0-d tensor": lambda v, d: (_sparse(v) * d[0, 0]).to_dense(),
    "scale, neg, t": lambda v, d: (-(_sparse(v) * 2.5).t()).to_dense(),
    "sum": lambda v, d: _sparse(v).sum(),
    "sparse.sum(dim)": lambda v, d: ember.sparse.sum(_sparse(v), 1).to_dense(),
    "softmax": lambda v, d: ember.sparse.softmax(_sparse(v), 1).to_dense(),
    "log_softmax": lambda v, d: ember.sparse.log_softmax(_sparse(v), 0).to_dense(),
    "sparse_mask": lambda v, d: (d @ d.t()).sparse_mask(_sparse(v)).to_dense(),
    "values": lambda v, d: _sparse(v).coalesce().values(),
    "hspmm": lambda v, d: ember.hspmm(_sparse(v), d).to_dense(),
    "smm": lambda v, d: ember.smm(_sparse(v), d).to_dense(),
    "to_sparse": lambda v, d: ((d @ d.t()).to_sparse() * _sparse(v)).to_dense(),
    "index_select": lambda v, d: _sparse(v).index_select(0, ember.tensor([2, 0, 0])).to_dense(),
    "index_select(1)": lambda v, d: (_sparse(v).index_select(1, ember.tensor([2, 1, 2])) * 2).sum(),
    "select": lambda v, d: _sparse(v)[0].to_dense() + _sparse(v).select(1, 2).to_dense(),
    "sspaddmm": lambda v, d: ember.sspaddmm(_sparse(v), _sparse(v * 2), d @ d.t(), beta=0.5, alpha=2).to_dense(),
    "spdiags": lambda v, d: ember.sparse.spdiags(d.t(), ember.tensor([0, -1]), (3, 3)).to_dense() * v.sum(),
    "cat": lambda v, d: ember.cat([_sparse(v), _sparse(v * 3)], 1).to_dense(),
    "stack, permute": lambda v, d: ember.stack([_sparse(v), _sparse(v).t()]).permute(0, 2, 1).to_dense(),
    "unsqueeze": lambda v, d: _sparse(v).unsqueeze(1).to_dense(),
    "norm": lambda v, d: _sparse(v).norm(),
    "sparse @ sparse": lambda v, d: ember.sparse.mm(_sparse(v), _sparse(v.flip(0)).t()).to_dense(),
    "sampled_addmm": lambda v, d: ember.sparse.sampled_addmm(_sparse(v), d, d.t(), beta=0.5).to_dense(),
}


@pytest.mark.parametrize("name", THROUGH_VALUES)
def test_gradcheck_and_gradgradcheck(name):
    ember.manual_seed(0)
    v = ember.rand(5, dtype=ember.float64, requires_grad=True)
    d = ember.rand(3, 2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(THROUGH_VALUES[name], (v, d))
    assert gradgradcheck(THROUGH_VALUES[name], (v, d))


def test_double_backward_with_a_sparse_leaf():
    x = ember.sparse_coo_tensor(_S, ember.tensor([1., 2., 3., 4., 5.], dtype=ember.float64), (3, 3),
                                requires_grad=True)
    d = ember.ones(3, 2, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad((ember.sparse.mm(x, d) ** 2).sum(), d, create_graph=True)
    g.sum().backward()
    expected = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor([1., 2., 3., 4., 5.], dtype=torch.float64),
                                       (3, 3), requires_grad=True)
    td = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.sparse.mm(expected, td) ** 2).sum(), td, create_graph=True)
    tg.sum().backward()
    # torch's second-order formula fills the whole matrix; ember's gradient of a sparse tensor stays on its
    # pattern, where the two agree
    on_pattern = (expected.detach().to_dense() != 0).numpy()
    np.testing.assert_allclose(x.grad.to_dense().numpy(), expected.grad.to_dense().numpy() * on_pattern)
    assert x.grad.is_sparse
    np.testing.assert_allclose(d.grad.numpy(), td.grad.numpy())


def _embedding_grad(lib, padding_idx=None):
    w = lib.nn.Parameter(lib.arange(15.).view(5, 3))
    idx = lib.tensor([[0, 2, 0], [1, 4, 2]])
    (lib.nn.functional.embedding(idx, w, padding_idx=padding_idx, sparse=True) ** 2).sum().backward()
    lib.nn.functional.embedding(idx, w, sparse=True).sum().backward()
    return w.grad


def test_embedding_sparse_gradient_as_torch():
    _same(_embedding_grad(torch, padding_idx=1), _embedding_grad(ember, padding_idx=1))
    module = ember.nn.Embedding(4, 2, sparse=True)
    module(ember.tensor([1, 3])).sum().backward()
    assert module.weight.grad.is_sparse
    with pytest.raises(RuntimeError, match="scale_grad_by_freq"):
        ember.nn.Embedding(4, 2, sparse=True, scale_grad_by_freq=True)(ember.tensor([1])).sum().backward()


def _bag_grads(lib):
    grads = []
    for mode, padding_idx, weights in (("sum", 1, None), ("mean", None, None), ("sum", None, [1., 2., 3., 4., 5., 6.])):
        w = lib.nn.Parameter(lib.arange(15.).view(5, 3))
        out = lib.nn.functional.embedding_bag(lib.tensor([[0, 2, 0], [1, 4, 2]]), w, mode=mode, sparse=True,
                                              padding_idx=padding_idx,
                                              per_sample_weights=None if weights is None else lib.tensor(weights).view(2, 3))
        (out * lib.arange(6.).view(2, 3)).sum().backward()
        grads.append(w.grad)
    return grads


def test_embedding_bag_sparse_gradient_as_torch():
    for expected, got in zip(_bag_grads(torch), _bag_grads(ember)):
        _same(expected, got)
    with pytest.raises(ValueError, match="max mode does not support sparse weights"):
        ember.nn.functional.embedding_bag(ember.tensor([[0, 1]]), ember.ones(3, 2), mode="max", sparse=True)


OPTIMIZERS = {
    "SGD": lambda lib, p: lib.optim.SGD(p, lr=0.1),
    "SGD with momentum": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "Adagrad": lambda lib, p: lib.optim.Adagrad(p, lr=0.1, lr_decay=0.01),
    "SparseAdam": lambda lib, p: lib.optim.SparseAdam(p, lr=0.1),
    "SparseAdam maximize": lambda lib, p: lib.optim.SparseAdam(p, lr=0.1, betas=(0.8, 0.99), maximize=True),
    "Adam": lambda lib, p: lib.optim.Adam(p, lr=0.1),
    "RMSprop": lambda lib, p: lib.optim.RMSprop(p, lr=0.1),
    "NAdam": lambda lib, p: lib.optim.NAdam(p, lr=0.1),
    "Adagrad with weight decay": lambda lib, p: lib.optim.Adagrad(p, lr=0.1, weight_decay=0.1),
    "SGD with weight decay": lambda lib, p: lib.optim.SGD(p, lr=0.1, weight_decay=0.1),
    "SGD maximize": lambda lib, p: lib.optim.SGD(p, lr=0.1, maximize=True),
    "LBFGS": lambda lib, p: lib.optim.LBFGS(p, lr=0.5, max_iter=3),
}


def _train(lib, make):
    w = lib.nn.Parameter(lib.tensor([[0.5, -1.0], [2.0, 0.25], [1.5, -0.5], [0.1, 0.2]], dtype=lib.float64))
    opt = make(lib, [w])
    loss = lambda idx: (lib.nn.functional.embedding(lib.tensor(idx), w, sparse=True) ** 2).sum()  # noqa: E731
    try:
        for idx in ([1, 1, 3], [0, 3], [3, 3, 2]):
            opt.zero_grad()
            loss(idx).backward()
            if isinstance(opt, lib.optim.LBFGS):
                opt.step(lambda: (opt.zero_grad(), loss(idx).backward(), loss(idx))[2])
            else:
                opt.step()
    except RuntimeError as error:  # the refusal's opening words (torch's SGD says add(sparse, dense) where
        return str(error).replace("add(sparse,", "weight_decay")[:12]  # ember names the weight_decay option)
    return w.detach().numpy().copy()


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizers_on_sparse_gradients_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note that it skips invariant checks
        expected = _train(torch, OPTIMIZERS[name])
    got = _train(ember, OPTIMIZERS[name])
    if isinstance(expected, str):
        assert got == expected
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_sparse_adam_refuses_what_torch_refuses():
    w = ember.nn.Parameter(ember.ones(3))
    w.grad = ember.ones(3)
    with pytest.raises(RuntimeError, match="dense gradients"):
        ember.optim.SparseAdam([w]).step()
    with pytest.raises(ValueError, match="beta"):
        ember.optim.SparseAdam([w], betas=(1.0, 0.9))
    assert repr(ember.optim.SparseAdam([w], lr=0.01)) == repr(
        torch.optim.SparseAdam([torch.nn.Parameter(torch.ones(3))], lr=0.01))


def test_save_and_load_round_trip_with_torch():
    s = ember.sparse_coo_tensor(_S, ember.tensor([3., 4., 5., 1., 2.]), (3, 3))
    saved = io.BytesIO()
    ember.save({"s": s, "c": s.coalesce()}, saved)
    saved.seek(0)
    loaded = ember.load(saved)
    _same(loaded["s"], s)
    assert loaded["c"].is_coalesced()
    saved.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_torch = torch.load(saved)
        _same(from_torch["s"], s)
        back = io.BytesIO()
        torch.save(from_torch, back)
    back.seek(0)
    _same(from_torch["c"], ember.load(back)["c"])


LAYOUT_PROGRAMS = {
    "s * 2, sum": lambda L, x, d: (x * 2).sum(),
    "s * 2, to_dense": lambda L, x, d: (x * 2).to_dense().sum(),
    "s.sum()": lambda L, x, d: x.sum(),
    "sparse.sum": lambda L, x, d: L.sparse.sum(x),
    "sparse.sum(dim)": lambda L, x, d: L.sparse.sum(x, 1).to_dense().sum(),
    "dense + s": lambda L, x, d: (d + x).sum(),
    "s * dense, sum": lambda L, x, d: (x * d).sum(),
    "s * dense, to_dense": lambda L, x, d: (x * d).to_dense().sum(),
    "mm": lambda L, x, d: L.mm(x, d.t()).sum(),
    "@": lambda L, x, d: (x @ d.t()).sum(),
    "dense @ s": lambda L, x, d: (d.t() @ x).sum(),
    "sparse.mm": lambda L, x, d: L.sparse.mm(x, d.t()).sum(),
    "sparse.mm of two sparse": lambda L, x, d: L.sparse.mm(x, (x * 2).t()).to_dense().pow(2).sum(),
    "addmm": lambda L, x, d: L.addmm(d[:, :2], x, d.t()).sum(),
    "sparse.addmm": lambda L, x, d: L.sparse.addmm(d[:, :2], x, d.t()).sum(),
    "neg": lambda L, x, d: (-x).to_dense().sum(),
    "t": lambda L, x, d: x.t().to_dense().sum(),
    "s + s": lambda L, x, d: (x + x).to_dense().sum(),
    "s - 3 s": lambda L, x, d: (x - x * 3).to_dense().sum(),
    "s / 2": lambda L, x, d: (x / 2).to_dense().sum(),
    "softmax": lambda L, x, d: L.sparse.softmax(x, 1).to_dense().sum(),
    "coalesce().values()": lambda L, x, d: x.coalesce().values().sum(),
    "sparse_mask": lambda L, x, d: d.sparse_mask(x).to_dense().sum(),
    "to_dense": lambda L, x, d: x.to_dense().sum(),
    "double": lambda L, x, d: x.double().to_dense().sum(),
}


def _layouts(L, program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = L.sparse_coo_tensor(L.tensor([[0, 1, 1], [2, 0, 2]]), L.tensor([3., 4., 5.]), (2, 3)).coalesce()
        x.requires_grad_()
        d = L.arange(6.).view(2, 3).requires_grad_()
        program(L, x, d).backward()
    return [None if t.grad is None else (t.grad.layout is L.sparse_coo, t.grad.to_dense().tolist()) for t in (x, d)]


@pytest.mark.parametrize("name", LAYOUT_PROGRAMS)
def test_gradient_layouts_as_torch(name):
    """Sparse where torch's gradient is sparse (sparse.mm, to_dense, ...), dense where torch's formula is dense."""
    assert _layouts(ember, LAYOUT_PROGRAMS[name]) == _layouts(torch, LAYOUT_PROGRAMS[name])


def test_a_sparse_gradient_into_a_dense_op_arrives_dense():
    w = ember.ones(4, 2, requires_grad=True)
    for create_graph in (False, True):
        table = w * 2  # the sparse gradient of the embedding reaches MulBackward0, a dense formula
        loss = ember.nn.functional.embedding(ember.tensor([1, 1, 3]), table, sparse=True).sum()
        (grad,) = ember.autograd.grad(loss, w, create_graph=create_graph)
        assert not grad.is_sparse
        np.testing.assert_array_equal(grad.detach().numpy(), [[0, 0], [4, 4], [0, 0], [2, 2]])


GRADCHECKS = {
    "sparse.mm": (lambda L: L.sparse.mm, 2),
    "mm": (lambda L: L.mm, 2),
    "to_dense": (lambda L: (lambda s: s.to_dense()), 1),
    "scale": (lambda L: (lambda s: (s * 2).to_dense()), 1),
    "sum": (lambda L: (lambda s: s.sum()), 1),
}


def _verdict(lib, name, masked):
    make, arity = GRADCHECKS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]), lib.tensor([3., 4., 5.], dtype=lib.float64),
                                  (2, 3)).coalesce().requires_grad_()
        d = lib.tensor([[0.5, 1.], [2., -1.], [0.25, 3.]], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(make(lib), (s, d)[:arity], masked=masked, raise_exception=False)


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_of_sparse_inputs_decides_as_torch(name):
    """Not masked, a sparse input is perturbed everywhere (sparse.mm's gradient on the pattern fails, as in
    torch); masked, only its stored values are."""
    assert _verdict(ember, name, False) == _verdict(torch, name, False)
    assert _verdict(ember, name, True) is True


def test_gradgradcheck_of_sparse_inputs():
    s = ember.sparse_coo_tensor(_S, ember.rand(5, dtype=ember.float64), (3, 3)).requires_grad_()
    d = ember.rand(3, 2, dtype=ember.float64, requires_grad=True)
    assert gradgradcheck(ember.sparse.mm, (s, d), masked=True)
    assert gradgradcheck(lambda s, d: d.t() @ s, (s, d))


@pytest.mark.parametrize("name", ["abs", "square", "log1p", "relu", "deg2rad", "frac"])
def test_gradients_of_zero_preserving_ops_as_torch(name):
    program = lambda L, x, d: getattr(x * 0.5, name)().to_dense().sum()  # noqa: E731
    assert _layouts(ember, program) == _layouts(torch, program)


def test_in_place_changes_are_refused_under_grad_as_torch():
    leaf = ember.eye(2).to_sparse().requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.mul_(2)
    with ember.no_grad():
        leaf.mul_(2)
    assert leaf._version == 1 and leaf.values().tolist() == [2., 2.]
    with pytest.raises(RuntimeError, match="in-place"):
        (leaf * 1).zero_()


def _hooked(L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen = []
        s = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([2., 3.]), (2, 2)).coalesce().requires_grad_()
        s.register_hook(lambda g: seen.append(repr(g)) or g * 2)  # the hook computes with the sparse gradient
        L.sparse.mm(s, L.ones(2, 1)).sum().backward()
        w = L.nn.Parameter(L.ones(4, 2))
        w.register_hook(lambda g: g * 3)
        L.nn.functional.embedding(L.tensor([1, 1, 3]), w, sparse=True).sum().backward()
        x = L.sparse_coo_tensor(L.tensor([[0, 1], [1, 0]]), L.tensor([2., 3.]), (2, 2)).coalesce().requires_grad_()
        y = x * 2
        y.retain_grad()
        y.to_dense().sum().backward()
        (g,) = L.autograd.grad(L.sparse.mm(x, L.ones(2, 1)).sum(), x)
    return [text.replace("torch.", "ember.") for text in seen + [repr(t) for t in (s.grad, w.grad, y.grad, x.grad, g)]]


def test_hooks_retain_grad_and_autograd_grad_with_sparse_gradients_as_torch():
    assert _hooked(ember) == _hooked(torch)


def _scaled_steps(lib):
    w = lib.nn.Parameter(lib.ones(4, 2))
    opt = lib.optim.SGD([w], lr=0.5)
    scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
    for scale_row in (1.0, float("inf")):  # the second step's gradient holds an inf: it is skipped
        opt.zero_grad()
        rows = lib.nn.functional.embedding(lib.tensor([1, 2]), w, sparse=True)
        scaler.scale((rows * lib.tensor([[scale_row], [1.0]])).sum()).backward()
        scaler.step(opt)
        scaler.update()
    return w.detach().numpy().copy(), scaler.get_scale()


def test_grad_scaler_sees_an_inf_in_a_sparse_gradient():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _scaled_steps(torch)
    got = _scaled_steps(ember)
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1] == expected[1]
