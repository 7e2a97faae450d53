"""What ``ember.cpu.get_capabilities`` reports: the CPU's instruction sets, caches and cores, under torch's keys.

The instruction-set flags come from the kernel's list (``/proc/cpuinfo`` on Linux) joined with what NumPy
detected when it loaded (its ``__cpu_features__``, which works on every system); caches and core counts from
``/sys`` on Linux, and from ``os.cpu_count`` elsewhere (a cache size not found is 0).

>>> caps = capabilities()
>>> caps["num_logical_cores"] >= 1 and isinstance(caps["cpu_name"], str)
True
"""
from __future__ import annotations

import functools
import os
import platform
import re
from pathlib import Path
from types import MappingProxyType

# torch's key -> (the name in /proc/cpuinfo's flags, the name in NumPy's features or None)
_X86_FLAGS = {
    "sse": ("sse", "SSE"), "sse2": ("sse2", "SSE2"), "sse3": ("pni", "SSE3"), "ssse3": ("ssse3", "SSSE3"),
    "sse4_1": ("sse4_1", "SSE41"), "sse4_2": ("sse4_2", "SSE42"), "sse4a": ("sse4a", None),
    "avx": ("avx", "AVX"), "avx2": ("avx2", "AVX2"), "fma3": ("fma", "FMA3"), "fma4": ("fma4", "FMA4"),
    "f16c": ("f16c", "F16C"), "popcnt": ("popcnt", "POPCNT"), "lzcnt": ("abm", "LZCNT"),
    "bmi": ("bmi1", "BMI"), "bmi2": ("bmi2", "BMI2"), "aes": ("aes", None), "sha": ("sha_ni", None),
    "clflush": ("clflush", None), "clflushopt": ("clflushopt", None), "clwb": ("clwb", None),
    "avx512_f": ("avx512f", "AVX512F"), "avx512_cd": ("avx512cd", "AVX512CD"),
    "avx512_dq": ("avx512dq", "AVX512DQ"), "avx512_bw": ("avx512bw", "AVX512BW"),
    "avx512_vl": ("avx512vl", "AVX512VL"), "avx512_ifma": ("avx512ifma", "AVX512IFMA"),
    "avx512_vbmi": ("avx512vbmi", "AVX512VBMI"), "avx512_vbmi2": ("avx512_vbmi2", "AVX512VBMI2"),
    "avx512_bitalg": ("avx512_bitalg", "AVX512BITALG"), "avx512_vpopcntdq": ("avx512_vpopcntdq", "AVX512VPOPCNTDQ"),
    "avx512_vnni": ("avx512_vnni", "AVX512VNNI"), "avx512_bf16": ("avx512_bf16", "AVX512BF16"),
    "avx512_fp16": ("avx512_fp16", "AVX512FP16"), "avx512_4vnniw": ("avx512_4vnniw", "AVX5124VNNIW"),
    "avx512_4fmaps": ("avx512_4fmaps", "AVX5124FMAPS"), "avx512_vp2intersect": ("avx512_vp2intersect", None),
    "avx_vnni": ("avx_vnni", None), "avx_vnni_int8": ("avx_vnni_int8", None),
    "avx_vnni_int16": ("avx_vnni_int16", None), "avx_ne_convert": ("avx_ne_convert", None),
    "amx_tile": ("amx_tile", None), "amx_int8": ("amx_int8", None), "amx_bf16": ("amx_bf16", None),
    "amx_fp16": ("amx_fp16", None), "avx10_1": ("avx10_1", None), "avx10_2": ("avx10_2", None),
}
_X86_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "i386": "x86", "i686": "x86", "x86": "x86"}
# words of a brand string that name no model: dropped from cpu_name, as torch's CPU library drops them
_BRAND_NOISE = re.compile(r"\((?:R|TM|tm|r)\)|\bCPU\b|\bProcessor\b|@.*$")
_CPU = Path("/sys/devices/system/cpu")


@functools.cache  # a CPU does not change while the process runs
def capabilities() -> MappingProxyType:
    """The CPU's description, a read-only mapping with torch's keys."""
    machine = platform.machine().lower()
    caps: dict = {}
    if machine in _X86_MACHINES:
        listed, detected = _kernel_flags(), _numpy_features()
        for key, (kernel_name, numpy_name) in _X86_FLAGS.items():
            caps[key] = kernel_name in listed or bool(numpy_name and detected.get(numpy_name))
    logical, physical, sockets = _core_counts()
    caps.update(
        cpu_name=_cpu_name(), architecture=_X86_MACHINES.get(machine, machine),
        num_logical_cores=logical, num_physical_cores=physical, num_sockets=sockets,
        l1d_cache_size=_cache_size(1, "Data"), l2_cache_size=_cache_size(2, "Unified"),
    )
    return MappingProxyType(caps)


def _cpuinfo_lines() -> list:
    try:
        return Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:  # not Linux: the other sources stand alone
        return []


def _cpuinfo_field(name: str) -> str | None:
    for line in _cpuinfo_lines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return None


def _kernel_flags() -> set:
    return set((_cpuinfo_field("flags") or "").split())


def _numpy_features() -> dict:
    from numpy._core import _multiarray_umath

    return dict(getattr(_multiarray_umath, "__cpu_features__", {}))


def _cpu_name() -> str:
    brand = _cpuinfo_field("model name") or platform.processor() or platform.machine()
    return " ".join(_BRAND_NOISE.sub(" ", brand).split())


def _core_counts() -> tuple:
    """(logical, physical, sockets): physical cores are the distinct (package, core) pairs /sys lists."""
    logical = os.cpu_count() or 1
    cores, packages = set(), set()
    for topology in _CPU.glob("cpu[0-9]*/topology"):
        try:
            package = (topology / "physical_package_id").read_text().strip()
            cores.add((package, (topology / "core_id").read_text().strip()))
        except OSError:
            continue
        packages.add(package)
    return logical, len(cores) or logical, len(packages) or 1


def _cache_size(level: int, kind: str) -> int:
    """The size in bytes of cpu0's cache at ``level`` of ``kind`` (one core's share), 0 if not found."""
    for index in (_CPU / "cpu0" / "cache").glob("index*"):
        try:
            if int((index / "level").read_text()) == level and (index / "type").read_text().strip() == kind:
                return _bytes((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
    return 0


def _bytes(size: str) -> int:
    """``"48K"`` -> 49152: /sys writes sizes with a K, M or G suffix."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:].upper(), 1)
    return int(size.rstrip("KMGkmg")) * scale
