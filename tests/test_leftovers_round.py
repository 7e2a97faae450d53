"""Twin tests (ember against torch) for a round of small differences: the base Function's apply, the structseq
behaviour of ``return_types``, Python ints beyond 64 bits, the strides of channels-last reductions and of
gradients, ``get_ignored_functions``, the edges of renamed composite nodes and batched ``autograd.grad``."""
import math
import pickle

import pytest
import torch

import ember
from tests.autograd.test_batched_gradcheck import with_generated_vmap_rule, with_vmap_staticmethod, \
    without_vmap_support
from tests.test_overrides import spying_subclass
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


# ----------------------------------------------------------------- autograd.grad(is_grads_batched=True)

def _doubling(formula):
    """``2 * a`` as an ember custom Function whose backward is ``formula``."""

    class Doubling(ember.autograd.Function):
        backward = staticmethod(formula)

        @staticmethod
        def forward(ctx, a):
            return a * 2

    return Doubling


_GRAPHS = {
    "matmul": lambda lib, x, w: x @ w,
    "pointwise": lambda lib, x, w: x.sin() * x.exp() + x / (1 + x * x),
    "reductions": lambda lib, x, w: x.sum(1) + x.amax(0).sum() + (x * x).mean(),
    "custom": lambda lib, x, w: without_vmap_support(lib).apply(x.sin()) @ w,
    "custom_with_rule": lambda lib, x, w: with_generated_vmap_rule(lib).apply(x).tanh(),
    "custom_with_vmap_staticmethod": lambda lib, x, w: with_vmap_staticmethod(lib).apply(x) * x,
    "two_outputs": lambda lib, x, w: (x @ w, x.cos()),
}


def _leaves(lib):
    x = lib.tensor([[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 1.0], [-2.0, 0.3, 0.9, -1.2]], dtype=lib.float64,
                   requires_grad=True)
    w = lib.linspace(-1.0, 1.0, 20, dtype=lib.float64).reshape(4, 5).requires_grad_()
    return x, w


def _batched_grad_outputs(lib, outputs: tuple, size: int = 3) -> tuple:
    return tuple(lib.linspace(-2.0, 3.0, size * y.numel(), dtype=lib.float64).reshape((size,) + tuple(y.shape))
                 for y in outputs)


@pytest.mark.parametrize("graph", list(_GRAPHS))
def test_grad_with_batched_grad_outputs(graph):
    def program(lib):
        x, w = _leaves(lib)
        ys = _GRAPHS[graph](lib, x, w)
        ys = ys if isinstance(ys, tuple) else (ys,)
        return lib.autograd.grad(ys, (x, w), _batched_grad_outputs(lib, ys), is_grads_batched=True,
                                 allow_unused=True, materialize_grads=graph == "pointwise")

    both(program)


@pytest.mark.parametrize("graph", ["matmul", "pointwise", "custom", "custom_with_rule"])
def test_grad_with_batched_grad_outputs_and_create_graph(graph):
    def program(lib):
        x, w = _leaves(lib)
        (y,) = (_GRAPHS[graph](lib, x, w),)
        (v,) = _batched_grad_outputs(lib, (y,))
        gx, gw = lib.autograd.grad(y, (x, w), v, is_grads_batched=True, create_graph=True, materialize_grads=True)
        second = lib.autograd.grad((gx * gx).sum() + gw.sin().sum(), (x, w), allow_unused=True)
        return gx.requires_grad, gx, gw, second

    both(program)


def test_batched_grad_runs_one_backward_per_node():
    calls = []

    def counted(ctx, grad):
        calls.append(grad.shape)
        return grad * 2

    x = ember.ones(3, requires_grad=True)
    (g,) = ember.autograd.grad(_doubling(counted).apply(x), x, ember.eye(3), is_grads_batched=True)
    assert len(calls) == 1 and tuple(g.shape) == (3, 3)


def test_batched_grad_falls_back_to_one_backward_per_entry_with_a_warning():
    """A formula that cannot run batched (here: it leaves ember for NumPy) makes the pass fall back; the graph,
    not freed by the failed pass, gives each entry's gradient, as torch's per-entry backward gives them."""
    through_numpy = _doubling(lambda ctx, grad: ember.tensor(grad.detach().numpy() * 2))
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    y = (through_numpy.apply(x) * x).sin()
    v = ember.tensor([[1.0, 0.0, 0.5], [0.0, 2.0, 1.0]], dtype=ember.float64)
    with pytest.warns(UserWarning, match="performance drop"):
        (g,) = ember.autograd.grad(y, x, v, is_grads_batched=True)

    xt = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    yt = (xt * 2 * xt).sin()
    expected = torch.stack([torch.autograd.grad(yt, xt, row, retain_graph=True)[0]
                            for row in torch.tensor(v.numpy())])
    assert torch.allclose(torch.tensor(g.numpy()), expected)
    with pytest.raises(RuntimeError, match="second time"):  # the last entry's backward freed the graph
        ember.autograd.grad(y, x, v[0])


def test_batched_grad_frees_the_graph_unless_retained():
    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x.exp() * x
        lib.autograd.grad(y, x, lib.eye(2, dtype=lib.float64), is_grads_batched=True)
        lib.autograd.grad(y, x, lib.ones(2, dtype=lib.float64))

    both_raise(program, RuntimeError, "second time")


# ----------------------------------------------------------------- layouts of reductions and of create_graph's .grad

_KEPT_REDUCTIONS = {
    "sum": lambda t, dims: t.sum(dims, keepdim=True), "mean": lambda t, dims: t.mean(dims, keepdim=True),
    "amax": lambda t, dims: t.amax(dims, keepdim=True), "amin": lambda t, dims: t.amin(dims, keepdim=True),
    "all": lambda t, dims: (t > 3).all(dims, keepdim=True), "any": lambda t, dims: (t > 3).any(dims, keepdim=True),
    "aminmax": lambda t, dims: t.aminmax(dim=dims[0], keepdim=True)[0],
    "half_sum": lambda t, dims: t.half().sum(dims, keepdim=True),
    "int_sum": lambda t, dims: t.long().sum(dims, keepdim=True),
}


@pytest.mark.parametrize("op", list(_KEPT_REDUCTIONS))
@pytest.mark.parametrize("dims", [(1,), (2, 3), (1, 2, 3), (0,), (3,), (0, 3)])
@pytest.mark.parametrize("layout", ["channels_last", "permuted"])
def test_kept_reduction_is_laid_out_row_major(op, dims, layout):
    if op == "aminmax" and len(dims) > 1:
        pytest.skip("aminmax takes one dim")

    def program(lib):
        x = lib.arange(120.0).reshape(2, 3, 4, 5)
        x = x.to(memory_format=lib.channels_last) if layout == "channels_last" else x.permute(3, 1, 0, 2)
        result = _KEPT_REDUCTIONS[op](x, dims)
        return result.stride(), result

    both(program)


_LOSSES = {
    "sum": lambda lib, t: t.sum(),
    "square": lambda lib, t: (t * t).sum(),
    "conv": lambda lib, t: lib.nn.functional.conv2d(t, lib.ones(2, 3, 1, 1, dtype=lib.float64)).sum(),
    "through_a_permute": lambda lib, t: (t.permute(0, 2, 3, 1).contiguous() * t.permute(0, 2, 3, 1)).sum(),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # create_graph's warning of a reference cycle
@pytest.mark.parametrize("loss", list(_LOSSES))
@pytest.mark.parametrize("channels_last", [True, False])
def test_create_graph_gradient_is_laid_out_as_its_leaf(loss, channels_last):
    def program(lib):
        x = lib.linspace(-1.0, 1.0, 120, dtype=lib.float64).reshape(2, 3, 4, 5)
        x = (x.to(memory_format=lib.channels_last) if channels_last else x).requires_grad_()
        _LOSSES[loss](lib, x).backward(create_graph=True)
        return x.grad.stride(), x.grad

    both(program)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_create_graph_gradient_in_the_leafs_layout_stays_differentiable():
    def program(lib):
        x = lib.linspace(-1.0, 1.0, 12, dtype=lib.float64).reshape(4, 3).t().requires_grad_()
        (x.sin() * 3).sum().backward(create_graph=True)
        (second,) = lib.autograd.grad(x.grad.sum(), x)
        return x.grad.stride(), x.grad.requires_grad, second

    both(program)


# ----------------------------------------------------------------- overrides.get_ignored_functions

# torch lists these as ignored, but in ember they dispatch: each takes a tensor (or is a method) whose handler
# is called, so listing them would be wrong
_DISPATCHING_IN_EMBER = {
    "as_strided", "broadcast_shapes", "empty_permuted", "empty_quantized", "fill", "rand_like", "randint_like",
    "randn_like", "result_type", "sparse_bsc_tensor", "sparse_bsr_tensor", "sparse_compressed_tensor",
    "sparse_coo_tensor", "sparse_csc_tensor", "sparse_csr_tensor", "tril_indices", "triu_indices", "vander", "eig",
    "lstsq", "new", "new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros",
    "reinforce", "solve", "stride", "symeig", "to_sparse_bsc", "to_sparse_bsr", "to_sparse_coo", "to_sparse_csc",
    "to_sparse_csr", "unflatten", "fftfreq", "rfftfreq", "grouped_mm", "hardsigmoid", "hardswish", "sigmoid",
    "tanh", "upsample", "upsample_bilinear", "upsample_nearest",
}
_NAMESPACES = ((torch, ember), (torch.Tensor, ember.Tensor), (torch.nn.functional, ember.nn.functional),
               (torch.fft, ember.fft), (torch.linalg, ember.linalg), (torch.special, ember.special))


def _torch_ignored_by_name() -> list:
    """(ember's namespace, name) of each function of torch's ignored list found under its name in a namespace."""
    ignored = torch.overrides.get_ignored_functions()
    found = []
    for theirs, mine in _NAMESPACES:
        for name in dir(theirs):
            value = getattr(theirs, name, None)
            try:
                if value in ignored:
                    found.append((mine, name))
            except TypeError:  # an unhashable attribute is no function of the list
                pass
    return found


def test_ignored_functions_cover_torchs_where_ember_has_them():
    ignored = ember.overrides.get_ignored_functions()
    missing = [(namespace.__name__, name) for namespace, name in _torch_ignored_by_name()
               if hasattr(namespace, name) and name not in _DISPATCHING_IN_EMBER
               and getattr(namespace, name) not in ignored]
    assert not missing


def test_ignored_functions_do_not_dispatch():
    ignored = ember.overrides.get_ignored_functions()
    overridable = {f for funcs in ember.overrides.get_overridable_functions().values() for f in funcs}
    assert not ignored & overridable
    assert not ignored & set(ember.overrides.get_testing_overrides())
    seen = []
    Spy = spying_subclass(ember, seen)
    x = ember.ones(2).as_subclass(Spy)
    seen.clear()
    taken = (ember.is_tensor(x), ember.typename(x), ember.is_storage(x), hash(x), dir(x) and None,
             ember.nn.functional.has_torch_function((x,)))
    # (typename asks the tensor's own type method, which dispatches, as torch's typename does)
    assert taken[:2] == (True, "ember.FloatTensor") and seen == ["ember.Tensor.type"]


# ----------------------------------------------------------------- next_functions of composite ops' renamed nodes

def _edge_names(node, depth: int = 2):
    """The names along next_functions, ``depth`` levels down (torch's C++ nodes without their namespace)."""
    if node is None:
        return None
    name = type(node).__name__.replace("torch::autograd::", "")
    if depth == 0:
        return name
    return name, [(_edge_names(child, depth - 1), nr) for child, nr in node.next_functions]


def _grad_leaf(lib, *shape):
    return (lib.linspace(-1.0, 1.0, math.prod(shape), dtype=lib.float64).reshape(*shape) + 0.1).requires_grad_()


_COMPOSITES = {
    "silu": lambda lib, F: F.silu(_grad_leaf(lib, 3, 4)),
    "mish": lambda lib, F: F.mish(_grad_leaf(lib, 3, 4) * 2),
    "glu": lambda lib, F: F.glu(_grad_leaf(lib, 3, 4)),
    "dist": lambda lib, F: lib.dist(_grad_leaf(lib, 3, 4), lib.ones(3, 4, dtype=lib.float64)),
    "dist_of_two": lambda lib, F: lib.dist(_grad_leaf(lib, 3, 4), _grad_leaf(lib, 3, 4).exp()),
    "avg_pool2d": lambda lib, F: F.avg_pool2d(_grad_leaf(lib, 1, 2, 4, 4), 2),
    "adaptive_avg_pool2d": lambda lib, F: F.adaptive_avg_pool2d(_grad_leaf(lib, 1, 2, 4, 4), 3),
    "adaptive_max_pool2d": lambda lib, F: F.adaptive_max_pool2d(_grad_leaf(lib, 1, 2, 4, 4), 3),
    "reflection_pad": lambda lib, F: F.pad(_grad_leaf(lib, 1, 2, 4, 4), (1, 1, 1, 1), mode="reflect"),
    "unfold": lambda lib, F: F.unfold(_grad_leaf(lib, 1, 2, 4, 4), 2),
    "fold": lambda lib, F: F.fold(_grad_leaf(lib, 1, 8, 9), (4, 4), 2),
    "interpolate": lambda lib, F: F.interpolate(_grad_leaf(lib, 1, 2, 4, 4), scale_factor=2, mode="bilinear"),
    "pixel_shuffle": lambda lib, F: F.pixel_shuffle(_grad_leaf(lib, 1, 4, 2, 2), 2),
    "pixel_unshuffle": lambda lib, F: F.pixel_unshuffle(_grad_leaf(lib, 1, 2, 4, 4), 2),
    "channel_shuffle": lambda lib, F: F.channel_shuffle(_grad_leaf(lib, 1, 4, 2, 2), 2),
    "affine_grid": lambda lib, F: F.affine_grid(_grad_leaf(lib, 1, 2, 3), (1, 1, 2, 2), align_corners=False),
    "grid_sample": lambda lib, F: F.grid_sample(_grad_leaf(lib, 1, 2, 4, 4), _grad_leaf(lib, 1, 2, 2, 2) * 0.5,
                                                align_corners=False),
    "batch_norm": lambda lib, F: F.batch_norm(_grad_leaf(lib, 2, 2, 3), None, None, training=True),
    "batch_norm_affine": lambda lib, F: F.batch_norm(_grad_leaf(lib, 2, 2, 3), None, None, _grad_leaf(lib, 2),
                                                     _grad_leaf(lib, 2), training=True),
    "layer_norm": lambda lib, F: F.layer_norm(_grad_leaf(lib, 3, 4), (4,)),
    "layer_norm_with_weight": lambda lib, F: F.layer_norm(_grad_leaf(lib, 3, 4), (4,), _grad_leaf(lib, 4)),
    "group_norm": lambda lib, F: F.group_norm(_grad_leaf(lib, 2, 4, 3), 2),
    "soft_margin_loss": lambda lib, F: F.soft_margin_loss(_grad_leaf(lib, 3, 4), lib.ones(3, 4, dtype=lib.float64)),
    "multi_margin_loss": lambda lib, F: F.multi_margin_loss(_grad_leaf(lib, 3, 4), lib.tensor([0, 1, 2])),
    "multilabel_margin_loss": lambda lib, F: F.multilabel_margin_loss(_grad_leaf(lib, 3, 4),
                                                                      lib.tensor([[0, 1, -1, 0]] * 3)),
    "block_diag": lambda lib, F: lib.block_diag(_grad_leaf(lib, 2, 2), lib.ones(1, 2), _grad_leaf(lib, 1, 3)),
    "renorm": lambda lib, F: lib.renorm(_grad_leaf(lib, 3, 4), 2, 0, 1.0),
    "var": lambda lib, F: _grad_leaf(lib, 3, 4).var(),
    "mean_of_a_dim": lambda lib, F: _grad_leaf(lib, 3, 4).mean(1),
    "norm": lambda lib, F: _grad_leaf(lib, 3, 4).norm(),
    "linear": lambda lib, F: F.linear(_grad_leaf(lib, 3, 4), _grad_leaf(lib, 5, 4), _grad_leaf(lib, 5)),
}


@pytest.mark.parametrize("op", list(_COMPOSITES))
def test_composite_node_lists_its_own_arguments(op):
    def program(lib):
        result = _COMPOSITES[op](lib, lib.nn.functional)
        return _edge_names((result[0] if isinstance(result, tuple) else result).grad_fn)

    both(program)


def test_a_renamed_node_still_runs_backward_and_hooks_through_its_recorded_edges():
    x = ember.linspace(-1.0, 1.0, 6, dtype=ember.float64).reshape(2, 3).requires_grad_()
    y = ember.nn.functional.silu(x)
    seen = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(len(grad_inputs)))
    y.sum().backward()
    assert seen == [len(y.grad_fn._recorded_next_functions())] and len(y.grad_fn.next_functions) == 1
    assert ember.autograd.gradcheck(ember.nn.functional.silu, (x,))
