"""The standard DDP communication hooks: average each bucket over the ranks, in full or half precision.

A hook is ``hook(state, bucket) -> Future`` whose value is the bucket's reduced flat tensor; ``state``
here is the process group to average over (None: the default group). ember has no bfloat16 dtype, so
there is no ``bf16_compress_hook``.
"""
from __future__ import annotations

from typing import Any, Callable

import ember
from ember import distributed as dist
from ember.distributed._grad_bucket import GradBucket
from ember.distributed.algorithms.ddp_comm_hooks._half import to_half
from ember.futures import Future


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def averaged(tensor: ember.Tensor, group, divisor: int) -> Future:
    """All-reduce ``tensor`` divided by ``divisor`` (in place, before sending), as a future of it."""
    tensor.div_(divisor)
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket: GradBucket) -> Future:
    """Average the bucket over the ranks: what DDP does without a hook.

    >>> import ember, ember.distributed as dist
    >>> from ember import nn
    >>> from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
    >>> dist.init_process_group("mpi")
    >>> model = nn.parallel.DistributedDataParallel(nn.Linear(2, 1))
    >>> model.register_comm_hook(None, default_hooks.allreduce_hook)
    >>> model(ember.ones(3, 2)).sum().backward()
    >>> model.module.bias.grad
    tensor([3.])
    >>> dist.destroy_process_group()
    """
    group = _group(process_group)
    return averaged(bucket.buffer(), group, group.size())


def _compress(buffer: ember.Tensor) -> ember.Tensor:
    """float16 of a gradient bucket: float32 ones through ``to_half``, as fast for gradients below
    float16's normal range as for the others (NumPy's own cast is many times slower on those)."""
    if buffer.dtype == ember.float32:
        return ember.from_numpy(to_half(buffer.numpy()))
    return buffer.to(ember.float16)


def fp16_compress_hook(process_group, bucket: GradBucket) -> Future:
    """Send the bucket as float16 (half the bytes), and write the average back in the bucket's dtype.

    The gradients lose precision to float16's 11-bit significand, and values beyond 65504 overflow. The
    bucket is divided by the world size before the cast (torch divides after it): NumPy's float16
    arithmetic is several times slower than float32's, and the bucket is overwritten with the result anyway.

    >>> ember.distributed.init_process_group("mpi")
    >>> net = ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 1))
    >>> net.register_comm_hook(state=None, hook=fp16_compress_hook)
    >>> net(ember.full((1, 2), 1.0002)).sum().backward()
    >>> net.module.weight.grad                       # 1.0002 is not a float16
    tensor([[1., 1.]])
    >>> ember.distributed.destroy_process_group()
    """
    group = _group(process_group)
    buffer = bucket.buffer()
    compressed = _compress(buffer.div_(group.size()))
    return dist.all_reduce(compressed, group=group, async_op=True).get_future().then(
        lambda fut: _written(buffer, fut.value()[0]))


def fp16_compress_wrapper(hook: Callable[[Any, GradBucket], Future]) -> Callable[[Any, GradBucket], Future]:
    """``hook`` run on the bucket cast to float16, its result cast back to the bucket's dtype.

    >>> ember.distributed.init_process_group("mpi")
    >>> net = ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 1))
    >>> net.register_comm_hook(None, fp16_compress_wrapper(allreduce_hook))
    >>> net(ember.full((1, 2), 1.0002)).sum().backward()
    >>> net.module.weight.grad
    tensor([[1., 1.]])
    >>> ember.distributed.destroy_process_group()
    """
    def fp16_compress_wrapper_hook(state: Any, bucket: GradBucket) -> Future:
        buffer = bucket.buffer()
        bucket.set_buffer(_compress(buffer))
        return hook(state, bucket).then(lambda fut: _written(buffer, fut.value()))
    return fp16_compress_wrapper_hook


def _written(buffer: ember.Tensor, result: ember.Tensor) -> ember.Tensor:
    """The reduced half-precision result, back in the bucket's own memory and dtype."""
    buffer.copy_(result)
    return buffer


__all__ = ["allreduce_hook", "fp16_compress_hook", "fp16_compress_wrapper"]
