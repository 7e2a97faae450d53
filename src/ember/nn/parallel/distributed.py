"""``DistributedDataParallel``: one replica of the model per process, their gradients averaged in backward."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import ember
from ember import distributed as dist
from ember.distributed._group import resolve
from ember.nn.modules.module import Module
from ember.nn.parallel._reducer import Reducer


class DistributedDataParallel(Module):
    """Train ``module`` on every rank of ``process_group``, each on its part of the data, as one model.

    At construction, rank 0's parameters and buffers are copied to every rank. In each backward, gradients
    are averaged over the ranks in buckets of about ``bucket_cap_mb`` megabytes, each all-reduced as soon
    as its gradients are computed, while backward goes on. After ``loss.backward()`` every rank holds the
    same ``.grad``, so identical optimizers keep identical replicas.

    ``no_sync()`` skips the averaging (gradients accumulate locally, and the next synchronised backward
    averages the sum); ``find_unused_parameters=True`` allows parameters that a forward did not use;
    ``broadcast_buffers`` copies rank 0's buffers to every rank before each forward.

    >>> import ember, ember.distributed as dist
    >>> from ember import nn
    >>> dist.init_process_group("mpi")
    >>> model = nn.parallel.DistributedDataParallel(nn.Linear(3, 1))
    >>> model(ember.ones(2, 3)).sum().backward()
    >>> model.module.bias.grad
    tensor([2.])
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
    >>> dist.destroy_process_group()
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an nn.Module, got {type(module).__name__}")
        group = resolve(process_group, "DistributedDataParallel")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
                "gradient."
            )
        self.module = module
        self.process_group = group
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._check_same_parameters(named)
        if init_sync:
            self._sync_module_states()
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], group, self.bucket_bytes_cap,
                               find_unused_parameters)

    def _check_same_parameters(self, named: list) -> None:
        """Every rank must hold the same parameters: a mismatch would otherwise corrupt the buckets."""
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in named]
        every = [None] * self.process_group.size()
        dist.all_gather_object(every, mine, group=self.process_group)
        for rank, theirs in enumerate(every):
            if theirs != mine:
                difference = next((a, b) for a, b in zip(mine + [None] * len(theirs), theirs + [None] * len(mine))
                                  if a != b)
                raise RuntimeError(
                    "DistributedDataParallel: the model's parameters differ between ranks (this rank has "
                    f"{difference[0]}, rank {self.process_group._ranks[rank]} has {difference[1]}); build "
                    "the same model on every rank"
                )

    def _sync_module_states(self) -> None:
        """Rank 0's parameters and buffers, on every rank (started together, then waited for)."""
        src = self.process_group._ranks[0]
        tensors = [p.detach() for p in self.module.parameters()]
        if self.broadcast_buffers:
            tensors += list(self.module.buffers())
        self._broadcast(tensors, src)

    def _broadcast(self, tensors: list, src: int) -> None:
        works = [dist.broadcast(t, src=src, group=self.process_group, async_op=True) for t in tensors]
        for work in works:
            work.wait()

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers, self.process_group._ranks[0])
        output = self.module(*inputs, **kwargs)
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare(output)
        return output

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within it, backward keeps each rank's gradients to itself (they add up in ``.grad``)."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
