"""Twin tests (ember against torch) for a round of small differences: the base Function's apply, the structseq
behaviour of ``return_types``, Python ints beyond 64 bits, the strides of channels-last reductions and of
gradients, ``get_ignored_functions``, the edges of renamed composite nodes and batched ``autograd.grad``."""
import pickle

import pytest
import torch

import ember
from twins import both, both_raise


# ----------------------------------------------------------------- autograd.Function.apply on the base class

@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("grad_mode", [False, True])
def test_apply_of_the_base_function_asks_for_a_forward(requires_grad, grad_mode):
    def program(lib):
        with lib.set_grad_enabled(grad_mode):
            lib.autograd.Function.apply(lib.ones(2, requires_grad=requires_grad))

    both_raise(program, NotImplementedError, "You must implement the forward function for custom autograd.Function")
