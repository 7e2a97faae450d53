"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>`` against torch's: the names, the values, the hooks.

For every differentiable row of the op table (tests/op_table.py), each sample is called in both libraries
(float64, inputs requiring grad) and the result's node must show torch's ``_saved_`` and ``_raw_saved_`` names
with torch's values: a saved input is that very input, a saved output or intermediate has torch's values, a
number, tuple or flag is equal. The rows whose ops do not yet name what they saved as torch does are listed in
``UNDECLARED``; each of them must still differ (the list only shrinks).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from op_table import OPS
from test_ops import inputs_for

NOT_YET = "the op's Function does not yet name what it saved in torch's vocabulary"
COMPOSITE = "ember composes the op of others: its node is the last of them, renamed, and saved what that one did"
OTHER_NODE = ("ember's graph for the op ends in another node than torch's, or in the same node on other shapes, "
              "which saved other things")
NUMBER = "ember keeps a number operand as the number, where torch saves it as a 0-d tensor"
NORMALISED = "ember keeps an argument as it normalised it (rot90's k modulo 4, logsumexp's dim=()) where torch keeps it"
# Row name -> why its node does not show torch's saved names yet (the rows of each reason, as words).
_NOT_YET_ROWS = """
    mul div_trunc div_floor pow rdiv_scalar rdiv_scalar_inexact rpow_scalar rmul_scalar rpow_complex_base
    mul_operator pow_operator squeeze narrow getitem index_put sgn erfinv xlogy special_erfcx special_erfinv
    special_i0e special_i1 special_i1e special_zeta special_xlogy special_xlog1py divide_floor multiply
    float_power float_power_number_first nextafter frexp_mantissa copysign nan_to_num nan_to_num_special lerp
    max_dim min_dim aminmax_min aminmax_max nansum var std var_mean_0 var_mean_1 std_mean_0 std_mean_1
    cummax_values cummin_values sort sort_ties sort_ties_dim0 msort_ties msort topk topk_unsorted topk_ties
    topk_ties_dim0 kthvalue kthvalue_ties kthvalue_ties_dim0 median_dim median_ties median_ties_dim0
    nanmedian_ties nanmedian_dim nanmedian_nan median_nan mode mode_ties mode_ties_dim0 split split_method chunk
    tensor_split hsplit vsplit dsplit repeat_interleave roll diag diag_embed diagflat as_strided
    as_strided_of_a_view unfold squeeze_form as_strided_form gather scatter_reduce_sum_with_self
    scatter_reduce_sum_without_self scatter_reduce_prod_with_self scatter_reduce_prod_without_self
    scatter_reduce_mean_with_self scatter_reduce_mean_without_self scatter_reduce_amax_with_self
    scatter_reduce_amax_without_self scatter_reduce_amin_with_self scatter_reduce_amin_without_self index_add
    index_copy index_fill index_reduce_prod_with_self index_reduce_prod_without_self index_reduce_mean_with_self
    index_reduce_mean_without_self index_reduce_amax_with_self index_reduce_amax_without_self
    index_reduce_amin_with_self index_reduce_amin_without_self masked_scatter masked_select take put
    take_along_dim select_scatter slice_scatter diagonal_scatter addmv addr baddbmm addbmm addbmm_inplace cross
    linalg_cross linalg_inv linalg_inv_direct linalg_inv_ex inverse linalg_det linalg_det_direct det
    linalg_slogdet slogdet linalg_solve linalg_solve_ex linalg_cholesky linalg_cholesky_ex linalg_qr_Q
    linalg_qr_R linalg_svd_S linalg_eigh_values linalg_eigvalsh linalg_pinv linalg_pinv_hermitian pinverse
    linalg_lstsq linalg_matrix_power linalg_matrix_power_negative matrix_power linalg_solve_triangular
    cholesky_solve cholesky_inverse linalg_lu_factor linalg_lu_factor_ex linalg_lu_solve lu_solve
    linalg_householder_product orgqr angle binary_cross_entropy_with_logits nll_loss max_pool2d F_softshrink
    F_hardshrink F_threshold F_logsigmoid F_layer_norm
"""
_NUMBER_ROWS = """
    div rdiv_complex_scalar mul_complex_scalar div_operator divide true_divide
"""
_OTHER_NODE_ROWS = """
    special_ndtr quantile_linear quantile_linear_q quantile_lower quantile_lower_q quantile_higher
    quantile_higher_q quantile_midpoint quantile_midpoint_q quantile_nearest quantile_nearest_q quantile_ties
    nanquantile_linear nanquantile_linear_q nanquantile_lower nanquantile_lower_q nanquantile_higher
    nanquantile_higher_q nanquantile_midpoint nanquantile_midpoint_q nanquantile_nearest nanquantile_nearest_q
    nanquantile_ties nanquantile_nan quantile_nan inner tensordot einsum_mm einsum_batch einsum_diagonal
    einsum_three einsum_ellipsis einsum_sum einsum_sublist linalg_svd_vectors linalg_svd_Vh svd
    linalg_eigh_vectors linalg_cond linalg_lu_L linalg_lu_U lu_unpack triangular_solve trapezoid trapz
    cumulative_trapezoid trapezoid_empty pdist kl_div F_rms_norm F_group_norm
"""
_COMPOSITE_ROWS = """
    special_multigammaln mvlgamma dist renorm frobenius_norm soft_margin_loss cross_entropy pairwise_distance
    pad_reflect pad_constant nn_unfold avg_pool2d adaptive_avg_pool2d F_silu F_mish F_glu
"""
_NORMALISED_ROWS = """
    logsumexp rot90
"""
UNDECLARED: dict = {}
for _rows, _reason in ((_NOT_YET_ROWS, NOT_YET), (_NUMBER_ROWS, NUMBER), (_OTHER_NODE_ROWS, OTHER_NODE),
                       (_COMPOSITE_ROWS, COMPOSITE), (_NORMALISED_ROWS, NORMALISED)):
    UNDECLARED.update(dict.fromkeys(_rows.split(), _reason))

# Row name -> (the samples whose saved values differ from torch's, why); the row's other samples must match.
FROM_NUMPY_STRIDES = ("torch.from_numpy keeps NumPy's strides of an empty array, (0, 0), and torch's node saves them; "
                      "ember's stride() of that tensor gives contiguous ones")
DIM_AS_GIVEN = "torch saves the dim argument as given (None, or 0 of a 0-d tensor); ember keeps the dims it reduced"
SQUEEZE_DIM = "its last node is squeeze over a dim, which does not yet keep the dim (unbatched input)"
DIFFERING_SAMPLES: dict = {
    "conv1d": ((3,), SQUEEZE_DIM),
    "sum": ((6, 12), DIM_AS_GIVEN), "mean": ((6, 11), DIM_AS_GIVEN),
    "mm": ((2, 3), FROM_NUMPY_STRIDES), "matmul": ((10,), FROM_NUMPY_STRIDES), "addmm": ((4, 6), FROM_NUMPY_STRIDES),
}

ROWS = [pytest.param(spec, id=spec.name) for spec in OPS if spec.differentiable]


def saved_names(node) -> set:
    return {name for name in dir(node) if name.startswith(("_saved_", "_raw_saved_"))}


def _node_of(result):
    for value in result if isinstance(result, (tuple, list)) else (result,):
        if getattr(value, "grad_fn", None) is not None:
            return value.grad_fn
    return None


def _tensors_in(values) -> list:
    found = []
    for value in values:
        if isinstance(value, (tuple, list)):
            found.extend(_tensors_in(value))
        elif isinstance(value, (torch.Tensor, ember.Tensor)):
            found.append(value)
    return found


def _differences(spec, index: int) -> list:
    """What differs between ember's node and torch's for one sample: names, then each name's value."""
    inputs = inputs_for(spec, index, "float64")
    found = {}
    for lib in (ember, torch):
        args, kwargs, _ = inputs.build(lib, requires_grad=True)
        result = spec.fn(lib, *args, **kwargs)
        found[lib] = (_node_of(result), _tensors_in(args) + _tensors_in(kwargs.values()))
    (node, ember_args), (torch_node, torch_args) = found[ember], found[torch]
    if torch_node is None or node is None:
        return []
    names, torch_names = saved_names(node), saved_names(torch_node)
    if names != torch_names:
        return [f"sample {index}: names {sorted(names ^ torch_names)} differ (torch: {sorted(torch_names)})"]
    return [
        f"sample {index}: {name} is {got!r}, torch's {expected!r}"
        for name in sorted(names) if name.startswith("_saved_")
        for got, expected in [(getattr(node, name), getattr(torch_node, name))]
        if not _same(got, expected, ember_args, torch_args)
    ]


def _same(got, expected, ember_args: list, torch_args: list) -> bool:
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, ember.Tensor):
            return False
        for ember_arg, torch_arg in zip(ember_args, torch_args):
            if expected is torch_arg:
                return got is ember_arg
        return (got.shape == expected.shape and _dtype_name(got.dtype) == _dtype_name(expected.dtype)
                and np.allclose(got.detach().numpy(), expected.detach().numpy(), equal_nan=True))
    if isinstance(expected, (tuple, list)):
        return (isinstance(got, type(expected)) and len(got) == len(expected)
                and all(_same(g, e, ember_args, torch_args) for g, e in zip(got, expected)))
    if isinstance(expected, torch.dtype):
        return _dtype_name(got) == _dtype_name(expected)
    if type(expected) is int and expected >= 2 ** 63:
        # torch shows a negative int argument (dim=-1) as the unsigned 2**64 - 1; ember shows it as it is or, where
        # it keeps the dim only as it normalised it against a shape not known here, as any dim it could be
        return type(got) is int and (got >= 0 or got == expected - 2 ** 64)
    if isinstance(expected, (int, float)) and type(expected) is not bool:
        # torch gives a saved number (a Scalar) back as an int or a float by how it reached the op (relu6's 6);
        # its value is what is compared
        return isinstance(got, (int, float)) and type(got) is not bool and got == expected
    return type(got) is type(expected) and got == expected


def _dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


@pytest.mark.parametrize("spec", ROWS)
def test_saved_attributes_are_torchs(spec):
    differences = {i: _differences(spec, i) for i in range(len(spec.samples))}
    if spec.name in UNDECLARED:
        assert any(differences.values()), f"{spec.name} now shows torch's saved names and values: off UNDECLARED"
        return
    differing, _ = DIFFERING_SAMPLES.get(spec.name, ((), None))
    for i, found in differences.items():
        if i in differing:
            assert found, f"{spec.name} sample {i} now shows torch's saved values: take it off DIFFERING_SAMPLES"
        else:
            assert not found, "\n".join(found)


# ----------------------------------------------------------------- the attributes themselves, beside torch's


def _both(make):
    """make(lib, x) for a fresh x of each library with the same values: {lib: (x, y)}."""
    values = np.random.default_rng(0).uniform(0.5, 2.0, 5)
    out = {}
    for lib in (ember, torch):
        x = lib.tensor(values, requires_grad=True)
        out[lib] = (x, make(lib, x))
    return out


def test_a_saved_input_is_the_input_and_a_saved_output_a_new_tensor_on_its_memory():
    for lib, (x, y) in _both(lambda lib, x: x.pow(2)).items():
        assert y.grad_fn._saved_self is x, lib
        assert y.grad_fn._saved_exponent == 2 and type(y.grad_fn._saved_exponent) is int
    for lib, (x, y) in _both(lambda lib, x: x.exp()).items():
        result = y.grad_fn._saved_result
        assert result is not y and result.equal(y) and result.grad_fn is y.grad_fn, lib
        result.detach()[0] = 7.0  # the same memory
        assert y[0].item() == 7.0


def _outcome(action):
    try:
        return ("value", action())
    except Exception as error:  # noqa: BLE001 (the type and message are what is compared)
        return (type(error), str(error))


def test_after_backward_the_saved_tensors_are_gone_unless_the_graph_is_retained():
    for retain in (False, True):
        outcomes = {}
        for lib, (x, y) in _both(lambda lib, x: x.pow(2)).items():
            node, total = y.grad_fn, y.sum()
            total.backward(retain_graph=retain)
            outcomes[lib] = [_outcome(lambda: node._saved_self is x),
                             _outcome(lambda: total.grad_fn._saved_self_sym_sizes),
                             _outcome(lambda: node._raw_saved_self.register_hooks(lambda t: t, lambda t: t))]
        assert outcomes[ember] == outcomes[torch], retain


def test_an_unknown_name_is_an_attribute_error_as_torchs():
    outcomes = {lib: _outcome(lambda: y.grad_fn._saved_foo) for lib, (x, y) in _both(lambda lib, x: x.pow(2)).items()}
    assert outcomes[ember] == outcomes[torch]
    assert outcomes[ember][0] is AttributeError
    ember_node = _both(lambda lib, x: x.pow(2))[ember][1].grad_fn
    assert not hasattr(ember_node, "_raw_saved_exponent")  # a number has no SavedTensor


def test_dir_lists_the_saved_names_and_no_helper_of_embers():
    nodes = {lib: y.grad_fn for lib, (x, y) in _both(lambda lib, x: x.pow(2)).items()}
    assert saved_names(nodes[ember]) == saved_names(nodes[torch]) == {
        "_saved_self", "_raw_saved_self", "_saved_exponent"}


def _custom(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return Double


def test_a_users_function_has_no_saved_attributes_as_torchs():
    for lib, (x, y) in _both(lambda lib, x: _custom(lib).apply(x)).items():
        assert not {n for n in dir(y.grad_fn) if n.startswith("_saved_")}, lib
        with pytest.raises(AttributeError, match="_saved_self"):
            y.grad_fn._saved_self
        assert y.grad_fn.saved_tensors[0] is x


def test_a_composite_nodes_renamed_class_shows_no_names_of_the_op_it_ends_in():
    x = ember.randn(1, 1, 4, 4, requires_grad=True)
    node = ember.nn.functional.avg_pool2d(x, 2).grad_fn
    assert node.name() == "AvgPool2DBackward0"
    inherited = type(node).__mro__[1]._torch_saved
    assert inherited  # the op it ends in names what it saved ...
    assert not saved_names(node)  # ... which the node, renamed, does not show
    for name in inherited:
        with pytest.raises(AttributeError, match="AvgPool2DBackward0"):
            getattr(node, "_saved_" + name)


def test_register_hooks_packs_at_once_and_unpacks_when_used():
    logs = {}
    for lib, (x, y) in _both(lambda lib, x: x.pow(3)).items():
        log = logs[lib] = []
        node = y.grad_fn
        node._raw_saved_self.register_hooks(lambda t: (log.append("pack"), t * 2)[1],
                                            lambda t: (log.append("unpack"), t)[1])
        log.append("registered")
        twice = node._saved_self
        log.append(twice is x)
        log.append(np.allclose(twice.detach().numpy(), 2 * x.detach().numpy()))
        y.sum().backward()
        log.append(np.round(x.grad.numpy(), 10).tolist())  # the gradient saw the unpacked tensor, 2x
    assert logs[ember] == logs[torch]
    assert logs[ember][:2] == ["pack", "registered"]


def test_register_hooks_errors_are_torchs():
    cases = {
        "twice": lambda lib, node: [node._raw_saved_self.register_hooks(lambda t: t, lambda t: t) for _ in "ab"],
        "none": lambda lib, node: node._raw_saved_self.register_hooks(lambda t: t, lambda t: t),
        "not callable": lambda lib, node: node._raw_saved_other.register_hooks(1, lambda t: t),
    }
    for case, action in cases.items():
        outcomes = {}
        for lib, (x, y) in _both(lambda lib, x: x * lib.ones(5)).items():
            outcomes[lib] = _outcome(lambda: action(lib, y.grad_fn))
        assert outcomes[ember][0] is outcomes[torch][0], case
        if outcomes[torch][0] is RuntimeError:
            assert outcomes[ember][1] == outcomes[torch][1], case


def test_register_hooks_on_a_tensor_saved_under_saved_tensors_hooks_raises_as_torchs():
    outcomes = {}
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp()
        outcomes[lib] = _outcome(lambda: y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t))
        outcomes[lib, "read"] = _outcome(lambda: y.grad_fn._saved_result.equal(y))
    assert outcomes[ember] == outcomes[torch] and outcomes[ember][0] is RuntimeError
    assert outcomes[ember, "read"] == outcomes[torch, "read"] == ("value", True)


def test_a_saved_input_changed_in_place_is_refused_when_read_as_torchs():
    outcomes = {}
    for lib in (ember, torch):
        a = lib.ones(3, requires_grad=True).clone()
        y = a.pow(2)
        with lib.no_grad():
            a.add_(1)
        outcomes[lib] = _outcome(lambda: y.grad_fn._saved_self)[0]
    assert outcomes[ember] is outcomes[torch] is RuntimeError
