"""Run a PyTorch program under ember, unchanged: ``python tests/programs/as_ember.py PROGRAM [ARGS...]``.

An import hook makes ``torch`` and every ``torch.<sub>`` resolve to ``ember`` and ``ember.<sub>``, then
the program runs as ``__main__`` with ``sys.argv`` set to ``[PROGRAM, ARGS...]``. Run plainly, the same
file uses torch; the corpus test compares what the two runs print.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys
from types import ModuleType


class _Alias(importlib.abc.Loader):
    """Loads ``torch.x.y`` as the already importable ``ember.x.y``: the same module object under both names."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        pass  # the ember module ran when it was imported under its own name


class TorchToEmber(importlib.abc.MetaPathFinder):
    """Finds ``torch`` and ``torch.*`` before any installed torch can be found."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        ember_name = "ember" + fullname[len("torch"):]
        if importlib.util.find_spec(ember_name) is None:
            return None  # the program then fails with torch's own ModuleNotFoundError, naming torch.<sub>
        return importlib.machinery.ModuleSpec(fullname, _Alias(ember_name))


def install() -> None:
    """Put the hook first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, TorchToEmber) for finder in sys.meta_path):
        sys.meta_path.insert(0, TorchToEmber())


def run_as_main(argv: list[str]) -> None:
    """Run the program ``argv[0]`` as ``__main__`` with the ``sys.argv`` and ``sys.path[0]`` a plain run has."""
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
    runpy.run_path(argv[0], run_name="__main__")


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: as_ember.py PROGRAM [ARGS...]")
    install()
    run_as_main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
