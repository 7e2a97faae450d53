"""Graph editing, GraphModule, Interpreter, Transformer and ShapeProp behave as torch.fx's do."""
import copy
import operator

import numpy as np
import pytest
import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

import ember
import ember.fx
from ember.fx.passes.shape_prop import ShapeProp

from .models import build

TORCH_MODELS = build(torch)
EMBER_MODELS = build(ember)


def both(name):
    return torch.fx.symbolic_trace(TORCH_MODELS[name]()), ember.fx.symbolic_trace(EMBER_MODELS[name]())


def as_ember_text(text):
    return text.replace("torch.", "ember.")


def relu_to_gelu(lib, fx):
    class ReluToGelu(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is lib.relu:
                return lib.nn.functional.gelu(*args, **kwargs)
            return super().call_function(target, args, kwargs)

    return ReluToGelu


def test_transformer_replacing_relu_by_gelu_matches_torch():
    torch_gm, ember_gm = both("cnn")
    torch_new = relu_to_gelu(torch, torch.fx)(torch_gm).transform()
    ember_new = relu_to_gelu(ember, ember.fx)(ember_gm).transform()
    # torch's F.gelu is bound from C++ as torch._C._nn.gelu; ember's is ember.nn.functional.gelu
    assert ember_new.code == as_ember_text(torch_new.code).replace("ember._C._nn.gelu", "ember.nn.functional.gelu")
    assert isinstance(ember_new, ember.fx.GraphModule) and ember_new is not ember_gm
    assert [n.target for n in ember_gm.graph.nodes if n.op == "call_function"][0] is ember.relu  # untouched
    x = ember.randn(2, 1, 8, 8)
    ember_gm.eval(), ember_new.eval()
    expected = ember_gm.fc(ember.flatten(ember_gm.pool(ember.nn.functional.gelu(ember_gm.bn(ember_gm.conv(x)))), 1))
    np.testing.assert_allclose(ember_new(x).detach().numpy(), expected.detach().numpy(), rtol=0, atol=0)


def test_interpreter_runs_the_graph_and_its_methods_can_be_overridden():
    _, gm = both("encoder")
    x = ember.randn(2, 5, 8)
    np.testing.assert_array_equal(ember.fx.Interpreter(gm).run(x).detach().numpy(), gm(x).detach().numpy())

    class CountCalls(ember.fx.Interpreter):
        seen = []

        def call_module(self, target, args, kwargs):
            self.seen.append(target)
            return super().call_module(target, args, kwargs)

    CountCalls(gm).run(x)
    assert CountCalls.seen == ["qkv", "out", "norm"]


def test_interpreter_reports_a_missing_input_as_torch_does():
    torch_gm, ember_gm = both("residual")
    with pytest.raises(RuntimeError) as in_torch:
        torch.fx.Interpreter(torch_gm).run()
    with pytest.raises(RuntimeError) as in_ember:
        ember.fx.Interpreter(ember_gm).run()
    assert str(in_ember.value) == str(in_torch.value).split("\nOriginal traceback:")[0]


def test_graph_built_by_hand_and_edited():
    def build_graph(fx, lib):
        g = fx.Graph()
        x = g.placeholder("x")
        y = g.call_function(lib.relu, (x,))
        z = g.call_method("sum", (y,), {"dim": 0})
        with g.inserting_before(z):
            w = g.call_function(operator.mul, (y, 2))
        z.replace_input_with(y, w)
        g.output(z)
        return g, x, y, w, z

    torch_graph, *_ = build_graph(torch.fx, torch)
    g, x, y, w, z = build_graph(ember.fx, ember)
    assert str(g) == as_ember_text(str(torch_graph))
    assert list(y.users) == [w] and w.all_input_nodes == [y] and z.all_input_nodes == [w]
    g.lint()
    gm = ember.fx.GraphModule(ember.nn.Module(), g)
    assert gm(ember.tensor([[1., -2.], [3., 4.]])).tolist() == [8.0, 8.0]
    assert gm.code == as_ember_text(torch.fx.GraphModule(torch.nn.Module(), torch_graph).code)


def test_replace_all_uses_with_then_erase_and_dead_code():
    _, gm = both("cnn")
    g = gm.graph
    relu = next(n for n in g.nodes if n.name == "relu")
    with g.inserting_after(relu):
        gelu = g.call_function(ember.nn.functional.gelu, (relu.args[0],))
    assert relu.replace_all_uses_with(gelu) == [next(n for n in g.nodes if n.name == "pool")]
    assert not relu.users
    g.erase_node(relu)
    with pytest.raises(RuntimeError, match="Tried to erase Node bn but it still had 1 users"):
        g.erase_node(gelu.args[0])
    gm.recompile()
    assert "gelu = ember.nn.functional.gelu(bn)" in gm.code
    unused = g.call_function(ember.exp, (gelu,))
    unused.prepend(g.call_function(ember.sin, (gelu,)))
    assert g.eliminate_dead_code() is True and [n.name for n in g.nodes if n.name in ("exp", "sin")] == []
    assert g.eliminate_dead_code() is False


def test_lint_finds_nodes_out_of_order_and_missing_targets():
    _, gm = both("residual")
    g = gm.graph
    conv = next(n for n in g.nodes if n.op == "call_module")
    add = next(n for n in g.nodes if n.name == "add")
    conv.prepend(add)  # add now comes before the conv it reads
    with pytest.raises(RuntimeError, match="Argument 'conv' of Node 'add' was used before it has been defined"):
        g.lint()
    add.prepend(conv)
    g.lint()
    conv.target = "missing"
    with pytest.raises(RuntimeError, match="target missing references nonexistent attribute missing"):
        g.lint()


def test_inserting_after_puts_each_new_node_right_after_the_anchor_as_torch_does():
    def names(fx):
        g = fx.Graph()
        x = g.placeholder("x")
        with g.inserting_after(x):
            g.call_function(operator.neg, (x,))
            g.call_function(operator.pos, (x,))
        g.output(x)
        return [n.name for n in g.nodes]

    assert names(ember.fx) == names(torch.fx)


def test_print_tabular_draws_its_own_table(capsys):
    _, gm = both("residual")
    gm.graph.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert set(lines[1]) == {"-", " "}
    assert lines[2:] == [
        "placeholder    x       x             ()         {}",
        "call_module    conv    conv          (x,)       {}",
        "call_function  add     operator.add  (x, conv)  {}",
        "output         output  output        (add,)     {}",
    ]


def test_print_readable_and_str_match_torch():
    torch_gm, ember_gm = both("viewer")
    assert ember_gm.print_readable(print_output=False) == torch_gm.print_readable(print_output=False).replace(
        "torch.", "ember.")
    assert str(ember_gm).endswith(ember_gm.code + "\n# To see more debug info, please use "
                                                  "`graph_module.print_readable()`")


def test_graph_module_from_a_dict_of_parts_and_deepcopy():
    _, gm = both("mlp")
    parts = {name: gm.get_submodule(name) for name in ("body.0", "body.1", "body.2", "head")}
    rebuilt = ember.fx.GraphModule(parts, gm.graph)
    x = ember.randn(3, 4)
    np.testing.assert_array_equal(rebuilt(x).detach().numpy(), gm(x).detach().numpy())
    with pytest.raises(RuntimeError, match="referenced target head but that target was not provided"):
        ember.fx.GraphModule({k: v for k, v in parts.items() if k != "head"}, gm.graph)
    clone = copy.deepcopy(gm)
    assert clone.code == gm.code and clone.graph is not gm.graph
    assert clone.head.weight is not gm.head.weight
    np.testing.assert_array_equal(clone(x).detach().numpy(), gm(x).detach().numpy())


def test_shape_prop_records_what_torch_s_records():
    torch_gm, ember_gm = both("cnn")
    ShapeProp(ember_gm).propagate(ember.randn(2, 1, 8, 8))
    TorchShapeProp(torch_gm).propagate(torch.randn(2, 1, 8, 8))
    for e, t in zip(ember_gm.graph.nodes, torch_gm.graph.nodes):
        em, tm = e.meta["tensor_meta"], t.meta["tensor_meta"]
        assert (tuple(em.shape), str(em.dtype), em.requires_grad, em.stride) == \
            (tuple(tm.shape), str(tm.dtype).replace("torch.", "ember."), tm.requires_grad, tm.stride)
        assert e.meta["type"].__name__ == t.meta["type"].__name__


def test_to_folder_writes_a_module_that_computes_the_same(tmp_path, monkeypatch):
    _, gm = both("viewer")
    gm.to_folder(tmp_path / "saved_viewer", "Viewer")
    monkeypatch.syspath_prepend(str(tmp_path))
    from saved_viewer import Viewer

    x = ember.randn(3, 3, 4)
    np.testing.assert_array_equal(Viewer()(x).detach().numpy(), gm(x).detach().numpy())
