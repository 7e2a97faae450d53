"""vmap against torch.func.vmap: the same program on both libraries, batching rules by kind of op, and errors."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 3, 5))
B = RNG.standard_normal((4, 5))
M = RNG.standard_normal((5, 2))


def t(lib, array):
    return lib.tensor(array)


PROGRAMS = {
    "unary": lambda lib, x, y: x.exp().sin(),
    "broadcast against a sample row": lambda lib, x, y: x * y + 1,
    "where": lambda lib, x, y: lib.where(x > 0, x, y),
    "sum all": lambda lib, x, y: x.sum(),
    "sum dim": lambda lib, x, y: x.sum(-1) + x.mean(0, keepdim=True).sum(),
    "max with dim": lambda lib, x, y: x.max(dim=1).values * x.argmax(1),
    "max without dim": lambda lib, x, y: x.max() + x.amin() + x.std(),
    "softmax": lambda lib, x, y: lib.nn.functional.softmax(x, dim=0) + x.log_softmax(-1),
    "cumsum and sort": lambda lib, x, y: x.cumsum(1) + x.sort(dim=0).values,
    "view and transpose": lambda lib, x, y: x.reshape(5, 3).t() + x.transpose(0, 1).T + x.mT.mT,
    "permute flatten unsqueeze": lambda lib, x, y: x.permute(1, 0).flatten().unsqueeze(0).squeeze(),
    "expand": lambda lib, x, y: y.expand(2, 5) + x[:1],
    "matmul vector": lambda lib, x, y: x @ y,
    "matmul matrix": lambda lib, x, y: x @ y.unsqueeze(-1) + (y @ x.T).sum(),
    "indexing": lambda lib, x, y: x[1:, ::2].sum() + x[..., 0, None] + x[:, [0, 2]].sum(),
    "cat and stack": lambda lib, x, y: lib.cat([x, y.unsqueeze(0)], 0).sum(0) + lib.stack([y, y], 1).sum(1),
    "linear": lambda lib, x, y: lib.nn.functional.linear(x, y.unsqueeze(0).expand(2, 5)),
    "einsum": lambda lib, x, y: lib.einsum("ij,j->i", x, y),
    "gather": lambda lib, x, y: x.gather(1, (x.abs() * 3).long().clamp(0, 4)),
    "losses": lambda lib, x, y: lib.nn.functional.mse_loss(x, y.expand(3, 5)) + lib.nn.functional.cross_entropy(
        x, lib.tensor([0, 4, 2])),
    "chunk and unbind": lambda lib, x, y: x.chunk(3, dim=0)[1] + sum(x.unbind(0)),
    "norm": lambda lib, x, y: x.norm(dim=1) + lib.linalg.vector_norm(y),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_vmap_matches_torch(name):
    program = PROGRAMS[name]
    both(lambda lib: lib.func.vmap(lambda x, y: program(lib, x, y))(t(lib, A), t(lib, B)))


@pytest.mark.parametrize("in_dims,out_dims", [((1, None), 0), ((2, 0), 1), ((0, 0), -1)])
def test_in_dims_and_out_dims(in_dims, out_dims):
    def program(lib):
        x = t(lib, A)
        y = t(lib, B) if in_dims[0] != 2 else t(lib, B.T.copy())
        y = y if in_dims[1] is not None else t(lib, B[0])
        return lib.func.vmap(lambda a, b: a * b.sum(), in_dims=in_dims, out_dims=out_dims)(x, y)
    both(program)


def test_equality_operator_inside_vmap():
    """``==`` on a batched tensor hands ``Tensor.__eq__`` to the batching rules, as torch's does to its handlers."""
    def program(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 3.0]])
        return lib.func.vmap(lambda r: r == 3.0)(x), lib.func.vmap(lambda r: r == r.flip(0))(x)

    both(program)


def test_nested_vmap_and_pytrees():
    def program(lib):
        x, y = t(lib, A), t(lib, B)
        inner = lib.func.vmap(lambda d: d["a"] * d["b"] + d["a"].sum(), in_dims=({"a": 0, "b": None},))
        return lib.func.vmap(lambda a, b: inner({"a": a, "b": b}), in_dims=(0, 0))(x, y)
    both(program)


def test_nested_vmap_outer_product():
    both(lambda lib: lib.func.vmap(lib.func.vmap(lib.mul, in_dims=(0, None)), in_dims=(None, 0))(
        t(lib, B[0]), t(lib, B[1])))


def test_chunk_size_gives_the_same_result():
    both(lambda lib: lib.func.vmap(lambda x: x.sum(0) @ x.T, chunk_size=3)(t(lib, A)))


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2), st.sampled_from(["sum", "prod", "amax", "mean", "logsumexp"]))
def test_reductions_along_any_dim(batch, dim, op):
    data = RNG.standard_normal((batch, 2, 3, 4))
    both(lambda lib: lib.func.vmap(lambda x: getattr(x, op)(dim))(t(lib, data)))


def test_conv_and_pooling():
    x = RNG.standard_normal((3, 2, 6, 6))
    w = RNG.standard_normal((4, 2, 3, 3))

    def program(lib):
        F = lib.nn.functional
        return lib.func.vmap(lambda s: F.max_pool2d(F.conv2d(s, t(lib, w), padding=1).relu(), 2))(t(lib, x))
    both(program)


def test_conv_with_batched_weights():
    x = RNG.standard_normal((3, 1, 2, 5, 5))
    w = RNG.standard_normal((3, 4, 2, 3, 3))
    bias = RNG.standard_normal((3, 4))
    both(lambda lib: lib.func.vmap(lib.nn.functional.conv2d)(t(lib, x), t(lib, w), t(lib, bias)))


def test_inplace_on_a_batched_tensor():
    def program(lib):
        def f(x, y):
            z = x.clone()
            z.add_(y)
            z[0] = 7.0
            z.mul_(2)
            return z
        return lib.func.vmap(f, in_dims=(0, None))(t(lib, B), t(lib, B[0]))
    both(program)


def test_inplace_on_a_captured_tensor_is_refused():
    def program(lib):
        captured = lib.zeros(5, dtype=lib.float64)
        lib.func.vmap(lambda y: captured.add_(y))(t(lib, B))
    torch_message, ember_message = both_raise(program, RuntimeError)
    assert "`other` being vmapped over but `self` not being vmapped over" in ember_message


def test_randomness():
    def program(lib, randomness):
        return lib.func.vmap(lambda x: x + lib.rand(3), randomness=randomness)(lib.zeros(4, 3))
    both_raise(lambda lib: program(lib, "error"), RuntimeError, "randomness error mode")
    same = program(ember, "same")
    assert (same == same[0]).all()
    different = program(ember, "different")
    assert not (different == different[0]).all()
    dropped = ember.func.vmap(lambda x: ember.nn.functional.dropout(x, 0.5), randomness="same")(ember.ones(4, 100))
    assert (dropped == dropped[0]).all() and (dropped == 0).any()


def test_errors():
    both_raise(lambda lib: lib.func.vmap(lib.add)(lib.ones(2), lib.ones(3)), ValueError, "same size")
    both_raise(lambda lib: lib.func.vmap(lib.sin, in_dims=1)(lib.ones(2)), ValueError, "in_dim")
    both_raise(lambda lib: lib.func.vmap(lambda x: x.item())(lib.ones(2)), RuntimeError, r"\.item\(\)")
    both_raise(lambda lib: lib.func.vmap(lambda x: 1)(lib.ones(2)), ValueError, "must only return Tensors")
    both_raise(lambda lib: lib.func.vmap(lib.sin, randomness="any"), RuntimeError, "randomness")


def test_an_op_without_a_rule_names_the_op():
    with pytest.raises(RuntimeError, match="batching rule not implemented for ember.histc"):
        ember.func.vmap(lambda x: ember.histc(x))(ember.ones(2, 3))


def test_batched_tensor_shows_its_level():
    seen = []
    ember.func.vmap(lambda x: seen.append(repr(x)) or x)(ember.ones(2, 3))
    assert seen[0].startswith("BatchedTensor(lvl=1, bdim=0, value=")


def test_vmap_of_a_module_in_eval_mode():
    x = RNG.standard_normal((5, 1, 3, 6, 6))

    def program(lib):
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.Dropout(0.5),
                                  lib.nn.Flatten(), lib.nn.Linear(64, 2)).double()
        with lib.no_grad():
            for p in list(model.parameters()) + list(model.buffers())[:2]:
                p.copy_(lib.tensor(np.cos(np.arange(p.numel()) * 0.7).reshape(tuple(p.shape))))
            model[1].running_var.add_(2.0)
        model.eval()
        return lib.func.vmap(model)(t(lib, x))
    both(program)


def test_batch_norm_in_training_is_refused():
    def program(lib):
        lib.func.vmap(lib.nn.BatchNorm1d(3), randomness="different")(lib.ones(4, 2, 3))
    both_raise(program, RuntimeError, "running_mean|running statistics")


def test_random_ops_are_seen_inside_nested_transforms():
    f = lambda x: (x * ember.rand(3)).sum()  # noqa: E731
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ember.func.vmap(ember.func.grad(f))(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ember.func.jacrev(lambda x: x * ember.rand(3))(ember.ones(3))
    grads = ember.func.vmap(ember.func.grad(f), randomness="different")(ember.ones(2, 3))
    assert not (grads[0] == grads[1]).all()


def test_linear_algebra_on_a_batch_of_matrices():
    a = RNG.standard_normal((3, 4, 4)) + 4 * np.eye(4)
    spd = a @ a.transpose(0, 2, 1)

    def program(lib):
        vmap, linalg = lib.func.vmap, lib.linalg
        A, S = t(lib, a), t(lib, spd)
        return (vmap(lib.det)(A), vmap(linalg.inv)(A), vmap(linalg.slogdet)(A), vmap(linalg.eigvalsh)(S),
                vmap(linalg.cholesky)(S), vmap(lib.trace)(A), vmap(linalg.matrix_power, in_dims=(0, None))(A, 3))
    both(program)


def test_group_norm_and_prelu_with_per_sample_parameters():
    x, w, b = RNG.standard_normal((3, 2, 4, 5)), RNG.standard_normal((3, 4)), RNG.standard_normal(4)

    def program(lib):
        F = lib.nn.functional
        X, W, B = t(lib, x), t(lib, w), t(lib, b)
        return (lib.func.vmap(lambda s, ws: F.group_norm(s, 2, ws, B))(X, W),
                lib.func.vmap(F.prelu)(X, W), lib.func.vmap(lambda s: F.prelu(s, B))(X))
    both(program)


# ---- the rules for transposed convolutions, instance_norm, bilinear, einsum with '...' and linalg.solve

@pytest.mark.parametrize("spatial", [1, 3])
@pytest.mark.parametrize("batched_weight", [False, True])
def test_conv_transpose_with_shared_and_batched_weights(spatial, batched_weight):
    x = RNG.standard_normal((3, 1, 4) + (3,) * spatial)
    w = RNG.standard_normal(((3,) if batched_weight else ()) + (4, 2) + (2,) * spatial)
    name = f"conv_transpose{spatial}d"

    def program(lib):
        op = getattr(lib.nn.functional, name)
        return lib.func.vmap(lambda s, k: op(s, k, stride=2, padding=1, output_padding=1),
                             in_dims=(0, 0 if batched_weight else None))(t(lib, x), t(lib, w))
    both(program)


def test_instance_norm_bilinear_and_einsum_with_an_ellipsis():
    x, w = RNG.standard_normal((3, 2, 4, 5)), RNG.standard_normal((6, 5, 4))

    def program(lib):
        F, vmap = lib.nn.functional, lib.func.vmap
        return (vmap(lambda s: F.instance_norm(s, weight=t(lib, B[0, :4]), bias=t(lib, B[1, :4])))(t(lib, x)),
                vmap(lambda a, k: F.bilinear(a, a[..., :4], k))(t(lib, x), t(lib, np.stack([w] * 3))),
                vmap(lambda a: lib.einsum("...ij,...kj", a, a))(t(lib, x)),
                vmap(lambda a: lib.einsum("b...j,bkj->b...k", a, a))(t(lib, x)))
    both(program)


def test_linalg_solve_with_a_matrix_or_a_vector_per_sample():
    a = RNG.standard_normal((3, 4, 4)) + 4 * np.eye(4)
    b = RNG.standard_normal((3, 4))

    def program(lib):
        solve = lib.func.vmap(lib.linalg.solve)
        return solve(t(lib, a), t(lib, b)), solve(t(lib, a), t(lib, a[:, :, :2])), lib.func.vmap(
            lib.linalg.solve, in_dims=(None, 0))(t(lib, a[0]), t(lib, b))
    both(program)


@pytest.mark.parametrize("program,message", [
    (lambda lib, x: x.nonzero(), "dynamic shape"),
    (lambda lib, x: x.unique(), "dynamic shape"),
    (lambda lib, x: x.masked_select(x > 0), "differently shaped"),
    (lambda lib, x: x[x > 0], "boolean mask"),
])
def test_data_dependent_shapes_give_torchs_error(program, message):
    both_raise(lambda lib: lib.func.vmap(lambda x: program(lib, x))(t(lib, B)), RuntimeError, message)


@pytest.mark.parametrize("q", [0.3, [0.2, 0.9]])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, True), (0, False)])
def test_quantile_with_a_number_or_a_tensor_of_q(q, dim, keepdim):
    both(lambda lib: lib.func.vmap(lambda x: lib.quantile(x, q if isinstance(q, float) else lib.tensor(q,
         dtype=lib.float64), dim=dim, keepdim=keepdim))(t(lib, A)))


COMPOSED = {  # rules written as other batched ops, on samples of A (3 x 5) and B (5,)
    "tensordot": lambda lib, x, y: lib.tensordot(x, x.T, dims=([1], [0])) + lib.tensordot(x, x, dims=2),
    "kron": lambda lib, x, y: lib.kron(x[:2, :2], y[:3]),
    "rot90": lambda lib, x, y: lib.rot90(x, 3, (0, 1)) + lib.rot90(x, 1, (1, 0)),
    "take and put": lambda lib, x, y: lib.take(x, lib.tensor([-1, 0, 4])).sum() + x.put(
        lib.tensor([0, -1, 0]), y[:3], accumulate=True),
    "repeat_interleave": lambda lib, x, y: x.repeat_interleave(lib.tensor([1, 0, 2]), dim=0).sum(0) + y,
    "meshgrid and stacks": lambda lib, x, y: lib.meshgrid(y[:2], x[0], indexing="xy")[0].sum() + lib.hstack(
        [x, x]).sum(1).sum() + lib.dstack([y, y]).sum() + lib.hsplit(x[:, :4], 2)[1].sum(),
    "searchsorted": lambda lib, x, y: lib.searchsorted(y.sort().values, x).double() + lib.bucketize(
        x, y.sort().values, right=True),
    "isin": lambda lib, x, y: lib.isin(x, y, invert=True).double() + lib.isin(x, y[:2]),
    "diag and trace": lambda lib, x, y: lib.diag(y, 1).sum() + lib.diag(x, -1).sum() + lib.diagflat(x[:2, :2]).sum(),
}


@pytest.mark.parametrize("name", list(COMPOSED))
def test_composed_rules_match_torch(name):
    program = COMPOSED[name]
    data = np.round(A * 2) / 2  # ties, so that searchsorted and isin meet equal values
    both(lambda lib: lib.func.vmap(lambda x, y: program(lib, x, y))(t(lib, data[:, :, :]), t(lib, data[:, 0, :])))


def test_index_put_with_shared_and_batched_indices():
    index = np.array([[0, 2, 2], [1, 1, 0], [2, 0, 1], [0, 0, 0]])

    def program(lib):
        x, v = t(lib, A), t(lib, B)
        put = lambda s, i, w: s.index_put((i,), w[:3, None], accumulate=True)  # noqa: E731
        return (lib.func.vmap(put, in_dims=(0, 0, 0))(x, t(lib, index), v),
                lib.func.vmap(put, in_dims=(0, None, 0))(x, t(lib, index[0]), v),
                lib.func.vmap(lambda s, w: s.index_put((t(lib, index[1]), t(lib, index[2])), w[0]))(x, v))
    both(program)


def test_masked_scatter_with_a_mask_per_sample():
    both(lambda lib: lib.func.vmap(lambda x, y: x.masked_scatter(x > 0, y * 10))(t(lib, A), t(lib, A[:, ::-1].copy())))
def test_vmap_is_also_at_the_top_level_as_in_torch():
    x = RNG.standard_normal((3, 4))
    want = torch.vmap(lambda row: row.exp().sum())(torch.tensor(x))
    got = ember.vmap(lambda row: row.exp().sum())(ember.tensor(x))
    np.testing.assert_allclose(got.numpy(), want.numpy())
    assert ember.vmap is ember.func.vmap


@pytest.mark.parametrize("call", ["t.sum(axis=0)", "t.argsort(axis=0)", "lib.sort(t, axis=1).values",
                                  "lib.sum(t, axis=0, keepdims=True)"])
def test_numpy_keyword_names_under_vmap(call):
    """The batching rules read dims by ember's names: NumPy's (axis=, keepdims=) are translated first, as outside
    vmap."""
    def run(lib):
        x = lib.arange(24.0).reshape(2, 3, 4).flip(-1)
        return lib.vmap(lambda t: eval(call, {"lib": lib, "t": t}))(x)
    np.testing.assert_array_equal(run(ember).numpy(), run(torch).numpy())


@pytest.mark.parametrize("make", ["t.new_zeros(4)", "t.new_ones((4,))", "t.new_full((4,), 2.0)",
                                  "t.new_empty(4).fill_(0.5)"])
def test_new_tensors_are_per_sample_under_vmap(make):
    """As torch's, new_zeros and its kin give a batched tensor under vmap, so a sample's values can be written in."""
    def run(lib):
        def f(t):
            z = eval(make, {"t": t})
            z[1:] = t
            return z
        return lib.vmap(f)(lib.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(run(ember).numpy(), run(torch).numpy())
