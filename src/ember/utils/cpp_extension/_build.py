"""Compiling and loading an extension: the cache key, the lock, the compiler commands and their errors.

A build lives in ``<root>/<name>/<key>/`` where ``key`` hashes everything that shapes the binary (sources,
flags, compilers, the ember header, Python, NumPy and pybind11). Any change gives a new key, hence a rebuild;
an unchanged one finds its ``.so`` and loads it without compiling. A file lock serialises builds of one key
across processes, and the finished library is moved into place in one step, so a reader never sees half of it.
"""
from __future__ import annotations

import ctypes
import fcntl
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np

HEADER_DIR = Path(__file__).resolve().parent.parent.parent / "include"
C_SUFFIXES = (".c",)
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".C")
# -O3 because users write kernels for speed; hidden visibility as pybind11 asks, only PyInit_<name> is exported
COMMON_CFLAGS = ["-O3", "-fPIC", "-fvisibility=hidden", "-fdiagnostics-color=never"]
CPP_CFLAGS = ["-std=c++17"]


class CompileError(RuntimeError):
    """A compiler or linker failed; the message holds its output, with the failing source lines."""

    __module__ = "ember.utils.cpp_extension"  # where users import it from


def extensions_root() -> Path:
    """Where builds are cached: ``$EMBER_EXTENSIONS_DIR``, else ``ember_extensions`` in the user's cache dir."""
    configured = os.environ.get("EMBER_EXTENSIONS_DIR")
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "ember_extensions"


def pybind11_include() -> str:
    try:
        import pybind11
    except ImportError:
        raise ImportError(
            "C++ extensions need pybind11, which is not installed: pip install 'ember[cpp]' "
            "(plain C extensions need nothing more)") from None
    return pybind11.get_include()


def include_dirs(cpp: bool, extra: list[str]) -> list[str]:
    dirs = [str(HEADER_DIR), np.get_include(), sysconfig.get_paths()["include"]]
    return dirs + ([pybind11_include()] if cpp else []) + [str(Path(p).resolve()) for p in extra]


def compiler(cpp: bool) -> str:
    variable, default = ("CXX", "c++") if cpp else ("CC", "cc")
    chosen = os.environ.get(variable, default)
    if shutil.which(chosen.split()[0]) is None:
        raise RuntimeError(f"no {'C++' if cpp else 'C'} compiler found ('{chosen}'): install "
                           f"{'g++' if cpp else 'gcc'} or name one with the {variable} environment variable")
    return chosen


def is_cpp(source: Path) -> bool:
    if source.suffix in CPP_SUFFIXES:
        return True
    if source.suffix in C_SUFFIXES:
        return False
    raise ValueError(f"cpp_extension: cannot tell the language of '{source}': name C sources *.c and C++ "
                     f"sources *.cpp, *.cc or *.cxx")


def build_key(name: str, sources: list[bytes], flags: list[str], cpp: bool) -> str:
    digest = hashlib.sha256()
    versions = [sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "", np.__version__, compiler(False)]
    if cpp:
        versions += [pybind11_include(), compiler(True)]  # the headers' path names the installed pybind11
    for part in [name, *versions, *flags, (HEADER_DIR / "ember" / "extension.h").read_text()]:
        digest.update(part.encode() + b"\0")
    for source in sources:
        digest.update(source + b"\0")
    return digest.hexdigest()[:16]


class _Lock:
    """An exclusive lock on a file, held across processes until exit (POSIX ``flock``)."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        self.file = open(self.path, "a")
        fcntl.flock(self.file, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.file, fcntl.LOCK_UN)
        self.file.close()


def run_compiler(command: list[str], what: str, name: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        output = (result.stderr + result.stdout).strip()
        lines = output.splitlines()
        shown = "\n".join(lines[:80] + ([f"... ({len(lines) - 80} more lines)"] if len(lines) > 80 else []))
        raise CompileError(f"Error building extension '{name}': {what} failed (exit status {result.returncode}):\n"
                           f"{' '.join(command)}\n{shown}")


def compile_and_link(name: str, sources: list[Path], out: Path, cflags: list[str], ldflags: list[str],
                     includes: list[str], verbose: bool) -> None:
    """Compiles each source to an object in a scratch dir next to ``out``, links them, then moves the library
    into place."""
    cpp = any(is_cpp(s) for s in sources)
    scratch = Path(tempfile.mkdtemp(prefix="build-", dir=out.parent))
    try:
        objects = []
        for i, source in enumerate(sources):
            obj = scratch / f"{i}_{source.stem}.o"
            command = [*compiler(is_cpp(source)).split(), *COMMON_CFLAGS, *(CPP_CFLAGS if is_cpp(source) else []),
                       f"-DEMBER_EXTENSION_NAME={name}", *[f"-I{d}" for d in includes], *cflags,
                       "-c", str(source), "-o", str(obj)]
            if verbose:
                print(" ".join(command))
            run_compiler(command, f"compiling {source.name}", name)
            objects.append(str(obj))
        library = scratch / out.name
        # macOS links Python's symbols when the module is loaded, not now
        lazy = ["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else []
        command = [*compiler(cpp).split(), "-shared", *lazy, *objects, "-o", str(library), *ldflags]
        if verbose:
            print(" ".join(command))
        run_compiler(command, "linking", name)
        os.replace(library, out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def import_library(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(name: str, sources: list[Path], build_dir: Path, *, cflags: list[str], ldflags: list[str],
          include_paths: list[str], verbose: bool, is_python_module: bool = True) -> ModuleType | str:
    """The extension ``name`` built from ``sources`` into ``build_dir`` (or found there), imported; or, when it
    is not a Python module, loaded into the process (its symbols visible to libraries loaded later), its path
    returned."""
    cpp = any(is_cpp(s) for s in sources)
    includes = include_dirs(cpp, include_paths)
    build_dir.mkdir(parents=True, exist_ok=True)
    library = build_dir / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    with _Lock(build_dir / "lock"):
        if library.exists():
            if verbose:
                print(f"Loading extension module {name} from {library} (cached)")
        else:
            if verbose:
                print(f"Building extension module {name} in {build_dir}")
            compile_and_link(name, sources, library, cflags, ldflags, includes, verbose)
    if not is_python_module:
        ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
        return str(library)
    return import_library(name, library)
