"""Process groups: the default group of every process, and sub-groups, each an MPI communicator of its own.

A group owns a duplicate of MPI's communicator, so ember's messages never meet those of other MPI code in
the same program.
"""
from __future__ import annotations

import enum
import os
from datetime import timedelta

from ember.distributed import _faults
from ember.distributed._mpi import available, mpi

default_pg_timeout = timedelta(minutes=30)  # as torch's default for its CPU backend
_BACKENDS = ("mpi", "gloo")  # gloo names torch's CPU backend: scripts written for it run here on MPI


class ReduceOp:
    """How a reduction combines the ranks' values: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ...

    >>> from ember.distributed import ReduceOp
    >>> ReduceOp.SUM
    <RedOpType.SUM: 0>
    """

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR


class Backend(str):
    """A backend's name, lower-cased: ember has one, ``"mpi"``."""

    MPI = "mpi"
    GLOO = "gloo"

    def __new__(cls, name: str):
        if not isinstance(name, str) or name.lower() not in _BACKENDS:
            raise ValueError(
                f"Invalid backend: '{name}'; ember.distributed runs on MPI: use backend='mpi' (or leave it out)"
            )
        return super().__new__(cls, name.lower())


class ProcessGroup:
    """Some of the processes, and the MPI communicator they talk through."""

    def __init__(self, comm, ranks: list[int], timeout: timedelta):
        self._comm = comm
        self._ranks = ranks  # the global rank of each member, in the group's order
        self._timeout = timeout

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return "mpi"

    def __repr__(self) -> str:
        return f"ProcessGroup(backend=mpi, rank={self.rank()}, size={self.size()})"

    def group_rank(self, global_rank: int, op: str, what: str) -> int:
        """The position in this group of a global rank (what collectives' ``src`` and ``dst`` name)."""
        try:
            return self._ranks.index(global_rank)
        except ValueError:
            raise ValueError(
                f"{op}: {what}={global_rank} is not a rank of this group, whose members are {self._ranks}"
            ) from None


class GroupMember:
    """``WORLD`` is the default group once initialised; ``NON_GROUP_MEMBER`` what ``new_group`` gives outsiders."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


group = GroupMember  # as torch: dist.group.WORLD


def is_available() -> bool:
    """True when mpi4py (and so MPI) can be imported: ``pip install 'ember[distributed]'``.

    >>> import ember.distributed as dist
    >>> dist.is_available()
    True
    """
    return available()


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not since)."""
    return GroupMember.WORLD is not None


def is_mpi_available() -> bool:
    return available()


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: timedelta | None = None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Join the job's processes, as started by ``mpiexec`` (or ``python -m ember.distributed.run``).

    MPI already knows every process's rank and the world's size: ``world_size`` and ``rank``, if given, must
    agree with it. ``timeout`` bounds every collective and receive; a rank that waits longer raises, and a
    rank that raises takes the whole job down with its message and rank number.
    """
    if GroupMember.WORLD is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    Backend(backend or "mpi")
    timeout = _check_timeout(timeout, "init_process_group")
    comm = mpi().COMM_WORLD
    _check_agrees("world_size", world_size, comm.Get_size(), "processes mpiexec started (mpiexec -n N)")
    _check_agrees("rank", rank, comm.Get_rank(), "rank MPI gave this process")
    _faults.take_down_job_on_error(comm)
    GroupMember.WORLD = ProcessGroup(comm.Dup(), list(range(comm.Get_size())), timeout)
    if comm.Get_size() > 1:
        set_launch_environment(comm)


def _check_timeout(timeout, op: str) -> timedelta:
    if timeout is None:
        return default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"{op}: expected timeout to be a datetime.timedelta, but got {type(timeout).__name__}")
    return timeout


def _check_agrees(name: str, given: int, actual: int, what: str) -> None:
    if given not in (-1, None) and given != actual:
        raise ValueError(
            f"init_process_group: {name}={given}, but MPI says {actual} (the {what}); "
            f"leave {name} out: MPI supplies it"
        )


def set_launch_environment(comm) -> None:
    """Set torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) where the launcher did not."""
    local = comm.Split_type(mpi().COMM_TYPE_SHARED)
    values = {"RANK": comm.Get_rank(), "WORLD_SIZE": comm.Get_size(),
              "LOCAL_RANK": local.Get_rank(), "LOCAL_WORLD_SIZE": local.Get_size()}
    local.Free()
    for name, value in values.items():
        os.environ.setdefault(name, str(value))


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the group (the default one and with it every group, when ``group`` is None)."""
    if group is None or group is GroupMember.WORLD:
        world = _default_group("destroy_process_group")
        world._comm.Free()
        GroupMember.WORLD = None
        _faults.stop_taking_down_job()
    elif isinstance(group, ProcessGroup):
        group._comm.Free()


def _default_group(op: str) -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(
            f"{op}: Default process group has not been initialized, please make sure to call init_process_group."
        )
    return GroupMember.WORLD


def resolve(group, op: str) -> ProcessGroup | None:
    """The group an operation runs on: the default one for None; None for a process outside ``group``."""
    world = _default_group(op)
    if group is None:
        return world
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{op}: group must be a ProcessGroup from new_group (or None), not {type(group).__name__}")
    return group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the default group if None); -1 if it is not a member."""
    g = resolve(group, "get_rank")
    return -1 if g is None else g.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """How many processes ``group`` has (the default group if None); -1 if this process is not a member."""
    g = resolve(group, "get_world_size")
    return -1 if g is None else g.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    resolve(group, "get_backend")
    return Backend.MPI


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    g = resolve(group, "get_process_group_ranks")
    return list(g._ranks)


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None, backend: str | None = None,
              pg_options=None, use_local_synchronization: bool = False, group_desc: str | None = None):
    """A group of some ranks (all, if None). Every process of the default group must call it, in the same order."""
    world = _default_group("new_group")
    members = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    bad = [r for r in members if not 0 <= r < world.size()]
    if bad or len(set(members)) != len(members):
        raise ValueError(
            f"new_group: ranks must be distinct and within [0, {world.size()}), got {list(ranks)}"
        )
    Backend(backend or "mpi")
    comm = world._comm.Create(world._comm.Get_group().Incl(members))
    if comm == mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(comm, members, timeout or world._timeout)
