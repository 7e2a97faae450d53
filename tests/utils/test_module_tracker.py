"""utils.module_tracker.ModuleTracker against torch's: the parents seen in forward and in backward of a nested model."""
import torch

import ember


class Block:
    """A module class made for one library: a linear layer and an activation in a named submodule."""

    @staticmethod
    def build(lib):
        class Inner(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = lib.nn.Linear(3, 3)
                self.act = lib.nn.Tanh()

            def forward(self, x):
                return self.act(self.linear(x))

        class Outer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.first = Inner()
                self.second = lib.nn.Sequential(Inner(), lib.nn.Linear(3, 2))

            def forward(self, x):
                return self.second(self.first(x))

        return Outer()


def record_parents(lib, module_tracker, input_requires_grad):
    """What the tracker holds at each tanh's forward and backward, and around the whole pass."""
    model = Block.build(lib)
    seen = []

    def observe(where):
        def hook(*args):
            seen.append((where, sorted(tracker.parents), tracker.is_bw))
        return hook

    for name, module in model.named_modules():
        if isinstance(module, lib.nn.Tanh):
            module.register_forward_hook(observe("fw " + name))
            module.register_full_backward_hook(observe("bw " + name))
    x = lib.ones(2, 3, requires_grad=input_requires_grad)
    with module_tracker.ModuleTracker() as tracker:
        out = model(x)
        seen.append(("after forward", sorted(tracker.parents), tracker.is_bw))
        out.sum().backward()
        seen.append(("after backward", sorted(tracker.parents), tracker.is_bw))
    return seen


def test_parents_in_forward_and_backward_match_torch():
    import torch.utils.module_tracker as torch_tracker
    import ember.utils.module_tracker as ember_tracker

    for input_requires_grad in (False, True):
        assert record_parents(ember, ember_tracker, input_requires_grad) == \
            record_parents(torch, torch_tracker, input_requires_grad)


def test_reached_as_an_attribute_of_utils():
    assert ember.utils.module_tracker.ModuleTracker().parents == {"Global"}


def test_hooks_are_removed_on_exit():
    model = ember.nn.Linear(2, 2)
    from ember.utils.module_tracker import ModuleTracker

    with ModuleTracker() as tracker:
        model(ember.ones(1, 2))
    model(ember.ones(1, 2))  # outside: no global hook adds to parents
    assert tracker.parents == {"Global"} and tracker._hooks == []
