"""Function transforms, as ``torch.func``: ``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` ...

``rearrange`` (einops' axis reordering by a pattern) lives here too, as in torch.

They compose (``vmap(grad(f))`` gives per-sample gradients, ``jacfwd(jacrev(f))`` a Hessian)
and work with ``nn.Module`` through ``functional_call``. See docs/func.md.
"""
from ember.func._autograd import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ember.func._batched import BatchedTensor
from ember.func._eager import debug_unwrap, functionalize
from ember.func._function import VmapInfo
from ember.func._module import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ember.func._rearrange import rearrange
from ember.func._vmap import vmap

__all__ = ["BatchedTensor", "VmapInfo", "debug_unwrap", "functional_call", "functionalize", "grad", "grad_and_value",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "rearrange", "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]
