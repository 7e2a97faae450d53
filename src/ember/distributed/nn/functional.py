"""Collectives as autograd Functions: each returns a new tensor, and backward runs the matching collective.

``all_reduce`` with SUM sends back, to every rank, the sum of the gradients of all ranks' results (AVG:
their mean); ``broadcast`` sums them onto the source; ``all_gather`` gives each rank the sum of the
gradients of its piece. The backward formulas are these same Functions, so gradients of gradients work.
"""
from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.autograd import Function
from ember.distributed import _collectives as collectives
from ember.distributed._group import ProcessGroup, ReduceOp, get_rank, get_world_size
from ember.overrides import overridable

distributed_nn_function = overridable("ember.distributed.nn.functional")


def _on_a_copy(collective, tensor: Tensor, *args) -> Tensor:
    result = tensor.clone()
    collective(result, *args)
    return result


class AllReduce(Function):
    @staticmethod
    def forward(ctx, tensor, op, group):
        ctx.op, ctx.group = op, group
        return _on_a_copy(collectives.all_reduce, tensor, op, group)

    @staticmethod
    def backward(ctx, grad):
        if ctx.op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(
                f"all_reduce: backward is defined for ReduceOp.SUM and ReduceOp.AVG, not {ctx.op}"
            )
        return AllReduce.apply(grad, ctx.op, ctx.group), None, None


class Broadcast(Function):
    @staticmethod
    def forward(ctx, tensor, src, group):
        ctx.src, ctx.group = src, group
        return _on_a_copy(collectives.broadcast, tensor, src, group)

    @staticmethod
    def backward(ctx, grad):
        total = AllReduce.apply(grad, ReduceOp.SUM, ctx.group)
        return (total if get_rank() == ctx.src else total * 0), None, None


class AllGather(Function):
    @staticmethod
    def forward(ctx, tensor, group):
        ctx.group = group
        pieces = [ember.empty_like(tensor) for _ in range(get_world_size(group))]
        collectives.all_gather(pieces, tensor.contiguous(), group=group)
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        total = AllReduce.apply(ember.stack(grads), ReduceOp.SUM, ctx.group)
        return total[get_rank(ctx.group)], None


@distributed_nn_function
def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group: ProcessGroup | None = None) -> Tensor:
    """The reduction of ``tensor`` over the ranks of ``group``, as a new tensor that gradients flow through."""
    return AllReduce.apply(tensor, op, group)


@distributed_nn_function
def broadcast(tensor: Tensor, src: int, group: ProcessGroup | None = None) -> Tensor:
    """Rank ``src``'s ``tensor`` on every rank, as a new tensor; its gradient is summed back onto ``src``."""
    return Broadcast.apply(tensor, src, group)


@distributed_nn_function
def all_gather(tensor: Tensor, group: ProcessGroup | None = None) -> tuple:
    """Every rank's ``tensor`` (of one shape), in rank order; each gets back the sum of its piece's gradients."""
    return AllGather.apply(tensor, group)
