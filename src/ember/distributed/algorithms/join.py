"""``Join``: training on inputs of different lengths per rank.

A rank that runs out of inputs leaves the ``with Join([...]):`` block early, and there keeps answering
the collectives the other ranks still make ("shadowing" them, through each joinable's ``JoinHook``) until
every rank has run out. Each iteration, a rank that still has inputs tells the others so
(``Join.notify_join_context``, an all-reduce of 1; a joined rank adds 0): when the sum is 0 every rank has
joined, and the hooks' ``post_hook`` runs once on each, for example to make the replicas equal again.
"""
from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import ember
from ember import distributed as dist

_SKEW_WARNING = 1000  # iterations a rank has shadowed: beyond, the data is badly unbalanced


class JoinHook:
    """What a joined rank does for one joinable: ``main_hook`` each iteration, ``post_hook`` at the end."""

    def main_hook(self) -> None:
        """Make the collectives that one iteration of a rank with inputs makes (here: none)."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once every rank has joined; ``is_last_joiner`` tells the ranks that joined last."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool


_DISABLED = _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable:
    """A class whose per-iteration collectives ``Join`` can shadow: it gives a ``join_hook``, its
    ``join_process_group`` and ``join_device``, and calls ``Join.notify_join_context(self)`` before each
    iteration's collectives. Subclasses call ``Joinable.__init__``."""

    def __init__(self) -> None:
        self._join_config = _DISABLED

    def join_hook(self, **kwargs: Any) -> JoinHook:
        raise NotImplementedError(f"{type(self).__name__} must implement join_hook() to be used with Join")

    @property
    def join_device(self) -> ember.device:
        raise NotImplementedError(f"{type(self).__name__} must implement the join_device property")

    @property
    def join_process_group(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement the join_process_group property")


class Join:
    """Context manager for uneven inputs: a rank that leaves it early shadows the others until all have.

    ``throw_on_early_termination=True`` raises on every rank as soon as one runs out, instead of shadowing;
    extra keyword arguments go to each joinable's ``join_hook``.

    >>> import ember, ember.distributed as dist
    >>> from ember import nn
    >>> from ember.distributed.algorithms.join import Join
    >>> dist.init_process_group("mpi")
    >>> model = nn.parallel.DistributedDataParallel(nn.Linear(2, 1))
    >>> with Join([model]):
    ...     for _ in range(3):      # each rank may have a different number of batches
    ...         model(ember.ones(4, 2)).sum().backward()
    >>> dist.destroy_process_group()
    """

    def __init__(self, joinables: list[Joinable], enable: bool = True, throw_on_early_termination: bool = False,
                 **kwargs: Any):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for k, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(enable, throw_on_early_termination, is_first_joinable=k == 0)
        groups = {id(j.join_process_group): j.join_process_group for j in self._joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups: every joinable must "
                             "communicate over the same group")
        self._process_group = self._joinables[0].join_process_group
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self) -> Join:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if not self._enable or kind is not None:
            return  # an exception passes through as it is
        is_last_joiner, rounds = True, 0
        while self._count_nonjoined() > 0:
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            if rounds == _SKEW_WARNING:
                warnings.warn(f"Join: rank {self._rank} has shadowed {rounds} iterations of the other ranks: "
                              "its inputs are much fewer than theirs, which slows training", stacklevel=2)
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner, rounds = False, rounds + 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count_nonjoined(self) -> int:
        """The ranks that still have inputs: each of them adds 1 in ``notify_join_context``, a joined rank 0."""
        count = ember.zeros(1)
        dist.all_reduce(count, group=self._process_group)
        return int(count.item())

    def _notify_procs_to_terminate(self) -> None:
        dist.all_reduce(ember.ones(1), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Tell the join context that this rank still has inputs (before the joinable's collectives).

        Only the first joinable of the context communicates; it returns the async work of the all-reduce
        whose result is the number of ranks that have not joined. Returns None otherwise. With
        ``throw_on_early_termination``, raises on every rank once one has run out of inputs.
        """
        config = getattr(joinable, "_join_config", None)
        if config is None:
            raise RuntimeError(f"Join: {type(joinable).__name__} must call Joinable.__init__ in its constructor")
        if not config.enable or not config.is_first_joinable:
            return None
        group = joinable.join_process_group
        work = dist.all_reduce(ember.ones(1), group=group, async_op=True)
        if config.throw_on_early_termination:
            someone_done = ember.zeros(1)
            dist.all_reduce(someone_done, group=group)
            if someone_done.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work


__all__ = ["Join", "JoinHook", "Joinable"]
