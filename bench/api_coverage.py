"""How much of torch's public API ember has, namespace by namespace: functions, Tensor methods, ``linalg``, ``fft`` ...

Usage: ``.venv/bin/python bench/api_coverage.py [--missing]`` (needs torch, the test extra). Prints one row per
namespace: torch's public callables, how many ember has, the share; ``--missing`` also lists what is missing.
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
    """(label, torch's count, ember's count, sorted missing names) per namespace."""
    rows = []
    for label, theirs, mine in namespaces():
        wanted = public_callables(theirs)
        have = {name for name in wanted if mine is not None and hasattr(mine, name)}
        rows.append((label, len(wanted), len(have), sorted(wanted - have)))
    return rows


def report(rows: list, missing: bool = False) -> str:
    lines = ["| namespace | torch's public callables | ember has | share |", "|---|---|---|---|"]
    for label, wanted, have, _ in rows:
        lines.append(f"| {label} | {wanted} | {have} | {have / wanted:.0%} |")
    if missing:
        for label, _, _, names in rows:
            lines.append(f"\n{label} missing ({len(names)}): {' '.join(names)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(coverage(), missing="--missing" in sys.argv))
