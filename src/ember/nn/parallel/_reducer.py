"""The reducer: averages DDP's gradients in buckets, each all-reduced as soon as all its gradients are ready.

After each forward, it walks the autograd graph from the outputs once (``next_functions``) to find, for
every parameter, the nodes that will hand it a gradient, and hooks those nodes (``Node.register_hook``).
When the last of them has run, the parameter's gradient is complete: it is copied into its bucket, and
a bucket whose gradients are all in is handed to the communication hook (by default: divided by the
world size and all-reduced with the communicator's non-blocking ``Iallreduce``), whose future completes while backward
goes on with the layers below. Buckets start in one order on every rank, as MPI and the TCP backend require. The hooks hand
the engine no gradient for these parameters: the reducer writes ``.grad`` itself, once the last bucket's
future has its value, as the rank's accumulated gradient averaged over the ranks (with
``gradient_as_bucket_view``, ``.grad`` is the bucket's memory itself).
"""
from __future__ import annotations

import numpy as np

import ember
from ember.distributed._grad_bucket import GradBucket
from ember.distributed._work import Work
from ember.distributed.algorithms.ddp_comm_hooks.default_hooks import averaged
from ember.futures import Future

_FIRST_BUCKET_BYTES = 1024 * 1024  # as torch: a small first bucket (the last layers) starts communication early


class Bucket:
    """Some parameters of one dtype, whose gradients share one flat buffer and one all-reduce."""

    def __init__(self, indices: list[int], params: list, dtype: np.dtype):
        self.indices = indices
        sizes = [params[i].numel() for i in indices]
        self.offsets = dict(zip(indices, np.cumsum([0] + sizes[:-1]).tolist()))
        self.buffer = np.zeros(sum(sizes), dtype)
        self.waiting = len(indices)
        self.future = None


def assign_buckets(params: list, cap_bytes: int) -> list[Bucket]:
    """Parameters in reverse order (backward reaches the last layers first), cut into buckets of about ``cap``."""
    buckets, current, size, dtype, cap = [], [], 0, None, min(_FIRST_BUCKET_BYTES, cap_bytes)
    for i in reversed(range(len(params))):
        p_dtype = params[i].detach().numpy().dtype
        nbytes = params[i].numel() * p_dtype.itemsize
        if current and (size + nbytes > cap or p_dtype != dtype):
            buckets.append(Bucket(current, params, dtype))
            current, size, cap = [], 0, cap_bytes
        current.append(i)
        size += nbytes
        dtype = p_dtype
    if current:
        buckets.append(Bucket(current, params, dtype))
    return buckets


def _tensors_in(value, found: list) -> list:
    """Every tensor in a forward's output, however nested in tuples, lists and dicts."""
    if isinstance(value, ember.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tensors_in(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _tensors_in(item, found)
    return found


def _grad_position(node, k: int, n_grads: int) -> int:
    """Which of a hook's grad_inputs goes along ``next_functions[k]``.

    They correspond one to one, except for a Function with arguments that are not tensors: its hooks see
    one gradient per argument, next_functions only the tensors (or the operands ``graph_inputs`` names).
    """
    if n_grads == len(node._recorded_next_functions()):
        return k
    if node._graph_inputs is not None:
        return node._graph_inputs[k]
    return [i for i, edge in enumerate(node._next) if edge is not None][k]


class Reducer:
    def __init__(self, params: list, names: list[str], group, cap_bytes: int, find_unused: bool,
                 as_view: bool = False, static_graph: bool = False):
        self.params, self.names, self.group, self.find_unused = params, names, group, find_unused
        self.as_view, self.static_graph = as_view, static_graph
        self.index = {id(p): i for i, p in enumerate(params)}
        self.buckets = assign_buckets(params, cap_bytes)
        self.bucket_of = {i: b for b in self.buckets for i in b.indices}
        self.started = False  # a hook has run since the last forward: backward is reducing
        self.expected = None  # per parameter: gradients still to come in this backward
        self.hook, self.hook_state = None, None  # a registered communication hook; None: average
        self.divisor = group.size()  # what the default reduction divides by (fewer ranks under Join)
        self.static_used = None  # with static_graph: which parameters some rank uses, found in iteration 1
        self.used_searches = 0  # all-reduces of the used flags so far

    # ---- after forward: find where each parameter's gradient comes from

    def prepare(self, output) -> None:
        if self.started:
            self._unfinished_error()
        consumers = self._consumers(_tensors_in(output, []))
        self.expected = [0] * len(self.params)
        self.partial = [None] * len(self.params)
        self.is_ready = [False] * len(self.params)
        for node, pairs in consumers.items():
            for _, i in pairs:
                self.expected[i] += 1
            node.register_hook(self._hook_for(node, pairs))
        for bucket in self.buckets:
            bucket.waiting, bucket.future = len(bucket.indices), None
        self.next_bucket = 0
        self.used = np.array([n > 0 for n in self.expected], np.uint8)
        unused_here = np.flatnonzero(self.used == 0)
        self.used_work = None
        if self.find_unused or self.static_graph:
            if self.static_used is None or self.find_unused:
                self.used_work = self._search_used(self.used)
            else:
                self.used = self.static_used  # static_graph: the same parameters are used every iteration
            for i in unused_here:
                self._ready(int(i))

    def _search_used(self, used: np.ndarray) -> Work:
        """Which parameters some rank used (a joined rank, shadowing, contributes none)."""
        self.used_searches += 1
        return Work(self.group, "DistributedDataParallel: which parameters were used",
                    [self.group._comm.Iallreduce(self.group.api.IN_PLACE, used, self.group.api.MAX)])

    def _consumers(self, outputs: list) -> dict:
        """node -> [(position in next_functions, parameter index)] for every node that feeds a parameter."""
        consumers, seen = {}, set()
        stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for k, (child, _) in enumerate(node._recorded_next_functions()):
                if child is None:
                    continue
                if type(child).__name__ == "AccumulateGrad":
                    i = self.index.get(id(child.variable))
                    if i is not None:
                        consumers.setdefault(node, []).append((k, i))
                else:
                    stack.append(child)
        return consumers

    # ---- during backward

    def _hook_for(self, node, pairs: list):
        def hook(grad_inputs, grad_outputs):
            self.started = True
            grads = list(grad_inputs)
            for k, i in pairs:
                position = _grad_position(node, k, len(grads))
                if grads[position] is not None:
                    g = grads[position].detach()
                    self.partial[i] = g if self.partial[i] is None else self.partial[i] + g
                    grads[position] = None  # the reducer writes .grad itself, once averaged
                self.expected[i] -= 1
                if self.expected[i] == 0:
                    self._ready(i)
            self._progress()
            return tuple(grads)
        return hook

    def _ready(self, i: int) -> None:
        """Parameter i's gradient of this backward is complete: into its bucket, then start what can start."""
        p, bucket = self.params[i], self.bucket_of[i]
        start, n = bucket.offsets[i], p.numel()
        view = bucket.buffer[start:start + n]
        contribution = self.partial[i]
        accumulated = p.grad  # gradients kept from no_sync() iterations are averaged too
        if accumulated is None:
            view[...] = 0
        elif not np.may_share_memory(accumulated.detach().numpy(), view):  # as a bucket view, it is in place
            view[...] = accumulated.detach().numpy().reshape(-1)
        if contribution is not None:
            view += contribution.sum_to_size(p.shape).numpy().reshape(-1)
        self.partial[i] = None
        self.is_ready[i] = True
        bucket.waiting -= 1
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].waiting == 0:
            self._start(self.buckets[self.next_bucket])
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            self._finish()

    def _start(self, bucket: Bucket) -> None:
        bucket.future = self._communicate(bucket, bucket.buffer)

    def _communicate(self, bucket: Bucket, buffer: np.ndarray) -> Future:
        """The registered hook (or the average over the ranks) on one bucket: a future of its reduction."""
        k = self.buckets.index(bucket)
        grad_bucket = GradBucket(k, ember.from_numpy(buffer), [self.params[i] for i in bucket.indices],
                                 [bucket.offsets[i] for i in bucket.indices], k == len(self.buckets) - 1)
        if self.hook is None:
            return averaged(grad_bucket.buffer(), self.group, self.divisor)
        future = self.hook(self.hook_state, grad_bucket)
        if not isinstance(future, Future):
            raise TypeError(
                f"DistributedDataParallel: the communication hook {self.hook.__qualname__} returned "
                f"{type(future).__name__}; it must return an ember.futures.Future of the bucket's reduced tensor"
            )
        return future

    def _progress(self) -> None:
        """MPI moves a non-blocking collective along only inside MPI calls: ask after each node."""
        for bucket in self.buckets[:self.next_bucket]:
            bucket.future.done()

    def _finish(self) -> None:
        """Every bucket has started: wait for them, then give each parameter its averaged gradient."""
        if self.used_work is not None:
            self.used_work.wait()
            if self.static_graph and self.static_used is None:
                self.static_used = self.used.copy()
        for bucket in self.buckets:
            self._take_result(bucket, bucket.future.wait())
            for i in bucket.indices:
                if self.used[i]:
                    self._set_grad(self.params[i], bucket.buffer, bucket.offsets[i])
        self.started = False

    def _take_result(self, bucket: Bucket, result) -> None:
        if not isinstance(result, ember.Tensor) or tuple(result.shape) != bucket.buffer.shape:
            got = tuple(result.shape) if isinstance(result, ember.Tensor) else type(result).__name__
            raise RuntimeError(
                f"DistributedDataParallel: the communication hook's future must hold the bucket's reduced "
                f"flat tensor of shape {bucket.buffer.shape}, got {got}"
            )
        data = result.detach().numpy()
        if not np.may_share_memory(data, bucket.buffer):
            bucket.buffer[...] = data

    def _set_grad(self, p, buffer: np.ndarray, start: int) -> None:
        averaged_grad = buffer[start:start + p.numel()].reshape(tuple(p.shape))
        if self.as_view:
            if p.grad is None or not np.may_share_memory(p.grad.detach().numpy(), averaged_grad):
                p.grad = ember.from_numpy(averaged_grad)  # the gradient lives in the bucket: no copy out
        elif p.grad is None:
            p.grad = ember.from_numpy(averaged_grad.copy())
        else:
            with ember.no_grad():
                p.grad.copy_(ember.from_numpy(averaged_grad))

    # ---- on a rank that has run out of inputs (Join): the collectives of one backward, on zeros

    def shadow(self) -> None:
        if self.find_unused or (self.static_graph and self.static_used is None):
            used = np.zeros(len(self.params), np.uint8)
            self._search_used(used).wait()
            if self.static_graph and self.static_used is None:
                self.static_used = used
        futures = [self._communicate(bucket, np.zeros_like(bucket.buffer)) for bucket in self.buckets]
        for future in futures:
            future.wait()

    def _unfinished_error(self) -> None:
        missing = [name for name, ready in zip(self.names, self.is_ready) if not ready]
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new one. This error "
            "indicates that your module has parameters that were not used in producing loss. You can enable "
            "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
            "`ember.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
            f"participate in calculating loss. Parameters that did not receive a gradient: {missing}"
        )
