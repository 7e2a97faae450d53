"""``einsum``: sums of products named by subscripts, run as a sequence of ember ops.

Each operand first takes its diagonals (a label repeated in it) and sums out the labels no one else needs;
then the operands are contracted two at a time (in the order ``np.einsum_path`` finds cheapest for three or
more), each contraction one batched matrix product of permuted and reshaped operands. The gradient is
that of those ops, so it is differentiable to any order.

>>> import ember
>>> a = ember.tensor([[1., 2.], [3., 4.]])
>>> ember.einsum("ij,jk->ik", a, a)
tensor([[ 7., 10.],
        [15., 22.]])
>>> ember.einsum("ii", a)
tensor(5.)
"""
from __future__ import annotations

import functools
import math
import operator as _operator
import string

import numpy as np

from ember._ops import linalg as _linalg, views as _views
from ember._ops._support import ember_function, require_tensor
from ember._ops.products import diagonal_view
from ember._ops.reduction import sum as _sum
from ember._tensor import Tensor
from ember.amp import autocast_mode as _autocast
from ember.backends.opt_einsum import _flags as _order_flags

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # torch's label order: A-Z before a-z
_ELLIPSIS = "."  # the label of the ellipsis's dims, numbered from the right: (".", 1) is the last


@ember_function
def einsum(equation, *operands) -> Tensor:
    """Sum of products over the subscripts of ``equation`` ("ij,jk->ik"); also the sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    >>> ember.einsum("i,i->", ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor(11.)
    >>> ember.einsum(ember.ones(2, 3), [0, 1], [1, 0]).shape
    ember.Size([3, 2])
    """
    if not isinstance(equation, str):
        equation, operands = _from_sublists((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    tensors = [require_tensor(t, "einsum", i + 2, "operands") for i, t in enumerate(operands)]
    key = (equation, tuple([t._data.shape for t in tensors]))
    if len(tensors) > 2:  # the order of three or more follows ember.backends.opt_einsum's flags
        key += (_order_flags["enabled"], _order_flags["strategy"])
    plan = None if _autocast.lowering() else _PLANS.get(key)  # (a plan has no casts to replay)
    if plan is not None:  # these shapes were planned (and checked) before: only the dtypes are new
        _check_dtypes(tensors)
        return plan.replay(tensors)
    plan = _Plan(tensors)
    result = _planned(equation, tensors, plan)
    if plan.steps is not None:
        if len(_PLANS) > 256:
            _PLANS.clear()
        _PLANS[key] = plan.finished(result)
    return result


def _planned(equation: str, tensors: list, plan: "_Plan") -> Tensor:
    """einsum's work, each op run through ``plan``, which records it."""
    terms, output = _parse(equation, tuple(t._data.ndim for t in tensors))
    _check_dtypes(tensors)
    sizes = _label_sizes(terms, tensors)
    pending = {i: _prepared(plan, t, term, terms[:i] + terms[i + 1:], output)
               for i, (t, term) in enumerate(zip(tensors, terms))}
    for new, (i, j) in enumerate(_pairs([term for _, term in pending.values()], output, sizes), len(pending)):
        (x, labels_x), (y, labels_y) = pending.pop(i), pending.pop(j)
        rest = [term for _, term in pending.values()]
        final = None if rest else output  # the last product is laid out in the output's order
        pending[new] = _contract(plan, x, labels_x, y, labels_y, set(output).union(*rest), sizes, final)
    (result, labels), = pending.values()
    result = _permuted(plan, result, labels, output)
    if any(result is t for t in tensors):  # nothing to do: as torch, a view (an identity permute), not the input
        result = plan.run(_views.permute.__wrapped__, result, tuple(range(len(output))))
    return result


_PLANS: dict = {}  # (equation, operand shapes) -> the _Plan that computes it: a model repeats a few equations


class _Plan:
    """The ops that one einsum call ran, each with the operands it took: replayed on new operands of the same
    shapes, it computes their einsum without parsing, checking and planning again (the ops are the same ember
    ops, so the graph and gradients are too).
    """

    def __init__(self, operands: list):
        self.values = list(operands)  # every tensor so far, by number: the operands, then each op's result
        self.numbers = {}  # id of a tensor in values -> its number (values keeps them alive: ids stay unique)
        for number in range(len(operands) - 1, -1, -1):
            self.numbers[id(operands[number])] = number
        self.steps = []  # (function, its arguments with None for tensors, ((position, tensor number), ...))
        if len(self.numbers) < len(operands):  # one tensor passed twice (x, x): its steps could not tell x from y
            self.steps = None
        self.result = -1

    def run(self, function, *args):
        """``function(*args)``, recorded."""
        tensors = []
        for position, arg in enumerate(args):
            if isinstance(arg, Tensor):
                number = self.numbers.get(id(arg))
                if number is None:  # a tensor from elsewhere: nothing to replay it from, so no plan is kept
                    self.steps = None
                tensors.append((position, number))
        out = function(*args)
        if self.steps is not None:
            self.steps.append((function, tuple([None if isinstance(a, Tensor) else a for a in args]),
                               tuple(tensors)))
        self.numbers[id(out)] = len(self.values)
        self.values.append(out)
        return out

    def finished(self, result: Tensor) -> "_Plan":
        """The plan, with the number of the result, and no tensor kept."""
        self.result = self.numbers[id(result)]
        self.values, self.numbers = None, None
        return self

    def replay(self, operands: list) -> Tensor:
        values = list(operands)
        for function, args, tensors in self.steps:
            args = list(args)
            for position, number in tensors:
                args[position] = values[number]
            values.append(function(*args))
        return values[self.result]


def _from_sublists(arguments: tuple) -> tuple:
    """The sublist form as an equation and its operands: ``(a, [0, 1], b, [1], [0])`` is ``"AB,B->A"``."""
    operands, terms = arguments[0::2], arguments[1::2]
    output = None
    if len(arguments) % 2:  # an odd count: the last is the output's sublist
        operands, output = operands[:-1], arguments[-1]
    text = ",".join(_sublist_text(term) for term in terms)
    return (text if output is None else f"{text}->{_sublist_text(output)}"), operands


def _sublist_text(sublist) -> str:
    letters = []
    for label in sublist:
        if label is Ellipsis:
            letters.append("...")
        elif isinstance(label, int) and 0 <= label < 52:
            letters.append(_LETTERS[label])
        else:
            raise RuntimeError(f"einsum(): subscript in subscript list is not within the valid range [0, 52), "
                             f"got {label!r}")
    return "".join(letters)


@functools.lru_cache(maxsize=256)  # a model runs the same few equations on the same ranks again and again
def _parse(equation: str, ndims: tuple) -> tuple:
    """Each operand's labels (ellipsis dims expanded) and the output's labels, as tuples (shared by calls)."""
    equation = equation.replace(" ", "")
    inputs, arrow, output_text = equation.partition("->")
    texts = inputs.split(",")
    if len(texts) != len(ndims):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation" if
                           len(ndims) > len(texts) else
                           f"einsum(): fewer operands were provided than specified in the equation "
                           f"({len(texts)} in {equation!r}, {len(ndims)} given)")
    terms = [_term(text, ndim, i) for i, (text, ndim) in enumerate(zip(texts, ndims))]
    ellipsis_dims = max((sum(1 for label in term if isinstance(label, tuple)) for term in terms), default=0)
    if arrow:
        output = _term(output_text, ellipsis_dims, None)
    else:
        counts = {}
        for term in terms:
            for label in term:
                counts[label] = counts.get(label, 0) + 1
        once = [label for label, n in counts.items() if n == 1 and isinstance(label, str)]
        letters = sorted(once, key=_LETTERS.index)
        output = [(_ELLIPSIS, k) for k in range(ellipsis_dims, 0, -1)] + letters
    _check_output(output, terms)
    return tuple(map(tuple, terms)), tuple(output)


def _term(text: str, ndim: int, operand: int | None) -> list:
    """The labels of one operand (``operand`` is None for the output): letters, and (".", k) for ellipsis dims."""
    before, dots, after = text.partition("...")
    for letter in before + after:
        if letter not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index {text.index(letter)} in the equation "
                             f"string, subscripts must be in [a-zA-Z], got {letter!r}")
    if "..." in after or ("." in before + after):
        raise RuntimeError("einsum(): found '.' for operand that is not part of any ellipsis; write '...' once")
    if operand is None:
        ellipsis_dims = ndim if dots else 0
    else:
        ellipsis_dims = ndim - len(before) - len(after)
        if ellipsis_dims < 0 or (ellipsis_dims and not dots):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(before + after)}) does not "
                               f"match the number of dimensions ({ndim}) for operand {operand}"
                               f"{'' if dots else ' and no ellipsis was given'}")
    return list(before) + [(_ELLIPSIS, k) for k in range(ellipsis_dims, 0, -1)] + list(after)


def _check_output(output: list, terms: list) -> None:
    seen = set()
    for label in output:
        if label in seen:
            raise RuntimeError(f"einsum(): output subscript {label} appears more than once in the output")
        if isinstance(label, str) and not any(label in term for term in terms):
            raise RuntimeError(f"einsum(): output subscript {label} does not appear in the equation for any input "
                             "operand")
        seen.add(label)


def _check_dtypes(tensors: list) -> None:
    """One dtype for all operands; under autocast, the dtype each has once autocast has cast it."""
    if len({t._data.dtype for t in tensors}) < 2:
        return
    dtype = _autocast.lowered_dtype(tensors[0])
    for t in tensors:
        if _autocast.lowered_dtype(t) != dtype:
            raise RuntimeError(f"einsum(): expected scalar type {dtype} but found "
                               f"{_autocast.lowered_dtype(t)}: all operands must have the same dtype")


def _label_sizes(terms: list, tensors: list) -> dict:
    """The size of each label: equal wherever it appears, or 1 in some operands (those broadcast)."""
    sizes = {}
    for i, (term, t) in enumerate(zip(terms, tensors)):
        for label, n in zip(term, t._data.shape):
            known = sizes.get(label, 1)
            if n != known and known != 1 and n != 1:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                                   f"subscript {label[0] if isinstance(label, tuple) else label} has size {n} for "
                                   f"operand {i}, which does not broadcast with previously seen size {known}")
            sizes[label] = n if known == 1 else known
    return sizes


def _prepared(plan: _Plan, x: Tensor, term: list, others: list, output: list) -> tuple:
    """``x`` with its repeated labels reduced to diagonals and the labels nobody else needs summed out."""
    labels = list(term)
    for label in dict.fromkeys(term):
        while labels.count(label) > 1:
            first = labels.index(label)
            second = labels.index(label, first + 1)
            x = plan.run(diagonal_view, x, 0, first, second)  # the diagonal moves to the last dim
            labels = [lab for k, lab in enumerate(labels) if k not in (first, second)] + [label]
    needed = set(output).union(*others)
    unused = [k for k, label in enumerate(labels) if label not in needed]
    if unused:
        x = plan.run(_sum.__wrapped__, x, tuple(unused))
        labels = [label for k, label in enumerate(labels) if k not in unused]
    return x, labels


def _pairs(terms: list, output: list, sizes: dict) -> list:
    """The order of pairwise contractions, as pairs of operand numbers: the operands are 0, 1, ... and each
    product gets the next number."""
    if len(terms) < 3:
        return [(0, 1)] if len(terms) == 2 else []
    every = [label for term in terms for label in term] + list(output)
    names = {label: _LETTERS[i] for i, label in enumerate(dict.fromkeys(every))}
    equation = ",".join("".join(names[label] for label in term) for term in terms)
    equation += "->" + "".join(names[label] for label in output)
    shapes = [np.broadcast_to(np.empty(()), tuple(sizes[label] for label in term)) for term in terms]  # no memory
    alive, pairs, count = list(range(len(terms))), [], len(terms)
    for step in np.einsum_path(equation, *shapes, optimize=_search(len(terms)))[0][1:]:
        group = [alive[i] for i in step]  # NumPy's list: the step's operands leave, their product comes last
        alive = [number for number in alive if number not in group]
        while len(group) > 1:  # NumPy may take three at once; two at a time here
            pairs.append((group[0], group[1]))
            group = [count] + group[2:]
            count += 1
        alive.append(group[0])
    return pairs


def _search(n_operands: int):
    """NumPy's path search for ``ember.backends.opt_einsum``'s flags: off, left to right (as torch without
    opt_einsum); ``"auto"``, the optimal order for up to four operands and a greedy one beyond (opt_einsum's own
    choice for those counts is the same, or a branch-and-bound search NumPy lacks)."""
    if not _order_flags["enabled"]:
        return ["einsum_path"] + [(0, 1)] * (n_operands - 1)
    strategy = _order_flags["strategy"]
    if strategy == "auto":
        strategy = "optimal" if n_operands <= 4 else "greedy"
    return strategy


def _contract(plan: _Plan, x: Tensor, labels_x: list, y: Tensor, labels_y: list, keep: set, sizes: dict,
              final) -> tuple:
    """``x`` times ``y`` summed over their shared labels that ``keep`` does not hold: one batched product.

    With ``final`` (the output's labels) the product's dims come in that order where one product can give it.
    """
    x, labels_x = _summed_out(plan, x, labels_x, keep | set(labels_y))
    y, labels_y = _summed_out(plan, y, labels_y, keep | set(labels_x))
    shared = [label for label in labels_x if label in labels_y]
    batch = [label for label in shared if label in keep]
    inner = [label for label in shared if label not in keep]
    left = [label for label in labels_x if label not in shared]
    right = [label for label in labels_y if label not in shared]
    if final is not None:
        batch, left, right = (sorted(group, key=final.index) for group in (batch, left, right))
        if left and right and final.index(right[0]) < final.index(left[0]):  # y @ x gives the output's order
            x, labels_x, y, labels_y, left, right = y, labels_y, x, labels_x, right, left
    if not inner:  # nothing to sum: a broadcast product, as torch
        product = plan.run(_operator.mul, _outer_operand(plan, x, labels_x, batch, left, 0, len(right)),
                           _outer_operand(plan, y, labels_y, batch, right, len(left), 0))
        return product, batch + left + right
    x = _autocast.lowered(_arranged(plan, x, labels_x, (batch, left, inner), sizes))  # (a cast: no plan kept)
    y = _autocast.lowered(_arranged(plan, y, labels_y, (batch, inner, right), sizes))
    product = plan.run(_linalg.BatchMatMul.apply if batch else _linalg.MatMul.apply, x, y)
    labels = batch + left + right
    return plan.run(_views.reshape.__wrapped__, product, tuple(sizes[label] for label in labels)), labels


def _outer_operand(plan: _Plan, x: Tensor, labels: list, batch: list, own: list, before: int,
                   after: int) -> Tensor:
    """``x`` in the order ``batch + own``, with ``before`` dims of size 1 between the two groups and ``after`` at
    the end: one side of a broadcast product."""
    x = _permuted(plan, x, labels, batch + own)
    shape = x._data.shape
    return plan.run(_views.reshape.__wrapped__, x,
                    shape[:len(batch)] + (1,) * before + shape[len(batch):] + (1,) * after)


def _permuted(plan: _Plan, x: Tensor, labels: list, order: list) -> Tensor:
    permutation = tuple(labels.index(label) for label in order)
    if permutation == tuple(range(len(permutation))):
        return x
    return plan.run(_views.permute.__wrapped__, x, permutation)


def _summed_out(plan: _Plan, x: Tensor, labels: list, needed: set) -> tuple:
    unused = tuple(k for k, label in enumerate(labels) if label not in needed)
    if not unused:
        return x, labels
    return plan.run(_sum.__wrapped__, x, unused), [label for label in labels if label not in needed]


def _arranged(plan: _Plan, x: Tensor, labels: list, groups: tuple, sizes: dict) -> Tensor:
    """``x`` permuted to the labels of ``groups`` and reshaped to one dim per non-empty group (batch first)."""
    x = _permuted(plan, x, labels, [label for group in groups for label in group])
    full = tuple(sizes[label] for group in groups for label in group)
    if x._data.shape != full:  # a size-1 dim against a larger one elsewhere: broadcast it
        x = plan.run(_views.expand.__wrapped__, x, full)
    batch, rows, columns = (math.prod(sizes[label] for label in group) for group in groups)
    shape = (batch, rows, columns) if groups[0] else (rows, columns)
    return x if x._data.shape == shape else plan.run(_views.reshape.__wrapped__, x, shape)
