"""Ahead-of-time builds with setuptools: ``CppExtension`` and ``BuildExtension`` for a user's ``setup.py``."""
from __future__ import annotations

from setuptools import Extension
from setuptools.command.build_ext import build_ext

from ember.utils.cpp_extension import _build, include_paths


def CppExtension(name: str, sources: list[str], *args, **kwargs) -> Extension:
    """A setuptools ``Extension`` for C++ (and C) sources that include ``<ember/extension.h>``.

    >>> ext = CppExtension("fast_ops", ["fast_ops.cpp"])
    >>> ext.language, any(p.endswith("include") for p in ext.include_dirs)
    ('c++', True)
    """
    kwargs["include_dirs"] = [*kwargs.get("include_dirs", []), *include_paths()]
    kwargs.setdefault("language", "c++")
    return Extension(name, sources, *args, **kwargs)


class BuildExtension(build_ext):
    """``build_ext`` that compiles as ``load`` does: ``EMBER_EXTENSION_NAME`` defined, C++17 for C++ sources
    only, and ``extra_compile_args`` either a list or a dict ``{"cxx": [...], "c": [...]}`` by language."""

    def build_extension(self, ext: Extension) -> None:
        name = ext.name.rsplit(".", 1)[-1]
        ext.define_macros = [*ext.define_macros, ("EMBER_EXTENSION_NAME", name)]
        per_language = ext.extra_compile_args if isinstance(ext.extra_compile_args, dict) else {}
        shared = [] if per_language else list(ext.extra_compile_args or [])
        compile_one = self.compiler._compile

        def compile_with_flags(obj, src, src_ext, cc_args, extra_postargs, pp_opts):
            cpp = src_ext != ".c"
            flags = [*_build.COMMON_CFLAGS, *(_build.CPP_CFLAGS if cpp else []), *shared,
                     *per_language.get("cxx" if cpp else "c", [])]
            compile_one(obj, src, src_ext, cc_args, [*extra_postargs, *flags], pp_opts)

        self.compiler._compile = compile_with_flags
        ext.extra_compile_args = []
        try:
            super().build_extension(ext)
        finally:
            self.compiler._compile = compile_one
