"""Collectives: every rank of a group calls the same one, and data moves between all of them.

A tensor travels as its NumPy buffer, never pickled: the transport (MPI, or the TCP backend) reads and
writes the array's memory (a non-contiguous tensor goes through a contiguous copy). Data that is only moved
travels as bytes, so every dtype can; reductions travel typed, with the transport's own operations. The
tensor's ``.data`` changes in place without autograd seeing it, as torch's collectives do;
``ember.distributed.nn.functional`` has the differentiable forms.
"""
from __future__ import annotations

import numpy as np

from ember import _dtype

from ember._tensor import Tensor
from ember.distributed import _debug
from ember.distributed._group import ProcessGroup, ReduceOp, resolve
from ember.distributed._mpi import as_bytes, as_bytes_view, offsets_of, receiver
from ember.distributed._work import Work, run
from ember.overrides import overridable

distributed_function = overridable("ember.distributed")
_BOOL_OPS = {ReduceOp.SUM: "LOR", ReduceOp.MAX: "LOR", ReduceOp.BOR: "LOR", ReduceOp.PRODUCT: "LAND",
             ReduceOp.MIN: "LAND", ReduceOp.BAND: "LAND", ReduceOp.BXOR: "LXOR"}
_OPS = {ReduceOp.SUM: "SUM", ReduceOp.AVG: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
        ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}
_BITWISE = (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


def data_of(tensor, op: str, name: str = "tensor") -> np.ndarray:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(tensor).__name__}")
    return tensor._data


def _list_of(tensors, op: str, name: str, size: int) -> list[np.ndarray]:
    if not isinstance(tensors, (list, tuple)) or len(tensors) != size:
        got = len(tensors) if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"{op}: {name} must be a list of one tensor per rank of the group ({size}), got {got}")
    return [data_of(t, op, f"{name}[{i}]") for i, t in enumerate(tensors)]


def mpi_op(op, dtype: np.dtype, name: str) -> str:
    """The name of MPI's operation for ``op`` on ``dtype`` (bool reduces logically, as torch's does)."""
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"{name}: op must be a ReduceOp such as ReduceOp.SUM, got {op!r}")
    floating = _dtype.kind(dtype) == "f"
    if op is ReduceOp.AVG and not floating:
        raise RuntimeError(
            f"{name}: ReduceOp.AVG of a {dtype} tensor: the mean is a float that can't be cast to the "
            "tensor's dtype; reduce with ReduceOp.SUM and divide, or convert the tensor to a float dtype"
        )
    if op in _BITWISE and floating:
        raise RuntimeError(f"{name}: {op} needs an integer or bool tensor, got a {dtype} one")
    return (_BOOL_OPS if dtype.kind == "b" else _OPS)[op]


def _averaged(buffer: np.ndarray, op, size: int) -> None:
    if op is ReduceOp.AVG:
        np.divide(buffer, size, out=buffer, casting="unsafe")


def copy_back(target: np.ndarray, buffer: np.ndarray) -> None:
    if buffer is not target:
        target[...] = buffer


def _begin(group, op: str, tensor, detail: str, root: int | None = None, root_name: str = "src"):
    """The group, the tensor's array and the root's rank in the group; None on a process outside the group.

    Under EMBER_DISTRIBUTED_DEBUG=DETAIL, the ranks first check that they all make the same call: the op,
    the tensor's shape and dtype, and ``detail``.
    """
    data = data_of(tensor, op)
    g = resolve(group, op)
    if g is None:
        return None
    position = None if root is None else g.group_rank(root, op, root_name)
    _debug.check(g, op, f"{op}{_debug.describe(tensor)}:{detail}")
    return g, data, position


@distributed_function
def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group: ProcessGroup | None = None, async_op: bool = False):
    """Reduce ``tensor`` over every rank of ``group``; each rank gets the result, in place.

    >>> import ember, ember.distributed as dist
    >>> dist.init_process_group("mpi")        # doctest: +SKIP
    >>> t = ember.tensor([1.0, 2.0])
    >>> dist.all_reduce(t)                     # doctest: +SKIP
    >>> t                                      # on 2 ranks  # doctest: +SKIP
    tensor([2., 4.])
    """
    mop = mpi_op(op, data_of(tensor, "all_reduce").dtype, "all_reduce")
    begun = _begin(group, "all_reduce", tensor, str(op))
    if begun is None:
        return None
    g, data, _ = begun
    buffer = receiver(data)
    send = g.api.IN_PLACE if buffer is data else np.ascontiguousarray(data)

    def finish() -> None:
        _averaged(buffer, op, g.size())
        copy_back(data, buffer)

    request = g._comm.Iallreduce(send, buffer, getattr(g.api, mop))
    return run(Work(g, "all_reduce", [request], finish, [tensor]), async_op)


@distributed_function
def broadcast(tensor: Tensor, src: int = 0, group: ProcessGroup | None = None, async_op: bool = False):
    """Every rank of ``group`` gets rank ``src``'s ``tensor``, in place."""
    begun = _begin(group, "broadcast", tensor, f"src={src}", src)
    if begun is None:
        return None
    g, data, root = begun
    buffer = receiver(data)
    if root == g.rank():
        copy_back(buffer, data)
    request = g._comm.Ibcast(as_bytes(buffer), root)
    return run(Work(g, "broadcast", [request], lambda: copy_back(data, buffer), [tensor]), async_op)


@distributed_function
def reduce(tensor: Tensor, dst: int = 0, op=ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False):
    """Reduce ``tensor`` over the ranks of ``group`` into rank ``dst``'s ``tensor``; the others keep theirs."""
    mop = mpi_op(op, data_of(tensor, "reduce").dtype, "reduce")
    begun = _begin(group, "reduce", tensor, f"{op}:dst={dst}", dst, "dst")
    if begun is None:
        return None
    g, data, root = begun
    if root != g.rank():
        request = g._comm.Ireduce(np.ascontiguousarray(data), None, getattr(g.api, mop), root)
        return run(Work(g, "reduce", [request], None, [tensor]), async_op)
    buffer = receiver(data)
    send = g.api.IN_PLACE if buffer is data else np.ascontiguousarray(data)

    def finish() -> None:
        _averaged(buffer, op, g.size())
        copy_back(data, buffer)

    request = g._comm.Ireduce(send, buffer, getattr(g.api, mop), root)
    return run(Work(g, "reduce", [request], finish, [tensor]), async_op)


def _gathered_into(targets: list[np.ndarray], dtype: np.dtype, op: str):
    """One contiguous buffer for the pieces of ``targets`` (bytes), their counts and offsets, and the copy out."""
    for i, t in enumerate(targets):
        if t.dtype != dtype:
            raise TypeError(f"{op}: every tensor must have the input's dtype ({dtype}); tensor {i} is {t.dtype}")
    counts = [t.nbytes for t in targets]
    offsets = offsets_of(counts)
    flat = np.empty(sum(counts), np.uint8)

    def copy_out() -> None:
        for t, start, n in zip(targets, offsets, counts):
            t[...] = flat[start:start + n].view(t.dtype).reshape(t.shape)

    return flat, counts, offsets, copy_out


def _check_own_piece(data: np.ndarray, count: int, op: str, name: str, rank: int) -> None:
    if data.nbytes != count:
        raise ValueError(
            f"{op}: this rank's tensor has {data.size} elements but {name}[{rank}] has "
            f"{count // max(data.itemsize, 1)}: the tensor for each rank must have that rank's size"
        )


@distributed_function
def all_gather(tensor_list: list, tensor: Tensor, group: ProcessGroup | None = None, async_op: bool = False):
    """``tensor_list[i]`` gets rank i's ``tensor``, on every rank (sizes may differ from rank to rank)."""
    g = resolve(group, "all_gather")
    if g is None:
        return None
    data = data_of(tensor, "all_gather")
    targets = _list_of(tensor_list, "all_gather", "tensor_list", g.size())
    flat, counts, offsets, copy_out = _gathered_into(targets, data.dtype, "all_gather")
    _check_own_piece(data, counts[g.rank()], "all_gather", "tensor_list", g.rank())
    _debug.check(g, "all_gather", f"all_gather{[t.shape for t in targets]}:{data.dtype}")
    request = g._comm.Iallgatherv(as_bytes(data), [flat, counts, offsets, g.api.BYTE])
    return run(Work(g, "all_gather", [request], copy_out, list(tensor_list)), async_op)


@distributed_function
def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: ProcessGroup | None = None,
                           async_op: bool = False):
    """The ranks' ``input_tensor``s, in rank order, concatenated (or stacked) into ``output_tensor``."""
    g = resolve(group, "all_gather_into_tensor")
    if g is None:
        return None
    out, data = data_of(output_tensor, "all_gather_into_tensor", "output_tensor"), \
        data_of(input_tensor, "all_gather_into_tensor", "input_tensor")
    _check_whole(out, data, g.size(), "all_gather_into_tensor", "output_tensor", "input_tensor")
    _debug.check(g, "all_gather_into_tensor", f"all_gather_into_tensor{_debug.describe(input_tensor)}")
    buffer = receiver(out)
    request = g._comm.Iallgather(as_bytes(data), as_bytes_view(buffer))
    return run(Work(g, "all_gather_into_tensor", [request], lambda: copy_back(out, buffer), [output_tensor]),
               async_op)


def _check_whole(whole: np.ndarray, part: np.ndarray, size: int, op: str, whole_name: str, part_name: str) -> None:
    if whole.dtype != part.dtype:
        raise TypeError(f"{op}: {whole_name} is {whole.dtype} but {part_name} is {part.dtype}; they must match")
    if whole.size != part.size * size:
        raise ValueError(
            f"{op}: {whole_name} must have world_size ({size}) times the elements of {part_name} "
            f"({part.size}), got {whole.size}"
        )


@distributed_function
def gather(tensor: Tensor, gather_list: list | None = None, dst: int = 0, group: ProcessGroup | None = None,
           async_op: bool = False):
    """Rank ``dst`` gets every rank's ``tensor`` in ``gather_list`` (the others pass None)."""
    begun = _begin(group, "gather", tensor, f"dst={dst}", dst, "dst")
    if begun is None:
        return None
    g, data, root = begun
    if root != g.rank():
        if gather_list:
            raise ValueError("gather: Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        request = g._comm.Igatherv(as_bytes(data), None, root)
        return run(Work(g, "gather", [request]), async_op)
    targets = _list_of(gather_list, "gather", "gather_list", g.size())
    flat, counts, offsets, copy_out = _gathered_into(targets, data.dtype, "gather")
    _check_own_piece(data, counts[root], "gather", "gather_list", root)
    request = g._comm.Igatherv(as_bytes(data), [flat, counts, offsets, g.api.BYTE], root)
    return run(Work(g, "gather", [request], copy_out, list(gather_list)), async_op)


@distributed_function
def scatter(tensor: Tensor, scatter_list: list | None = None, src: int = 0, group: ProcessGroup | None = None,
            async_op: bool = False):
    """Rank i gets ``scatter_list[i]`` of rank ``src`` into ``tensor`` (the others pass None)."""
    begun = _begin(group, "scatter", tensor, f"src={src}", src)
    if begun is None:
        return None
    g, data, root = begun
    buffer = receiver(data)
    if root != g.rank():
        if scatter_list:
            raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        send = None
    else:
        pieces = _list_of(scatter_list, "scatter", "scatter_list", g.size())
        for i, piece in enumerate(pieces):
            if piece.dtype != data.dtype:
                raise TypeError(f"scatter: scatter_list[{i}] is {piece.dtype} but tensor is {data.dtype}")
        _check_own_piece(data, pieces[root].nbytes, "scatter", "scatter_list", root)
        counts = [p.nbytes for p in pieces]
        offsets = offsets_of(counts)
        send = [np.concatenate([as_bytes(p) for p in pieces]), counts, offsets, g.api.BYTE]
    request = g._comm.Iscatterv(send, as_bytes_view(buffer), root)
    return run(Work(g, "scatter", [request], lambda: copy_back(data, buffer), [tensor]), async_op)


@distributed_function
def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM, group: ProcessGroup | None = None,
                   async_op: bool = False):
    """Rank i gets, in ``output``, the reduction over ranks of their ``input_list[i]``."""
    g = resolve(group, "reduce_scatter")
    if g is None:
        return None
    out = data_of(output, "reduce_scatter", "output")
    pieces = _list_of(input_list, "reduce_scatter", "input_list", g.size())
    mop = mpi_op(op, out.dtype, "reduce_scatter")
    for i, piece in enumerate(pieces):
        if piece.dtype != out.dtype:
            raise TypeError(f"reduce_scatter: input_list[{i}] is {piece.dtype} but output is {out.dtype}")
    _check_own_piece(out, pieces[g.rank()].nbytes, "reduce_scatter", "input_list", g.rank())
    _debug.check(g, "reduce_scatter", f"reduce_scatter{[p.shape for p in pieces]}:{out.dtype}:{op}")
    send = np.concatenate([p.reshape(-1) for p in pieces]) if pieces else np.empty(0, out.dtype)
    buffer = receiver(out)

    def finish() -> None:
        _averaged(buffer, op, g.size())
        copy_back(out, buffer)

    request = g._comm.Ireduce_scatter(send, buffer, [p.size for p in pieces], getattr(g.api, mop))
    return run(Work(g, "reduce_scatter", [request], finish, [output]), async_op)


@distributed_function
def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM, group: ProcessGroup | None = None,
                          async_op: bool = False):
    """``input`` is world_size equal pieces; rank i gets the reduction over ranks of piece i in ``output``."""
    g = resolve(group, "reduce_scatter_tensor")
    if g is None:
        return None
    out, data = data_of(output, "reduce_scatter_tensor", "output"), data_of(input, "reduce_scatter_tensor", "input")
    _check_whole(data, out, g.size(), "reduce_scatter_tensor", "input", "output")
    mop = mpi_op(op, out.dtype, "reduce_scatter_tensor")
    _debug.check(g, "reduce_scatter_tensor", f"reduce_scatter_tensor{_debug.describe(input)}:{op}")
    buffer = receiver(out)

    def finish() -> None:
        _averaged(buffer, op, g.size())
        copy_back(out, buffer)

    request = g._comm.Ireduce_scatter_block(np.ascontiguousarray(data), buffer, getattr(g.api, mop))
    return run(Work(g, "reduce_scatter_tensor", [request], finish, [output]), async_op)


@distributed_function
def all_to_all(output_tensor_list: list, input_tensor_list: list, group: ProcessGroup | None = None,
               async_op: bool = False):
    """Rank i sends ``input_tensor_list[j]`` to rank j, which receives it as its ``output_tensor_list[i]``."""
    g = resolve(group, "all_to_all")
    if g is None:
        return None
    outs = _list_of(output_tensor_list, "all_to_all", "output_tensor_list", g.size())
    ins = _list_of(input_tensor_list, "all_to_all", "input_tensor_list", g.size())
    flat, counts, offsets, copy_out = _gathered_into(outs, ins[0].dtype if ins else np.uint8, "all_to_all")
    send_counts = [a.nbytes for a in ins]
    send_offsets = offsets_of(send_counts)
    send = np.concatenate([as_bytes(a) for a in ins]) if ins else np.empty(0, np.uint8)
    _debug.check(g, "all_to_all", f"all_to_all:{ins[0].dtype if ins else ''}")
    request = g._comm.Ialltoallv([send, send_counts, send_offsets, g.api.BYTE], [flat, counts, offsets, g.api.BYTE])
    return run(Work(g, "all_to_all", [request], copy_out, list(output_tensor_list)), async_op)


@distributed_function
def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids=None):
    """Wait until every rank of ``group`` has reached this call."""
    g = resolve(group, "barrier")
    if g is None:
        return None
    _debug.check(g, "barrier", "barrier")
    return run(Work(g, "barrier", [g._comm.Ibarrier()]), async_op)


def _split(data: np.ndarray, sizes, size: int, op: str, name: str) -> list[np.ndarray]:
    """``data`` cut along dim 0 into pieces of ``sizes`` rows (equal pieces if None)."""
    rows = data.shape[0] if data.ndim else 1
    if sizes is None:
        if rows % size:
            raise ValueError(f"{op}: {name} has {rows} rows, which do not split evenly over {size} ranks; "
                             f"pass {name}_split_sizes")
        sizes = [rows // size] * size
    if len(sizes) != size or sum(sizes) != rows:
        raise ValueError(f"{op}: {name}_split_sizes must be {size} sizes adding up to {rows}, got {list(sizes)}")
    return np.split(data.reshape(rows, -1), np.cumsum(sizes)[:-1].tolist())


@distributed_function
def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: list | None = None,
                      input_split_sizes: list | None = None, group: ProcessGroup | None = None,
                      async_op: bool = False):
    """Rank i sends rows ``input_split_sizes[j]`` of ``input`` to rank j, which stores them in ``output``."""
    g = resolve(group, "all_to_all_single")
    if g is None:
        return None
    out, data = data_of(output, "all_to_all_single", "output"), data_of(input, "all_to_all_single", "input")
    if out.dtype != data.dtype:
        raise TypeError(f"all_to_all_single: output is {out.dtype} but input is {data.dtype}; they must match")
    sends = _split(np.ascontiguousarray(data), input_split_sizes, g.size(), "all_to_all_single", "input")
    buffer = receiver(out)
    receives = _split(buffer, output_split_sizes, g.size(), "all_to_all_single", "output")
    flat, counts, offsets, copy_out = _gathered_into(receives, data.dtype, "all_to_all_single")
    send_counts = [a.nbytes for a in sends]
    send = [np.concatenate([as_bytes(a) for a in sends]), send_counts, offsets_of(send_counts), g.api.BYTE]
    _debug.check(g, "all_to_all_single", f"all_to_all_single:{data.dtype}")

    def finish() -> None:
        copy_out()
        copy_back(out, buffer)

    request = g._comm.Ialltoallv(send, [flat, counts, offsets, g.api.BYTE])
    return run(Work(g, "all_to_all_single", [request], finish, [output]), async_op)


all_gather_single = all_gather_into_tensor  # torch 2.13's newer names for the same operations
reduce_scatter_single = reduce_scatter_tensor
