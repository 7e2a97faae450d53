"""What to paste into a bug report: ember's, NumPy's and Python's versions, the OS, the BLAS that NumPy
computes with and which optional extras are installed. As ``torch.utils.collect_env``, it runs as a program:

    python -m ember.utils.collect_env

>>> from ember.utils.collect_env import get_env_info, get_pretty_env_info
>>> get_env_info().ember_version == ember.__version__
True
>>> get_pretty_env_info().splitlines()[0].startswith("ember version: ")
True

ember runs on the CPU only and is pure Python over NumPy, so there are no GPU, compiler or build fields.
"""
from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from collections import namedtuple
from importlib import metadata

__all__ = ["SystemEnv", "get_env_info", "get_pretty_env_info", "main"]

SystemEnv = namedtuple("SystemEnv", [
    "ember_version", "numpy_version", "python_version", "python_platform", "os", "libc_version",
    "cpu_capability", "num_threads", "blas", "matrix_products", "extras", "cpu_info",
])

# the optional extras of pyproject.toml, and the distribution each installs that ember loads
_EXTRAS = (
    ("bfloat16", "ml_dtypes"), ("sparse", "scipy"), ("mkl", "mkl"), ("threads", "threadpoolctl"),
    ("safetensors", "safetensors"), ("tensorboard", "tensorboard"), ("cpp", "pybind11"), ("graph", "graphviz"),
    ("distributed", "mpi4py"),
)


def get_python_version() -> str:
    return f"{sys.version} ({sys.maxsize.bit_length() + 1}-bit runtime)"


def get_os() -> str:
    """The operating system's name and version with the machine's architecture, as torch reports it."""
    machine = platform.machine()
    if sys.platform == "darwin":
        return f"macOS {platform.mac_ver()[0]} ({machine})"
    if sys.platform in ("win32", "cygwin"):
        return f"{platform.system()} {platform.release()} ({platform.version()}) ({machine})"
    if sys.platform.startswith("linux"):
        return f"{_linux_release()} ({machine})"
    return sys.platform


def _linux_release() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", "linux")
    except OSError:  # no /etc/os-release
        return "linux"


def get_libc_version() -> str:
    if not sys.platform.startswith("linux"):
        return "N/A"
    name, version = platform.libc_ver()
    return f"{name}-{version}" if name else "N/A"


def get_extras() -> list[tuple[str, str, str | None]]:
    """Each optional extra with the distribution it brings and that distribution's version (None: not installed)."""
    return [(extra, distribution, _installed_version(distribution)) for extra, distribution in _EXTRAS]


def _installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def get_cpu_info() -> str:
    """``lscpu``'s report on Linux (as torch gives), else the processor's name."""
    lscpu = shutil.which("lscpu") if sys.platform.startswith("linux") else None
    if lscpu is None:
        return platform.processor() or "Could not collect"
    try:
        return subprocess.run([lscpu], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "Could not collect"


def get_env_info() -> SystemEnv:
    """The facts that ``get_pretty_env_info`` prints."""
    import numpy

    import ember
    from ember import __config__
    from ember.backends.cpu import get_cpu_capability

    return SystemEnv(
        ember_version=ember.__version__, numpy_version=numpy.__version__, python_version=get_python_version(),
        python_platform=platform.platform(), os=get_os(), libc_version=get_libc_version(),
        cpu_capability=get_cpu_capability(), num_threads=ember.get_num_threads(),
        blas=__config__._numpy_blas(), matrix_products=__config__._products_line(), extras=get_extras(),
        cpu_info=get_cpu_info(),
    )


def pretty_str(env: SystemEnv) -> str:
    """``env`` laid out as torch's report: ``name: value`` lines in blank-line-separated groups."""
    extras = "\n".join(f"[{extra}] {distribution}=={version}" if version else
                       f"[{extra}] {distribution}: not installed" for extra, distribution, version in env.extras)
    return "\n".join([
        f"ember version: {env.ember_version}",
        f"NumPy version: {env.numpy_version}",
        "Devices: CPU only (ember has no GPU backend: ember.cuda, ember.xpu and ember.mps are never available)",
        "",
        f"OS: {env.os}",
        f"Libc version: {env.libc_version}",
        "",
        f"Python version: {env.python_version}",
        f"Python platform: {env.python_platform}",
        f"CPU capability (NumPy's kernels): {env.cpu_capability}",
        f"Threads (ember.get_num_threads()): {env.num_threads}",
        env.blas,
        env.matrix_products,
        "",
        "CPU:",
        env.cpu_info,
        "",
        "Optional extras:",
        extras,
    ])


def get_pretty_env_info() -> str:
    """The report ``python -m ember.utils.collect_env`` prints."""
    return pretty_str(get_env_info())


def main() -> None:
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
