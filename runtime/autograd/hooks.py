"""Tensor hooks and retain_grad (Tensor.register_hook and Tensor.retain_grad call these).

Note [Where tensor hooks live]
A hook is kept on the node that receives the tensor's gradient, keyed by the tensor's output_nr: a
non-leaf's grad_fn, or a leaf's AccumulateGrad (Note [Leaves and their AccumulateGrad], node.py). It
runs when that node's gradient for the tensor is complete, before the node runs (so before a leaf's
gradient is accumulated or captured by autograd.grad). So a hook sees the summed gradient of a tensor
used several times, and what it returns replaces that gradient for everything downstream. retain_grad
is a hook on a non-leaf that runs after the others and stores the gradient in `.grad`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from runtime.autograd.engine import accumulate_into_grad
from runtime.autograd.node import RemovableHandle, grad_accumulator
from runtime.tensor import Tensor, install_methods


def register_hook(t: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """Call `hook(grad)` when the gradient of `t` is computed; a non-None result replaces the gradient."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._grad_fn is None:
        return grad_accumulator(t)._register_tensor_prehook(0, hook)
    return t._grad_fn._register_tensor_prehook(t._output_nr, hook)


def retain_grad(t: Tensor) -> None:
    """Keep the gradient of a non-leaf tensor in its `.grad` (a no-op on leaves)."""
    if not t._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t._grad_fn is None or t._retains_grad:
        return
    ref = weakref.ref(t)

    def retain(grad: Tensor) -> None:
        var = ref()
        if var is None:
            return
        accumulate_into_grad(var, grad)

    t._grad_fn._node_hooks().retains_grad[t._output_nr] = retain
    t._retains_grad = True


# Note [Tensor methods from upper layers] (runtime/tensor.py)
def register_post_accumulate_grad_hook(t: Tensor, hook: Callable[[Tensor], None]) -> RemovableHandle:
    """Call `hook(t)` after a backward pass has accumulated a gradient into the leaf `t`'s `.grad`
    (DistributedDataParallel starts a bucket's all-reduce from it). The hook holds `t` weakly, as the
    leaf's AccumulateGrad does."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = grad_accumulator(t)._node_hooks().post_accumulate
    ref = weakref.ref(t)

    def call(_leaf: Tensor) -> None:
        leaf = ref()
        if leaf is not None:
            hook(leaf)

    hooks.append(call)
    return RemovableHandle(hooks, call)


install_methods(register_hook=register_hook, retain_grad=retain_grad,
                register_post_accumulate_grad_hook=register_post_accumulate_grad_hook)
