"""Nested containers of arguments (tuples, lists, dicts, named tuples): flattened to leaves and rebuilt, and
described in error messages."""
from __future__ import annotations

# the one pytree implementation, shared with ember.utils._pytree (torch.utils._pytree's counterpart)
from ember.utils._pytree import tree_flatten as flatten, tree_unflatten as unflatten  # noqa: E402,F401
from ember.utils._pytree import treespec_pprint  # noqa: E402


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
    return treespec_pprint(flatten(tree)[1])


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
