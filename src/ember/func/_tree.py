"""Nested containers of arguments (tuples, lists, dicts, named tuples): flattened to leaves and rebuilt."""
from __future__ import annotations

_LEAF = None


def flatten(tree) -> tuple[list, object]:
    """The leaves of ``tree`` in order, and a spec that ``unflatten`` rebuilds it from."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list):
    if isinstance(tree, (tuple, list)):
        return (type(tree), None, [_flatten(item, leaves) for item in tree])
    if isinstance(tree, dict):
        keys = list(tree)
        return (dict, keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return _LEAF


def unflatten(leaves, spec):
    return _unflatten(iter(leaves), spec)


def _unflatten(leaves, spec):
    if spec is _LEAF:
        return next(leaves)
    kind, keys, children = spec
    items = [_unflatten(leaves, child) for child in children]
    if kind is dict:
        return dict(zip(keys, items))
    if hasattr(kind, "_fields"):
        return kind(*items)
    return kind(items)


def _described(tree) -> str:
    """A short account of a tree's outer structure, for error messages (``a tuple of 2``, ``a single Tensor``)."""
    if isinstance(tree, dict):
        return f"a dict with keys {sorted(tree, key=repr)}"
    if isinstance(tree, (tuple, list)):
        return f"a {type(tree).__name__} of {len(tree)}"
    from ember._tensor import Tensor

    return "a single Tensor" if isinstance(tree, Tensor) else f"a single {type(tree).__name__}"


def structure(tree) -> str:
    """A tree's nesting with its leaves as ``*``, for error messages: ``(*, {'a': *})``."""
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{key!r}: {structure(value)}" for key, value in tree.items()) + "}"
    if isinstance(tree, list):
        return "[" + ", ".join(structure(item) for item in tree) + "]"
    if isinstance(tree, tuple):
        return "(" + ", ".join(structure(item) for item in tree) + ("," if len(tree) == 1 else "") + ")"
    return "*"


def broadcast(prefix, tree, what: str) -> list:
    """One entry of ``prefix`` per leaf of ``tree``: a leaf of ``prefix`` (an int or None) covers a whole subtree."""
    out: list = []
    _broadcast(prefix, tree, what, out)
    return out


def _broadcast(prefix, tree, what: str, out: list) -> None:
    if isinstance(prefix, (tuple, list, dict)):
        same_kind = isinstance(tree, (tuple, list)) if isinstance(prefix, (tuple, list)) else isinstance(tree, dict)
        if not same_kind or len(prefix) != len(tree) or isinstance(tree, dict) and set(prefix) != set(tree):
            subject = "outputs" if what == "out_dims" else "inputs"
            raise ValueError(
                f"vmap: {what} is not compatible with the structure of `{subject}`: {what} is {prefix!r} but the "
                f"{subject} are {_described(tree)}; give one entry per {subject[:-1]} (or a single int or None for all)"
            )
        items = prefix.items() if isinstance(prefix, dict) else enumerate(prefix)
        for key, sub in items:
            _broadcast(sub, tree[key], what, out)
        return
    out.extend([prefix] * len(flatten(tree)[0]))
