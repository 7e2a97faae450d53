"""Utilities around modules: gradient clipping, parameters as one vector, weight and spectral normalisation,
parametrizations, batch-norm fusion, ``skip_init`` and ``functional_call``."""
from ember.nn.utils import parametrizations, parametrize, prune, stateless
from ember.nn.utils.clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_,
                                      get_total_norm)
from ember.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from ember.nn.utils.fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from ember.nn.utils.init import skip_init
from ember.nn.utils.memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from ember.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from ember.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format", "fuse_conv_bn_eval",
    "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "get_total_norm",
    "parameters_to_vector", "parametrizations", "parametrize", "prune", "remove_spectral_norm", "remove_weight_norm",
    "skip_init", "spectral_norm", "stateless", "vector_to_parameters", "weight_norm",
]
from ember.nn.utils import rnn  # noqa: E402 (recurrent layers, attention and transformers)

__all__ += ["rnn"]
