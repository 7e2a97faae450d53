"""Custom C and C++ extensions: compile a kernel at run time, call it on ember Tensors, make it differentiable.

>>> from ember.utils import cpp_extension
>>> source = '''
... EMBER_C_FUNCTION(twice) {
...     ember_tensor x, out;
...     if (ember_check_nargs("twice", nargs, 1) < 0 || ember_arg(args[0], "twice", "x", EMBER_FLOAT32, &x) < 0)
...         return NULL;
...     PyObject *result = ember_contiguous(&x, &x);
...     PyObject *y = result ? ember_empty_like(&x, &out) : NULL;
...     Py_XDECREF(result);
...     for (int64_t i = 0; y && i < x.numel; i++) ((float *)out.data)[i] = 2 * ((float *)x.data)[i];
...     return y;
... }
... '''
>>> module = cpp_extension.load_inline("doc_twice", c_sources=source, functions=["twice"])
>>> import ember
>>> module.twice(ember.tensor([1., 2., 3.]))
tensor([2., 4., 6.])

See docs/cpp_extension.md for C++ (``ember::Tensor`` through pybind11), caching, errors and autograd.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Sequence

from ember.utils.cpp_extension import _build
from ember.utils.cpp_extension._autograd import kernel_function
from ember.utils.cpp_extension._build import CompileError

__all__ = ["BuildExtension", "CompileError", "CppExtension", "get_cxx_compiler", "get_default_build_root",
           "include_paths", "is_ninja_available", "kernel_function", "library_paths", "load", "load_inline",
           "verify_ninja_availability"]

# torch's toolkit roots, None where the toolkit is not found: ember builds for the CPU only, so always None
CUDA_HOME = None
ROCM_HOME = None
SYCL_HOME = None


def _check_cpu_device(function: str, device_type: str) -> None:
    if device_type != "cpu":
        raise OSError(f"{function}: device_type={device_type!r} needs that device's toolkit, but ember builds for the "
                      "CPU only; use device_type='cpu'")


def include_paths(device_type: str = "cpu", torch_include_dirs: bool = True) -> list[str]:
    """The directories a C or C++ extension compiles against: ember's header, NumPy's and (when installed)
    pybind11's (none with ``torch_include_dirs=False``, the name torch gives its own). Python's own headers come
    from the compiler setup (setuptools, or ``load``).

    >>> paths = include_paths()
    >>> import os; os.path.exists(os.path.join(paths[0], "ember", "extension.h"))
    True
    """
    _check_cpu_device("include_paths", device_type)
    if not torch_include_dirs:
        return []
    paths = [str(_build.HEADER_DIR), _build.np.get_include()]
    try:
        paths.append(_build.pybind11_include())
    except ImportError:
        pass
    return paths


def library_paths(device_type: str = "cpu", torch_include_dirs: bool = True,
                  cross_target_platform: str | None = None) -> list[str]:
    """The directories of libraries an extension links against: none, since an ember extension needs only
    Python and NumPy's headers (torch lists its own libraries here)."""
    _check_cpu_device("library_paths", device_type)
    return []


def get_default_build_root() -> str:
    """Where ``load`` and ``load_inline`` build when no ``build_directory`` is given: ``$EMBER_EXTENSIONS_DIR``,
    else ``ember_extensions`` in the user's cache directory."""
    return str(_build.extensions_root())


def get_cxx_compiler() -> str:
    """The C++ compiler builds use: ``$CXX``, else ``c++``."""
    return _build.compiler(cpp=True)


def is_ninja_available() -> bool:
    """Whether the ninja build tool is on the PATH (ember's builds do not need it; torch's do)."""
    return shutil.which("ninja") is not None


def verify_ninja_availability() -> None:
    """Raise RuntimeError if ninja is not on the PATH, as torch does before its builds."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja); ember's own builds run "
                           "without it")


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"cpp_extension: the extension name must be a Python identifier (it names the module), "
                         f"got {name!r}")


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def load(name: str, sources: str | Sequence[str], extra_cflags: Sequence[str] | None = None,
         extra_cuda_cflags: Sequence[str] | None = None, extra_sycl_cflags: Sequence[str] | None = None,
         extra_ldflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
         build_directory: str | None = None, verbose: bool = False, with_cuda: bool | None = None,
         with_sycl: bool | None = None, is_python_module: bool = True, is_standalone: bool = False,
         keep_intermediates: bool = True) -> ModuleType | str:
    """Compiles C (``*.c``) and C++ (``*.cpp``, ``*.cc``) sources into a Python module and imports it.

    The sources define the module themselves: ``PYBIND11_MODULE(EMBER_EXTENSION_NAME, m)`` in C++,
    ``EMBER_MODULE(...)`` in C (``EMBER_EXTENSION_NAME`` is defined as ``name``). The build is cached by a hash
    of the sources and flags under ``build_directory``, else ``$EMBER_EXTENSIONS_DIR/<name>``, else
    ``~/.cache/ember_extensions/<name>``; a failing compiler raises ``CompileError`` with its output.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ident.c")
    >>> _ = open(path, "w").write('''#include <ember/extension.h>
    ... EMBER_C_FUNCTION(same) { return ember_check_nargs("same", nargs, 1) < 0 ? NULL : Py_NewRef(args[0]); }
    ... EMBER_MODULE(EMBER_FUNCTION(same, "its argument"))''')
    >>> load("doc_ident", [path]).same(3)
    3

    The arguments are torch's, in torch's order. ``is_python_module=False`` loads the library into the process
    (for what its static initialisers do) and returns its path. The CUDA and SYCL ones must ask for nothing: ember
    runs on the CPU. ``keep_intermediates`` has no effect (objects are built in a scratch directory).
    """
    _check_name(name)
    _check_cpu_only("load", name, extra_cuda_cflags=extra_cuda_cflags, extra_sycl_cflags=extra_sycl_cflags,
                    with_cuda=with_cuda, with_sycl=with_sycl)
    _check_not_standalone("load", is_standalone)
    paths = [Path(s).resolve() for s in _as_list(sources)]
    if not paths:
        raise ValueError(f"load: extension '{name}' has no sources; pass a list of *.c or *.cpp files")
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(f"load: source file of extension '{name}' not found: {path}")
    sources = {str(p): p.read_bytes() for p in paths}
    return _load(name, sources, build_directory, (extra_cflags, extra_ldflags, extra_include_paths), verbose,
                 is_python_module=is_python_module)


def _check_cpu_only(function: str, name: str, **requests) -> None:
    """The CUDA and SYCL arguments, which ember (CPU only) takes only when they ask for nothing."""
    asked = [f"{argument}={value!r}" for argument, value in requests.items() if value]
    if asked:
        raise OSError(f"{function}: extension '{name}' asks for a GPU build ({', '.join(asked)}), but ember runs on "
                      "the CPU only and has no CUDA or SYCL toolchain; build the C++ part alone (cpp_sources, "
                      "with_cuda=None)")


def _check_not_standalone(function: str, is_standalone: bool) -> None:
    if is_standalone:
        raise ValueError(f"{function}: is_standalone=True (an executable) is not built by ember, only libraries "
                         "loaded into Python; build the executable with your own build system")


def _load(name: str, sources: dict[str, bytes], build_directory, flags: tuple, verbose: bool,
          write: bool = False, is_python_module: bool = True) -> ModuleType | str:
    """Builds (or finds) the extension of ``sources`` (path or file name to text) and imports it (or, when it is
    not a Python module, loads it and returns its path). With ``write`` the sources are strings of
    load_inline's, written into the build dir first."""
    cflags, ldflags, includes = (_as_list(f) for f in flags)
    cpp = any(_build.is_cpp(Path(p)) for p in sources)
    key = _build.build_key(name, list(sources.values()), [*cflags, "|", *ldflags, "|", *includes], cpp)
    root = Path(build_directory) if build_directory else _build.extensions_root() / name
    build_dir = root / key
    build_dir.mkdir(parents=True, exist_ok=True)
    paths = [build_dir / p if write else Path(p) for p in sources]
    for path, text in zip(paths, sources.values()):
        if write and not path.exists():
            scratch = path.with_name(f".{path.name}.{os.getpid()}")  # whole or absent, for a concurrent reader
            scratch.write_bytes(text)
            os.replace(scratch, path)
    return _build.build(name, paths, build_dir, cflags=cflags, ldflags=ldflags, include_paths=includes,
                        verbose=verbose, is_python_module=is_python_module)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _bindings(functions: Sequence[str] | dict[str, str] | None, cpp: bool) -> str:
    if functions is None:  # the sources define the module themselves, as load's do
        return "\n"
    docs = dict(functions) if isinstance(functions, dict) else {f: f for f in _as_list(functions)}
    for function in docs:
        if not re.fullmatch(r"[A-Za-z_]\w*", function):
            raise ValueError(f"load_inline: functions must be C identifiers, got {function!r}")
    if cpp:
        body = "".join(f"\n    m.def({_c_string(f)}, &{f}, {_c_string(d)});" for f, d in docs.items())
        return f"\n\nPYBIND11_MODULE(EMBER_EXTENSION_NAME, m) {{{body}\n}}\n"
    entries = ", ".join(f"EMBER_FUNCTION({f}, {_c_string(d)})" for f, d in docs.items())
    return f"\n\nEMBER_MODULE({entries})\n"


def load_inline(name: str, cpp_sources: str | Sequence[str] | None = None,
                cuda_sources: str | Sequence[str] | None = None, sycl_sources: str | Sequence[str] | None = None,
                functions: Sequence[str] | dict[str, str] | None = None,
                extra_cflags: Sequence[str] | None = None, extra_cuda_cflags: Sequence[str] | None = None,
                extra_sycl_cflags: Sequence[str] | None = None, extra_ldflags: Sequence[str] | None = None,
                extra_include_paths: Sequence[str] | None = None, build_directory: str | None = None,
                verbose: bool = False, with_cuda: bool | None = None, with_sycl: bool | None = None,
                is_python_module: bool = True, with_pytorch_error_handling: bool = True,
                keep_intermediates: bool = True, use_pch: bool = False, no_implicit_headers: bool = False, *,
                c_sources: str | Sequence[str] | None = None) -> ModuleType | str:
    """Like ``load``, from source strings. ``#include <ember/extension.h>`` is prepended, and the module that
    binds ``functions`` (names, or a dict of name to docstring) is generated: C++ functions taking and returning
    ``ember::Tensor`` through pybind11 when there are ``cpp_sources``, else the ``EMBER_C_FUNCTION``s of
    ``c_sources``. Without ``functions`` the sources define the module, as for ``load``. C sources beside C++
    ones are compiled with the C compiler and linked in.

    >>> m = load_inline("doc_ndim", c_sources='''
    ... EMBER_C_FUNCTION(ndim) {
    ...     ember_tensor x;
    ...     return ember_arg(args[0], "ndim", "x", EMBER_ANY, &x) < 0 ? NULL : PyLong_FromLong(x.ndim);
    ... }''', functions={"ndim": "the number of dimensions"})
    >>> import ember
    >>> m.ndim(ember.ones(2, 3)), m.ndim.__doc__
    (2, 'the number of dimensions')

    The arguments are torch's, in torch's order (``c_sources`` is ember's own, by keyword only); the others are
    as in ``load``. ``no_implicit_headers=True`` leaves out the ``#include``; ``with_pytorch_error_handling``,
    ``use_pch`` and ``keep_intermediates`` have no effect (errors in bound C++ functions always come through as
    Python exceptions).
    """
    _check_name(name)
    _check_cpu_only("load_inline", name, cuda_sources=cuda_sources, sycl_sources=sycl_sources,
                    extra_cuda_cflags=extra_cuda_cflags, extra_sycl_cflags=extra_sycl_cflags, with_cuda=with_cuda,
                    with_sycl=with_sycl)
    cpp_text, c_text = "\n".join(_as_list(cpp_sources)), "\n".join(_as_list(c_sources))
    if not cpp_text.strip() and not c_text.strip():
        raise ValueError(f"load_inline: extension '{name}' has no sources; pass cpp_sources or c_sources")
    header = "" if no_implicit_headers else "#include <ember/extension.h>\n"
    files = {}
    if cpp_text.strip():
        files["main.cpp"] = header + cpp_text + _bindings(functions, cpp=True)
    if c_text.strip():
        files["kernels.c"] = header + c_text + ("\n" if cpp_text.strip() else _bindings(functions, cpp=False))
    sources = {filename: text.encode() for filename, text in files.items()}
    return _load(name, sources, build_directory, (extra_cflags, extra_ldflags, extra_include_paths), verbose,
                 write=True, is_python_module=is_python_module)


def __getattr__(name: str):
    # setuptools is needed only for ahead-of-time builds, and importing it is slow
    if name in ("CppExtension", "BuildExtension"):
        from ember.utils.cpp_extension import _setuptools
        return getattr(_setuptools, name)
    raise AttributeError(f"module 'ember.utils.cpp_extension' has no attribute '{name}'")
