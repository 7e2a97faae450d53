"""ember.func's transforms walk arguments and results with ember.utils._pytree, as torch.func does with
torch.utils._pytree: registered classes and dataclasses pass through vmap, grad and jacrev."""
import dataclasses

import torch
import torch.utils._pytree

import ember
import ember.utils._pytree


def _batch_class(pytree_module):
    @dataclasses.dataclass
    class Batch:
        x: object
        y: object

    pytree_module.register_dataclass(Batch)
    return Batch


def _through_transforms(lib, pytree_module):
    Batch = _batch_class(pytree_module)
    mapped = lib.func.vmap(lambda b: Batch(b.x * 2, b.x + b.y))(Batch(lib.arange(3.0), lib.ones(3)))
    gradient = lib.func.grad(lambda b: (b.x * b.y).sum())(Batch(lib.arange(3.0), lib.ones(3)))
    jacobian = lib.func.jacrev(lambda b: b.x * b.y)(Batch(lib.arange(2.0), lib.full((2,), 3.0)))
    return [type(mapped).__name__, mapped.x.tolist(), mapped.y.tolist(), gradient.x.tolist(), gradient.y.tolist(),
            jacobian.x.tolist(), jacobian.y.tolist()]


def test_registered_dataclass_passes_through_the_transforms_as_in_torch():
    assert _through_transforms(ember, ember.utils._pytree) == _through_transforms(torch, torch.utils._pytree)


def test_return_types_pass_through_vmap_as_in_torch():
    def largest(lib):
        result = lib.func.vmap(lambda row: lib.max(row, 0))(lib.tensor([[1.0, 3.0], [4.0, 2.0]]))
        return type(result).__name__, result.values.tolist(), result.indices.tolist()

    assert largest(ember) == largest(torch)
