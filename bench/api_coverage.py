"""How much of torch's public API ember has, namespace by namespace: functions, Tensor methods, ``linalg``, ``fft`` ...

Usage: ``.venv/bin/python bench/api_coverage.py [--missing]`` (needs torch, the test extra). Prints one row per
namespace: torch's public callables, how many ember has, the share; ``--missing`` also lists what is missing.

The sub-namespaces (``torch.cpu``, ``torch.autograd.graph``, ``torch.optim`` ...) count only the names torch
makes there: those in the module's ``__all__``, defined in the module or a submodule of its own, or bound from
torch's C extension; what the module merely imports (``typing``'s names, ``functools``, another torch module's helpers)
is not its API and is left out.
"""
from __future__ import annotations

import sys


def public_callables(namespace) -> set:
    """The public names of ``namespace`` that are functions or classes (not modules, constants or dtypes)."""
    import types

    names = set()
    for name in dir(namespace):
        if name.startswith("_"):
            continue
        value = getattr(namespace, name, None)
        if callable(value) and not isinstance(value, types.ModuleType):
            names.add(name)
    return names


def own_public_callables(namespace) -> set:
    """The public callables a sub-namespace makes (see the module's docstring): not those it only imports."""
    listed = set(getattr(namespace, "__all__", ()))
    names = set()
    for name in public_callables(namespace):
        home = getattr(getattr(namespace, name), "__module__", None) or ""
        own = home == namespace.__name__ or home.startswith(namespace.__name__ + ".")  # (its private submodules)
        if name in listed or own or home.startswith("torch._C"):
            names.add(name)
    return names


# torch's sub-namespaces compared name by name, as dotted paths below ``torch``
SUBSPACES = (
    "cpu", "autograd", "autograd.graph", "autograd.functional", "autograd.forward_ad", "library", "sparse",
    "nn.init", "nn.utils", "nn.utils.rnn", "optim", "optim.lr_scheduler", "utils.data", "utils.checkpoint",
    "distributions", "func", "random", "testing", "overrides", "backends", "backends.cpu", "backends.mkl",
    "backends.mkldnn", "backends.nnpack", "backends.openmp", "backends.opt_einsum",
)


def subspace(root, path: str):
    """``root``'s namespace at the dotted ``path``, or None where it has none."""
    import types

    for part in path.split("."):
        root = getattr(root, part, None)
    inner = getattr(root, "m", None)  # torch wraps some backends in a module object holding the real one as .m
    return inner if type(root) is not types.ModuleType and isinstance(inner, types.ModuleType) else root


def subspaces():
    """(label, torch's namespace, ember's namespace or None) for each sub-namespace compared."""
    import importlib

    import torch

    import ember

    for path in SUBSPACES:
        importlib.import_module(f"torch.{path}")  # (some load only when imported)
    return [(f"torch.{path}", subspace(torch, path), subspace(ember, path)) for path in SUBSPACES]


def namespaces():
    """(label, torch's namespace, ember's namespace or None) for each namespace compared."""
    import torch

    import ember

    return [
        ("torch.<function>", torch, ember),
        ("torch.Tensor.<method>", torch.Tensor, ember.Tensor),
        ("torch.linalg.<function>", torch.linalg, ember.linalg),
        ("torch.special.<function>", torch.special, getattr(ember, "special", None)),
        ("torch.nn.functional.<function>", torch.nn.functional, ember.nn.functional),
        ("torch.fft.<function>", torch.fft, ember.fft),
    ]


def coverage() -> list:
    """(label, torch's count, ember's count, sorted missing names) per namespace, then per sub-namespace."""
    compared = [(label, theirs, mine, public_callables) for label, theirs, mine in namespaces()]
    compared += [(label, theirs, mine, own_public_callables) for label, theirs, mine in subspaces()]
    rows = []
    for label, theirs, mine, names_of in compared:
        wanted = names_of(theirs)
        have = {name for name in wanted if mine is not None and hasattr(mine, name)}
        rows.append((label, len(wanted), len(have), sorted(wanted - have)))
    return rows


def report(rows: list, missing: bool = False) -> str:
    lines = ["| namespace | torch's public callables | ember has | share |", "|---|---|---|---|"]
    for label, wanted, have, _ in rows:
        lines.append(f"| {label} | {wanted} | {have} | {have / wanted:.0%} |" if wanted else f"| {label} | 0 | 0 | - |")
    if missing:
        for label, _, _, names in rows:
            lines.append(f"\n{label} missing ({len(names)}): {' '.join(names)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(coverage(), missing="--missing" in sys.argv))
