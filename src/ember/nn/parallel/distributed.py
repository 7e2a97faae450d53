"""``DistributedDataParallel``: one replica of the model per process, their gradients averaged in backward."""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable, Iterator

import ember
from ember import distributed as dist
from ember.distributed._group import resolve
from ember.distributed.algorithms.join import Join, Joinable, JoinHook
from ember.nn.modules.module import Module
from ember.nn.parallel._reducer import Reducer


class DistributedDataParallel(Module, Joinable):
    """Train ``module`` on every rank of ``process_group``, each on its part of the data, as one model.

    At construction, rank 0's parameters and buffers are copied to every rank. In each backward, gradients
    are averaged over the ranks in buckets of about ``bucket_cap_mb`` megabytes, each all-reduced as soon
    as its gradients are computed, while backward goes on. After ``loss.backward()`` every rank holds the
    same ``.grad``, so identical optimizers keep identical replicas.

    ``no_sync()`` skips the averaging (gradients accumulate locally, and the next synchronised backward
    averages the sum); ``find_unused_parameters=True`` allows parameters that a forward did not use;
    ``broadcast_buffers`` copies rank 0's buffers to every rank before each forward;
    ``gradient_as_bucket_view=True`` makes each ``.grad`` a view into its bucket (no copy out of it);
    ``static_graph=True`` allows unused parameters and looks for them in the first iteration only.
    ``register_comm_hook`` changes how buckets are reduced, and ``join()`` trains on uneven inputs.

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
        Module.__init__(self)
        Joinable.__init__(self)
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
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self._divide_by_initial_world_size = True
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], group, self.bucket_bytes_cap,
                               find_unused_parameters, gradient_as_bucket_view, static_graph)

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

    def _sync_module_states(self, src: int | None = None) -> None:
        """Rank ``src``'s (default: the group's first) parameters and buffers, on every rank."""
        src = self.process_group._ranks[0] if src is None else src
        tensors = [p.detach() for p in self.module.parameters()]
        if self.broadcast_buffers:
            tensors += list(self.module.buffers())
        self._broadcast(tensors, src)

    def _broadcast(self, tensors: list, src: int) -> None:
        works = [dist.broadcast(t, src=src, group=self.process_group, async_op=True) for t in tensors]
        for work in works:
            work.wait()

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        active = Join.notify_join_context(self)  # under Join: the number of ranks that still have inputs
        sync = ember.is_grad_enabled() and self.require_backward_grad_sync
        src = self.process_group._ranks[0]
        if active is not None:
            active.wait()
            if not self._divide_by_initial_world_size:
                self.reducer.divisor = int(active.result()[0].item())
        if self._join_config.enable:
            src, _ = self._agree(self.process_group.rank(), sync)
        self._sync_buffers(src)
        output = self.module(*inputs, **kwargs)
        if sync:
            self.reducer.prepare(output)
        return output

    def _agree(self, rank: int, sync: bool) -> tuple[int, bool]:
        """Under Join, with the joined ranks: the highest of the offered ranks (-1: none), and whether any
        rank will reduce gradients in this iteration's backward."""
        offer = ember.tensor([rank, int(sync)])
        dist.all_reduce(offer, op=dist.ReduceOp.MAX, group=self.process_group)
        return self.process_group._ranks[int(offer[0])], bool(offer[1])

    def _sync_buffers(self, src: int) -> None:
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers, src)

    # ---- communication hooks

    def register_comm_hook(self, state: object, hook: Callable) -> None:
        """Reduce each gradient bucket with ``hook(state, bucket)`` instead of averaging it.

        ``bucket`` is an ``ember.distributed.GradBucket``; the hook returns an ``ember.futures.Future``
        whose value is the bucket's reduced flat tensor (the average over the ranks, for training to mean
        what it does without a hook). ``default_hooks`` in ``ember.distributed.algorithms.ddp_comm_hooks``
        has ``allreduce_hook`` and ``fp16_compress_hook``. A hook can be registered once, before training.

        >>> import ember, ember.distributed as dist
        >>> from ember import nn
        >>> dist.init_process_group("mpi")
        >>> model = nn.parallel.DistributedDataParallel(nn.Linear(2, 1))
        >>> def noop(state, bucket):             # no communication: each rank keeps its own gradients
        ...     fut = ember.futures.Future()
        ...     fut.set_result(bucket.buffer())
        ...     return fut
        >>> model.register_comm_hook(None, noop)
        >>> model(ember.ones(1, 2)).sum().backward()
        >>> model.module.weight.grad
        tensor([[1., 1.]])
        >>> dist.destroy_process_group()
        """
        if not callable(hook):
            raise TypeError(f"Communication hook must be callable, got {type(hook).__name__}.")
        if len(inspect.signature(hook).parameters) != 2:
            raise ValueError(f"Communication hook {hook.__qualname__} must take two arguments: (state, bucket)")
        if self.reducer.hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if self.reducer.started:
            raise RuntimeError("register_comm_hook: register the hook before training, not during a backward")
        self.reducer.hook, self.reducer.hook_state = hook, state

    def _set_static_graph(self) -> None:
        """As ``static_graph=True`` at construction (before the first iteration)."""
        self.static_graph = self.reducer.static_graph = True

    # ---- uneven inputs (Join)

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Join:
        """A ``Join`` context over this model alone: ranks may have different numbers of batches.

        A rank that runs out shadows the forward and backward collectives of the others until all have run
        out; then every rank gets the model of a rank that joined last. While some ranks have joined,
        gradients are divided by the initial world size (the joined ranks adding zeros), or, with
        ``divide_by_initial_world_size=False``, by the number of ranks that still have inputs.
        """
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs: Any) -> JoinHook:
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self) -> ember.device:
        return ember.device("cpu")

    @property
    def join_process_group(self):
        return self.process_group

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within it, backward keeps each rank's gradients to itself (they add up in ``.grad``)."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


class _DDPJoinHook(JoinHook):
    """On a rank without inputs: the collectives of a DDP forward and backward; at the end, one model."""

    def __init__(self, ddp: DistributedDataParallel, divide_by_initial_world_size: bool):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        src, sync = self.ddp._agree(-1, False)
        self.ddp._sync_buffers(src)
        if sync:
            self.ddp.reducer.shadow()

    def post_hook(self, is_last_joiner: bool) -> None:
        """The replicas have drifted (joined ranks stopped stepping): all take a last joiner's model."""
        ddp = self.ddp
        src, _ = ddp._agree(ddp.process_group.rank() if is_last_joiner else -1, False)
        ddp._sync_module_states(src)
        ddp.reducer.divisor = ddp.process_group.size()
