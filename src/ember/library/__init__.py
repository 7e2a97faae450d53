"""``ember.library``: operators of your own, as PyTorch 2.x defines them with ``torch.library``.

``custom_op`` makes a kernel (ember ops, NumPy, C ...) an operator with a schema, reachable as
``ember.ops.<namespace>.<name>``; ``register_autograd`` gives it a backward (the op then runs as an
``ember.autograd.Function``), ``register_fake`` says what it returns, ``register_kernel`` and
``register_vmap`` add kernels and a batching rule, and ``opcheck`` tests the registrations. ``Library``,
``define`` and ``impl`` define operators from schema strings.

>>> import numpy as np
>>> @ember.library.custom_op("doc_intro::numpy_sin", mutates_args=())
... def numpy_sin(x: ember.Tensor) -> ember.Tensor:
...     return ember.from_numpy(np.sin(x.numpy()))
>>> def setup_context(ctx, inputs, output):
...     ctx.save_for_backward(inputs[0])
>>> def backward(ctx, grad):
...     (x,) = ctx.saved_tensors
...     return grad * x.cos()
>>> numpy_sin.register_autograd(backward, setup_context=setup_context)
>>> x = ember.zeros(2, requires_grad=True)
>>> y = ember.ops.doc_intro.numpy_sin(x)
>>> y.sum().backward(); x.grad
tensor([1., 1.])
>>> y.grad_fn
<GeneratedBackwardFor_doc_intro_numpy_sin_defaultBackward object at ...>
"""
from ember.library._custom_op import (
    CustomOpDef, custom_op, register_autograd, register_fake, register_kernel, register_vmap,
)
from ember.library._compat import get_ctx, impl_abstract, triton_op, wrap_triton
from ember.library._dispatch_rules import fallthrough_kernel, get_kernel, register_autocast, register_torch_dispatch
from ember.library._library import Library, define, impl
from ember.library._opcheck import OpCheckError, opcheck
from ember.library._operator import OpOverload, OpOverloadPacket
from ember.library._schema import infer_schema

__all__ = ["Library", "define", "impl", "custom_op", "register_autograd", "register_fake", "register_kernel",
           "register_vmap", "opcheck", "infer_schema", "CustomOpDef", "OpCheckError", "fallthrough_kernel",
           "get_ctx", "get_kernel", "impl_abstract", "register_autocast", "register_torch_dispatch", "triton_op",
           "wrap_triton"]
