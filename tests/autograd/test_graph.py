"""ember.autograd.graph: the drawn graph is torch's graph; saved_tensors_hooks and save_on_cpu as torch's."""
import re
import shutil

import pytest
import torch

import ember
from twins import LIBS, both, both_raise


def _program(lib):
    w = lib.linspace(-1, 1, 6).reshape(3, 2).requires_grad_()
    b = lib.linspace(0, 1, 2).requires_grad_()
    x = lib.linspace(-2, 2, 12).reshape(4, 3)
    h = (x @ w + b).tanh()
    return (h * h.sigmoid()).sum(), w, b


def _name(node) -> str:
    return node.name().split("::")[-1]  # torch names its leaf node torch::autograd::AccumulateGrad


def _structure(root) -> list:
    """(node, [its inputs]) for every node reachable from ``root.grad_fn``, breadth first, by name."""
    seen, order, pending = set(), [], [root.grad_fn]
    while pending:
        node = pending.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        inputs = [f for f, _ in node.next_functions if f is not None]
        order.append((_name(node), [_name(f) for f in inputs]))
        pending.extend(inputs)
    return order


def test_the_graph_is_torchs_graph():
    both(lambda lib: _structure(_program(lib)[0]))


def test_dot_has_every_node_edge_leaf_and_saved_shape():
    y, w, b = _program(ember)
    dot = ember.autograd.graph.to_dot(y, params={"weight": w, "bias": b})
    labels = dict(re.findall(r'(n\d+) \[label="([^"]*)"', dot))
    edges = re.findall(r"(n\d+) -> (n\d+);", dot)
    names = [label.split("\\n")[0] for label in labels.values()]
    expected_nodes = [name for name, _ in _structure(y) if name != "AccumulateGrad"]
    assert sorted(n for n in names if n not in ("output", "weight", "bias")) == sorted(expected_nodes)
    assert "weight\\n(3, 2)" in labels.values() and "bias\\n(2,)" in labels.values()
    tanh = next(label for label in labels.values() if label.startswith("TanhBackward0"))
    assert tanh == "TanhBackward0\\nsaved: (4, 2) float32"  # tanh keeps its output
    consumers = {}
    for source, target in edges:
        consumers.setdefault(labels[source].split("\\n")[0], set()).add(labels[target].split("\\n")[0])
    assert consumers["weight"] == {"MmBackward0"} and consumers["SumBackward0"] == {"output"}
    assert consumers["TanhBackward0"] == {"MulBackward0", "SigmoidBackward0"}


def test_saved_shapes_go_once_backward_frees_them():
    y, w, _ = _program(ember)
    y.backward()
    assert "saved:" not in ember.autograd.graph.to_dot(y)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_render_draws_svg(tmp_path):
    pytest.importorskip("graphviz")
    y, w, b = _program(ember)
    path = ember.autograd.graph.render(y, filename=str(tmp_path / "graph"), format="svg", params={"w": w})
    text = open(path).read()
    assert text.lstrip().startswith("<?xml") and "TanhBackward0" in text


def test_pack_and_unpack_see_what_torchs_see():
    def program(lib):
        packed, unpacked = [], []

        def pack(t):
            packed.append((tuple(t.shape), str(t.dtype).split(".")[-1]))
            return t.clone() * 1  # a copy: what backward gets is unpack's value, not the original

        def unpack(t):
            unpacked.append(tuple(t.shape))
            return t

        x = lib.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x.exp() * x).sum()
        y.backward()
        return sorted(packed), sorted(unpacked), x.grad

    both(program)


def test_unpack_decides_what_backward_reads():
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 0 + 10):
            y = (x * x).sum()
        y.backward()
        return x.grad

    both(program)


@pytest.mark.parametrize("op", ["mul", "div"])
def test_a_product_and_a_quotient_pack_their_operands_in_torch_s_order(op):
    # torch's documentation of saved_tensors_hooks prints the packing of a * b: b first, then a
    def program(lib):
        order = []
        a, b = lib.ones(2, requires_grad=True), lib.full((2,), 2.0, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: order.append(t.detach()) or t,
                                                    lambda t: order.append(t.detach()) or t):
            y = getattr(a, op)(b)
        y.sum().backward()
        return order

    both(program)


def test_double_backward_through_a_packed_output():
    def program(lib):
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp().sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    both(program)


def test_save_on_cpu_keeps_training_the_same():
    def program(lib):
        w = lib.linspace(-1, 1, 6).reshape(3, 2).requires_grad_()
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            loss = (lib.linspace(0, 1, 9).reshape(3, 3) @ w).relu().pow(2).sum()
        loss.backward()
        return loss, w.grad

    both(program)


def test_disable_saved_tensors_hooks():
    def program(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    both_raise(program, RuntimeError, "hooks are off here")


def test_a_pack_hook_must_not_modify_its_input_in_place():
    def program(lib):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            (x * 1).sin()

    both_raise(program, RuntimeError, "pack hook is modifying its input in place")


def test_unpack_must_return_a_tensor():
    x = ember.ones(2, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="unpack_hook should return a Tensor"):
        y.backward()


def test_gradcheck_and_gradgradcheck_through_packed_tensors():
    def f(x, w):
        return (x @ w).tanh() * x.sum()

    x = ember.linspace(-1, 1, 6, dtype=ember.float64).reshape(2, 3).requires_grad_()
    w = ember.linspace(0, 1, 6, dtype=ember.float64).reshape(3, 2).requires_grad_()
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        assert ember.autograd.gradcheck(f, (x, w))
        assert ember.autograd.gradgradcheck(f, (x, w))
