"""utils.flop_counter.FlopCounterMode against torch's: totals, per-op and per-module counts, forward and backward."""
import itertools
import sys
import types

import pytest
import torch

import ember
import ember.utils.flop_counter as ember_flops
import torch.utils.flop_counter as torch_flops


def counts(lib, program):
    """Run ``program(lib)`` under the library's counter: {module: {op name: FLOPs}}."""
    counter_module = torch_flops if lib is torch else ember_flops
    with counter_module.FlopCounterMode(display=False) as counter:
        program(lib)
    return {module: {str(op): n for op, n in ops.items()} for module, ops in counter.get_flop_counts().items()}


def assert_same_counts(program):
    expected = counts(torch, program)
    assert counts(ember, program) == expected


def leaf(lib, shape, requires_grad=False, transpose=False):
    """A float64 tensor of ``shape``; ``transpose``: a view whose first two dims are swapped (not contiguous)."""
    if transpose:
        return lib.randn(shape[1], shape[0], *shape[2:], dtype=lib.float64, requires_grad=requires_grad).transpose(0, 1)
    return lib.randn(*shape, dtype=lib.float64, requires_grad=requires_grad)


def forward_backward(lib, out):
    if out.requires_grad:
        out.sum().backward()


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)),
    ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)), ((1, 2, 3), (5, 3, 4)),
    ((2, 5, 2, 3), (5, 3, 4)), ((3,), (5, 3, 4)), ((2, 5, 2, 3), (1, 3, 4)), ((5, 2, 3), (2, 1, 3, 4)),
    ((1, 2, 3), (1, 3, 4)), ((0, 2, 3), (3, 4)),
]


@pytest.mark.parametrize("shape_a,shape_b", MATMUL_SHAPES)
def test_matmul_counts_the_products_torch_decomposes_it_into(shape_a, shape_b):
    for grad_a, grad_b, transpose in itertools.product((False, True), (False, True), (False, True)):
        if transpose and len(shape_a) < 3:
            continue

        def program(lib):
            a = leaf(lib, shape_a, grad_a, transpose)
            forward_backward(lib, a @ leaf(lib, shape_b, grad_b))

        assert_same_counts(program)


def test_mm_bmm_addmm_baddbmm_forward_and_backward():
    def program(lib):
        a, b = leaf(lib, (3, 4), True), leaf(lib, (4, 5), True)
        forward_backward(lib, lib.mm(a, b) + a.mm(b))
        forward_backward(lib, lib.addmm(leaf(lib, (5,), True), leaf(lib, (3, 4)), b, beta=2))
        x, y = leaf(lib, (2, 3, 4), True), leaf(lib, (2, 4, 5))
        forward_backward(lib, lib.bmm(x, y) + x.bmm(y))
        forward_backward(lib, lib.baddbmm(leaf(lib, (2, 3, 5)), x, y, alpha=0.5))

    assert_same_counts(program)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4), (2, 2, 3, 4)])
def test_linear_counts_addmm_or_the_matmul_torch_takes(shape):
    for bias, input_grad, transpose in itertools.product((False, True), (False, True), (False, True)):
        if transpose and len(shape) < 3:
            continue

        def program(lib):
            x = leaf(lib, shape, input_grad, transpose)
            weight = leaf(lib, (5, 4), True)
            forward_backward(lib, lib.nn.functional.linear(x, weight, leaf(lib, (5,), True) if bias else None))

        assert_same_counts(program)


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.Linear(8, 8), lib.nn.Tanh(),
                             lib.nn.Sequential(lib.nn.Linear(8, 3))).double()


@pytest.mark.parametrize("backward", [False, True])
def test_mlp_per_module(backward):
    def program(lib):
        out = mlp(lib)(leaf(lib, (4, 6)))
        if backward:
            out.sum().backward()

    assert_same_counts(program)


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 8, 3, stride=2, groups=2), nn.ReLU(),
        nn.ConvTranspose2d(8, 4, 2, stride=2, output_padding=1, groups=4), nn.Flatten(),
    ).double()


@pytest.mark.parametrize("backward", [False, True])
def test_cnn_per_module(backward):
    def program(lib):
        out = cnn(lib)(leaf(lib, (2, 3, 9, 9), requires_grad=backward))
        if backward:
            out.sum().backward()

    assert_same_counts(program)


def test_convolutions_of_each_rank_transposed_unbatched_and_with_options():
    def program(lib):
        F = lib.nn.functional
        for dims in (1, 2, 3):
            conv, transposed = getattr(F, f"conv{dims}d"), getattr(F, f"conv_transpose{dims}d")
            size = (5,) * dims
            x = leaf(lib, (2, 4, *size), True)
            forward_backward(lib, conv(x, leaf(lib, (6, 2, *(3,) * dims), True), leaf(lib, (6,), True),
                                       stride=2, padding=1, dilation=1, groups=2))
            forward_backward(lib, conv(leaf(lib, (4, *size)), leaf(lib, (6, 4, *(2,) * dims), True),
                                       padding="same"))
            forward_backward(lib, transposed(x, leaf(lib, (4, 3, *(2,) * dims)), None, stride=2, output_padding=1))
            forward_backward(lib, transposed(leaf(lib, (4, *size)), leaf(lib, (4, 3, *(3,) * dims), True),
                                             dilation=2))

    assert_same_counts(program)


ATTENTION_CASES = [
    dict(q=(2, 4, 3, 8), k=(2, 4, 5, 8), v=(2, 4, 5, 6)),
    dict(q=(2, 4, 3, 8), k=(2, 4, 5, 8), v=(2, 4, 5, 6), is_causal=True),
    dict(q=(4, 3, 8), k=(4, 5, 8), v=(4, 5, 8)),
    dict(q=(2, 4, 3, 8), k=(2, 2, 5, 8), v=(2, 2, 5, 6), enable_gqa=True),
    dict(q=(2, 4, 3, 8), k=(2, 4, 5, 8), v=(2, 4, 5, 8), math=True),  # torch takes its fused kernel else
]


@pytest.mark.parametrize("case", ATTENTION_CASES, ids=str)
def test_scaled_dot_product_attention_forward_and_backward(case):
    case = dict(case)
    shapes = case.pop("q"), case.pop("k"), case.pop("v")
    math_path = case.pop("math", False)
    for grads in [(False,) * 3, (True,) * 3, (True, False, False), (False, False, True)]:
        def program(lib):
            q, k, v = (leaf(lib, shape, grad) for shape, grad in zip(shapes, grads))
            if lib is torch and math_path:
                from torch.nn.attention import SDPBackend, sdpa_kernel
                with sdpa_kernel(SDPBackend.MATH):
                    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **case)
            else:
                out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **case)
            forward_backward(lib, out)

        assert_same_counts(program)


def attention_block(lib):
    class Attention(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = lib.nn.Linear(8, 24)
            self.proj = lib.nn.Linear(8, 8)

        def forward(self, x):
            q, k, v = self.qkv(x).reshape(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)
            scores = (q @ k.transpose(-2, -1)).softmax(-1)
            return self.proj((scores @ v).transpose(1, 2).reshape(2, 5, 8))

    return lib.nn.Sequential(Attention(), lib.nn.LayerNorm(8)).double()


@pytest.mark.parametrize("backward", [False, True])
def test_attention_block_per_module(backward):
    def program(lib):
        out = attention_block(lib)(leaf(lib, (2, 5, 8), requires_grad=backward))
        if backward:
            out.sum().backward()

    assert_same_counts(program)


def test_backward_after_the_block_is_not_counted_and_a_second_block_starts_afresh():
    def program_outside(lib):
        counter_module = torch_flops if lib is torch else ember_flops
        x, w = leaf(lib, (3, 4), True), leaf(lib, (4, 2), True)
        with counter_module.FlopCounterMode(display=False) as counter:
            out = (x @ w).sum()
        out.backward()
        first = counter.get_total_flops()
        with counter:
            (x @ w).sum().backward()
        return first, counter.get_total_flops()

    assert program_outside(ember) == program_outside(torch)


class _CapturedTable(types.ModuleType):
    """Stands in for the tabulate package torch's get_table imports: keeps the rows it is given."""

    PRESERVE_WHITESPACE = False

    def __init__(self):
        super().__init__("tabulate")
        self.rows = None

    def tabulate(self, rows, headers=(), colalign=()):
        self.rows = rows
        return ""


@pytest.mark.parametrize("depth", [None, 1, 2, 3])
def test_table_rows_as_torch(monkeypatch, depth):
    captured = _CapturedTable()
    monkeypatch.setitem(sys.modules, "tabulate", captured)

    def rows(lib):
        counter_module = torch_flops if lib is torch else ember_flops
        with counter_module.FlopCounterMode(display=False, depth=2) as counter:
            model = mlp(lib)
            model(leaf(lib, (4, 6))).sum().backward()
            leaf(lib, (3, 4)) @ leaf(lib, (4, 4))  # outside any module: Global exceeds every module
        if lib is torch:
            counter.get_table(depth)
            return captured.rows
        assert counter.get_table(depth).splitlines()[0].split() == ["Module", "FLOP", "%", "Total"]
        return counter._table_rows(counter.depth if depth is None else depth)

    assert rows(ember) == rows(torch)


def test_empty_table_as_torch(monkeypatch):
    captured = _CapturedTable()
    monkeypatch.setitem(sys.modules, "tabulate", captured)
    with torch_flops.FlopCounterMode(display=False) as counter:
        pass
    counter.get_table()
    with ember_flops.FlopCounterMode(display=False) as counter:
        pass
    assert counter._table_rows(counter.depth) == captured.rows


def test_display_prints_the_table_on_exit(capsys):
    with ember_flops.FlopCounterMode():
        ember.ones(2, 3) @ ember.ones(3, 4)
    assert "aten.mm" in capsys.readouterr().out


def test_custom_ops_counted_with_registered_formulas_and_custom_mapping():
    def program(lib):
        library = lib.library
        namespace = "flop_test_" + lib.__name__

        @library.custom_op(f"{namespace}::double_it", mutates_args=())
        def double_it(x: lib.Tensor) -> lib.Tensor:
            return x * 2

        @library.custom_op(f"{namespace}::triple_it", mutates_args=())
        def triple_it(x: lib.Tensor) -> lib.Tensor:
            return x * 3

        counter_module = torch_flops if lib is torch else ember_flops
        ops = getattr(lib.ops, namespace)

        @counter_module.register_flop_formula(ops.double_it)
        def double_flop(x_shape, out_shape=None, **kwargs):
            return x_shape[0] * 10 + out_shape[1]

        mapping = {ops.triple_it: lambda x_shape, out_shape=None, **kwargs: 7 * x_shape[0]}
        with counter_module.FlopCounterMode(display=False, custom_mapping=mapping) as counter:
            double_it(lib.ones(3, 4))
            ops.double_it(lib.ones(2, 5))
            triple_it(lib.ones(6, 1))
        with pytest.raises(RuntimeError, match="duplicate registrations"):
            counter_module.register_flop_formula(ops.double_it)(double_flop)
        return {module: {str(op).split(".")[-1]: n for op, n in c.items()} for module, c in
                counter.get_flop_counts().items()}

    assert program(ember) == program(torch)


def test_mods_argument_warns_as_torch():
    with pytest.warns(UserWarning, match="mods argument is not needed"):
        ember_flops.FlopCounterMode(ember.nn.Linear(2, 2))


def test_register_flop_formula_refuses_a_plain_function():
    with pytest.raises(ValueError, match="OpOverloadPacket"):
        ember_flops.register_flop_formula(ember.matmul)(lambda *a, **k: 0)


def test_reached_as_an_attribute_of_utils():
    assert ember.utils.flop_counter.FlopCounterMode is ember_flops.FlopCounterMode


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),  # a batch label
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ijk,jl->il", [(2, 3, 4), (3, 5)]),  # k summed out of one operand before the product
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("i,j->ij", [(2,), (3,)]),  # nothing summed: a broadcast multiplication, no product
    ("iij,jk", [(3, 3, 4), (4, 2)]),  # a diagonal; implicit output
    ("...ij,...jk", [(2, 1, 2, 3), (5, 3, 4)]),  # broadcast ellipsis dims
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 6)]),
    ("bi,bj,bk->bijk", [(2, 3), (2, 4), (2, 5)]),  # b stays a batch label until the last product
    ("ij,jk,ki->", [(2, 3), (3, 4), (4, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
]


def test_einsum_contracts_as_torch_without_opt_einsum():
    """torch takes opt_einsum's order only where that package is installed, and these counts follow its left to
    right order: where this fails, torch found opt_einsum."""
    assert not torch.backends.opt_einsum.is_available()


@pytest.mark.parametrize("equation,shapes", EINSUM_CASES, ids=[case[0] for case in EINSUM_CASES])
def test_einsum_counts_the_batched_products_torch_contracts_it_with(equation, shapes):
    for grads in itertools.product((False, True), repeat=len(shapes)):
        def program(lib):
            forward_backward(lib, lib.einsum(equation, *[leaf(lib, s, g) for s, g in zip(shapes, grads)]))

        assert_same_counts(program)


def test_einsum_in_sublist_and_list_forms_and_per_module():
    def program(lib):
        a, b, c = leaf(lib, (2, 3), True), leaf(lib, (3, 4), True), leaf(lib, (4, 5))
        forward_backward(lib, lib.einsum(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3]))
        forward_backward(lib, lib.einsum("ij,jk->ik", [a, b]))

        class Contract(lib.nn.Module):
            def forward(self, x, y):
                return lib.einsum("bij,bjk->bik", x, y)

        model = lib.nn.Sequential(lib.nn.Linear(4, 4).double(), lib.nn.Sequential(lib.nn.Identity()))
        x = model(leaf(lib, (2, 3, 4), True))
        forward_backward(lib, Contract()(x, leaf(lib, (2, 4, 6))))

    assert_same_counts(program)


def attention_inputs(lib, kind: str, batch_first: bool, grad: bool, kdim=8, vdim=8):
    """query, key and value of a MultiheadAttention of embed_dim 8: one tensor ("self"), a key that is the value
    ("kv"), three tensors ("qkv"), or three unbatched ones. Queries are 5 long, keys 4 (5 for self-attention)."""
    def sequence(length, features, requires_grad=False):
        if kind == "unbatched":
            return leaf(lib, (length, features), requires_grad)
        return leaf(lib, (3, length, features) if batch_first else (length, 3, features), requires_grad)

    query = sequence(5, 8, grad)
    if kind == "self":
        return query, query, query
    key = sequence(4, kdim)
    return query, key, (key if kind == "kv" and kdim == vdim else sequence(4, vdim))


def padding_and_mask(lib, kind: str, mask: str | None, source: int) -> dict:
    if mask == "attn":
        return {"attn_mask": lib.zeros(5, source, dtype=lib.bool)}
    if mask == "padding":
        return {"key_padding_mask": lib.zeros(*(() if kind == "unbatched" else (3,)), source, dtype=lib.bool)}
    return {}


MHA_OPTIONS = [dict(), dict(bias=False), dict(kdim=6, vdim=5), dict(add_bias_kv=True), dict(add_zero_attn=True),
               dict(dropout=0.5)]


@pytest.mark.parametrize("options", MHA_OPTIONS, ids=str)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_forward_and_backward_per_module(options, batch_first, need_weights):
    kinds = ("qkv", "unbatched") if "kdim" in options else ("self", "kv", "qkv", "unbatched")
    trains = (False, True) if "dropout" in options else (True,)  # training only matters with dropout
    for kind, grad, mask, train in itertools.product(kinds, (False, True), (None, "attn", "padding"), trains):
        def program(lib):
            module = lib.nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=lib.float64, **options)
            module.train(train)
            query, key, value = attention_inputs(lib, kind, batch_first, grad, options.get("kdim", 8),
                                                 options.get("vdim", 8))
            source = 5 if kind == "self" else 4
            out, _ = module(query, key, value, need_weights=need_weights,
                            **padding_and_mask(lib, kind, mask, source))
            forward_backward(lib, out)

        assert_same_counts(program)


def test_multi_head_attention_forward_called_directly():
    def program(lib):
        F = lib.nn.functional
        query, key = leaf(lib, (5, 3, 8), True), leaf(lib, (4, 3, 8))
        in_weight, out_weight = leaf(lib, (24, 8), True), leaf(lib, (8, 8), True)
        for need_weights, bias in itertools.product((False, True), (None, leaf(lib, (24,), True))):
            out, _ = F.multi_head_attention_forward(query, key, key, 8, 4, in_weight, bias, None, None, False, 0.0,
                                                    out_weight, None if bias is None else bias[:8],
                                                    need_weights=need_weights)
            forward_backward(lib, out)
        static = leaf(lib, (12, 6, 2), True)
        out, _ = F.multi_head_attention_forward(query, key, key, 8, 4, in_weight, None, None, None, False, 0.0,
                                                out_weight, None, static_k=static, static_v=static)
        forward_backward(lib, out)

    assert_same_counts(program)
