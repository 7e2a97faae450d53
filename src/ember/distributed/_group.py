"""Process groups: the default group of every process, and sub-groups, each a communicator of its own.

A group talks through MPI (backend "mpi", for processes started by ``mpiexec``) or through ember's TCP
backend (backend "gloo": processes started any other way, as by ``ember.multiprocessing.spawn``, meet
through a store). Both offer the same communicator calls, so the collectives do not tell them apart. On
MPI a group owns a duplicate of MPI's communicator, so ember's messages never meet those of other MPI
code in the same program.
"""
from __future__ import annotations

import enum
import os
from datetime import timedelta

from ember.distributed import _faults, _tcp
from ember.distributed._mpi import available, mpi
from ember.distributed._rendezvous import rendezvous
from ember.distributed._store import Store
from ember.distributed._tcp_mesh import connect_mesh

default_pg_timeout = timedelta(minutes=30)  # as torch's default for its CPU backend
_BACKENDS = ("mpi", "gloo")  # gloo, torch's CPU backend, is ember's TCP backend (or MPI under mpiexec)
# What MPI launchers (MPICH's hydra, Open MPI, PMIx, MVAPICH) set in the processes they start
_MPI_LAUNCH_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_SIZE")
_world_store: Store | None = None  # the store init_process_group made (closed with the default group)


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
    """A backend's name, lower-cased: ``"gloo"`` (TCP, or MPI under mpiexec) or ``"mpi"``.

    >>> from ember.distributed import Backend
    >>> Backend("GLOO")
    'gloo'
    """

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str):
        if isinstance(name, str) and name.lower() == "nccl":
            raise RuntimeError(
                "Distributed package doesn't have NCCL built in: ember runs on the CPU; use backend='gloo' "
                "(TCP) or backend='mpi'"
            )
        if not isinstance(name, str) or name.lower() not in _BACKENDS:
            raise ValueError(
                f"Invalid backend: '{name}'; ember.distributed has backend='gloo' (TCP, or MPI under mpiexec) "
                "and backend='mpi'"
            )
        return super().__new__(cls, name.lower())


class ProcessGroup:
    """Some of the processes, and the communicator they talk through (MPI's, or the TCP backend's)."""

    def __init__(self, comm, ranks: list[int], timeout: timedelta, backend: str = "mpi"):
        self._comm = comm
        self._ranks = ranks  # the global rank of each member, in the group's order
        self._timeout = timeout
        self._backend = backend
        # mpi4py's MPI module, or the TCP backend's module of the same names (IN_PLACE, SUM, Request, ...)
        self.api = mpi() if backend == "mpi" else _tcp
        self._polled = backend == "mpi"  # MPI advances only inside its calls: waits must poll it

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return self._backend

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend}, rank={self.rank()}, size={self.size()})"

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
    """True: the TCP backend needs only the standard library (MPI is ``is_mpi_available()``).

    >>> import ember.distributed as dist
    >>> dist.is_available()
    True
    """
    return True


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` has not since)."""
    return GroupMember.WORLD is not None


def is_mpi_available() -> bool:
    """True when mpi4py (and so MPI) can be imported: ``pip install 'ember[distributed]'``."""
    return available()


def is_gloo_available() -> bool:
    """True: backend "gloo" is ember's TCP backend."""
    return True


def is_nccl_available() -> bool:
    return False


def _launched_by_mpi() -> bool:
    return any(name in os.environ for name in _MPI_LAUNCH_VARIABLES)


def _uses_mpi(backend: str | None, init_method: str | None, store) -> bool:
    """MPI when asked for, or under mpiexec unless a rendezvous is named; the TCP backend otherwise."""
    if backend is not None and Backend(backend) == Backend.MPI:
        return True
    return _launched_by_mpi() and init_method is None and store is None


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: timedelta | None = None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Join the job's processes: over TCP (backend "gloo"), or over MPI (backend "mpi", or under ``mpiexec``).

    Over TCP the processes meet through ``store``, or the store ``init_method`` names: ``"env://"`` (the
    default: ``MASTER_ADDR`` and ``MASTER_PORT``, and ``RANK`` and ``WORLD_SIZE`` unless passed),
    ``"tcp://host:port"`` or ``"file:///path"``; then every rank connects to every other. A rank whose
    peer ends fails instead of waiting for it. Under MPI, MPI knows every process's rank and the world's
    size: ``world_size`` and ``rank``, if given, must agree with it, and a rank that raises takes the whole
    job down with its message and rank number. ``timeout`` bounds every collective and receive.

    >>> import ember.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
    >>> dist.get_backend(), dist.get_world_size()
    ('gloo', 1)
    >>> dist.destroy_process_group()
    """
    if GroupMember.WORLD is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if backend is not None:
        Backend(backend)
    timeout = _check_timeout(timeout, "init_process_group")
    if not _uses_mpi(backend, init_method, store):
        _init_tcp(init_method, timeout, world_size, rank, store)
        return
    comm = mpi().COMM_WORLD
    _check_agrees("world_size", world_size, comm.Get_size(), "processes mpiexec started (mpiexec -n N)")
    _check_agrees("rank", rank, comm.Get_rank(), "rank MPI gave this process")
    _faults.take_down_job_on_error(comm)
    GroupMember.WORLD = ProcessGroup(comm.Dup(), list(range(comm.Get_size())), timeout)
    if comm.Get_size() > 1:
        set_launch_environment(comm, mpi())


def _init_tcp(init_method: str | None, timeout: timedelta, world_size: int, rank: int, store) -> None:
    global _world_store
    if store is None:
        store, rank, world_size = rendezvous(init_method or "env://", rank, world_size, timeout)
        _world_store = store
    elif init_method is not None:
        raise ValueError("init_process_group: pass either init_method or store, not both")
    elif world_size is None or world_size < 1 or rank is None or not 0 <= rank < world_size:
        raise ValueError(
            f"init_process_group: with a store, pass world_size (a positive integer) and this process's rank "
            f"in [0, world_size); got world_size={world_size}, rank={rank}"
        )
    mesh = connect_mesh(store, rank, world_size, timeout.total_seconds())
    comm = _tcp.Communicator(mesh, list(range(world_size)), "0", owns_mesh=True)
    GroupMember.WORLD = ProcessGroup(comm, list(range(world_size)), timeout, Backend.GLOO)


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


def set_launch_environment(comm, api) -> None:
    """Set torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) where the launcher did not."""
    local = comm.Split_type(api.COMM_TYPE_SHARED)
    values = {"RANK": comm.Get_rank(), "WORLD_SIZE": comm.Get_size(),
              "LOCAL_RANK": local.Get_rank(), "LOCAL_WORLD_SIZE": local.Get_size()}
    local.Free()
    for name, value in values.items():
        os.environ.setdefault(name, str(value))


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the group (the default one and with it every group, when ``group`` is None)."""
    if group is None or group is GroupMember.WORLD:
        global _world_store
        world = _default_group("destroy_process_group")
        world._comm.Free()
        GroupMember.WORLD = None
        _faults.stop_taking_down_job()
        if _world_store is not None:
            _world_store._close()
            _world_store = None
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
    """The group's backend: "gloo" over TCP, "mpi" over MPI."""
    g = resolve(group, "get_backend")
    return Backend((g or _default_group("get_backend")).name())


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
    if backend is not None:
        Backend(backend)
    comm = world._comm.Create(world._comm.Get_group().Incl(members))
    if comm == world.api.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(comm, members, timeout or world._timeout, world.name())
