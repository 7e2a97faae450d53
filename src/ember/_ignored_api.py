"""The public callables that ``overrides.get_ignored_functions()`` lists besides the factories, as torch lists them.

None takes a tensor whose ``__torch_function__`` could take the call over: the settings and their getters, the
context managers and types, the protocol's own helpers, saving and loading, and the object slots of ``Tensor``.
Imported last by ``ember/__init__.py``, once every name below exists.

>>> import ember
>>> ember.is_grad_enabled in ember.overrides.get_ignored_functions()
True
"""
from __future__ import annotations

import ember
from ember.nn import functional as F
from ember.overrides import not_overridable

_SETTINGS = (
    ember.are_deterministic_algorithms_enabled, ember.get_deterministic_debug_mode,
    ember.is_deterministic_algorithms_warn_only_enabled, ember.set_deterministic_debug_mode,
    ember.use_deterministic_algorithms,
    ember.autocast_decrement_nesting, ember.autocast_increment_nesting, ember.clear_autocast_cache,
    ember.get_autocast_cpu_dtype, ember.get_autocast_dtype, ember.get_autocast_gpu_dtype,
    ember.get_autocast_ipu_dtype, ember.get_autocast_xla_dtype, ember.is_autocast_cache_enabled,
    ember.is_autocast_cpu_enabled, ember.is_autocast_enabled, ember.is_autocast_ipu_enabled,
    ember.is_autocast_xla_enabled, ember.set_autocast_cache_enabled, ember.set_autocast_cpu_dtype,
    ember.set_autocast_cpu_enabled, ember.set_autocast_dtype, ember.set_autocast_enabled,
    ember.set_autocast_gpu_dtype, ember.set_autocast_ipu_dtype, ember.set_autocast_ipu_enabled,
    ember.set_autocast_xla_dtype, ember.set_autocast_xla_enabled,
    ember.get_default_device, ember.set_default_device, ember.get_default_dtype, ember.set_default_tensor_type,
    ember.get_float32_matmul_precision, ember.set_float32_matmul_precision, ember.set_flush_denormal,
    ember.get_num_interop_threads, ember.get_num_threads, ember.init_num_threads, ember.set_num_interop_threads,
    ember.set_num_threads,
    ember.get_rng_state, ember.set_rng_state, ember.initial_seed, ember.manual_seed, ember.seed,
    ember.default_generator, ember.thread_safe_generator,
    ember.is_anomaly_check_nan_enabled, ember.is_anomaly_enabled, ember.set_anomaly_enabled,
    ember.is_grad_enabled, ember.is_inference_mode_enabled, ember.is_warn_always_enabled, ember.set_warn_always,
    ember.set_printoptions, ember.is_vulkan_available, ember.get_device_module,
)
_CONTEXTS_AND_TYPES = (
    ember.enable_grad, ember.no_grad, ember.set_grad_enabled, ember.inference_mode,
    ember.device, ember.dtype, ember.finfo, ember.iinfo, ember.layout, ember.memory_format, ember.qscheme,
    ember.can_cast, ember.promote_types,  # (of dtypes, not tensors)
)
_OTHERS = (
    ember.compile, ember.cond, ember.vmap, ember.load, ember.save, ember.is_storage, ember.is_tensor, ember.typename,
    ember.sym_constrain_range, ember.sym_constrain_range_for_size, ember.sym_fresh_size,
    F.assert_int_or_pair, F.boolean_dispatch, F.handle_torch_function, F.has_torch_function,
    F.has_torch_function_unary, F.has_torch_function_variadic,
)
_TENSOR_SLOTS = (
    ember.Tensor.__class__, ember.Tensor.__delattr__, ember.Tensor.__dir__, ember.Tensor.__getattribute__,
    ember.Tensor.__hash__, ember.Tensor.__init__, ember.Tensor.__init_subclass__, ember.Tensor.__new__,
    ember.Tensor.__setattr__, ember.Tensor.__subclasshook__, ember.Tensor.__torch_function__,
    ember.Tensor._make_subclass,
)

for _callable in (*_SETTINGS, *_CONTEXTS_AND_TYPES, *_OTHERS, *_TENSOR_SLOTS):
    not_overridable(_callable)
