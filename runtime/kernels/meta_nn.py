"""Meta kernels of the neural-network ops: softmax and its log, cross entropy, dropout, layer norm,
convolution and its gradients, im2col/col2im, max pooling (Note [Meta tensors] in runtime/meta_array.py).
Each makes the CPU kernel's checks that read no values, with the CPU kernel's own helpers, and returns
meta tensors of the shapes and dtypes the CPU kernel returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import dtypes
from runtime import strides as S
from runtime.kernels import conv_ops
from runtime.kernels._xp import as_tuple
from runtime.kernels.checks import check_weight_dtype
from runtime.kernels.meta_pointwise import empty
from runtime.kernels.nn_ops import _class_targets, _pool_args, _softmax_dtype, reduction_name
from runtime.kernels.normalization import _layer_norm_shape
from runtime.tensor import Tensor


def _like(t: Tensor, dt: dtypes.DType | None = None) -> Tensor:
    return empty(tuple(t._data.shape), t._dtype if dt is None else dt)


def softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    dt = _softmax_dtype(self, dtype)
    S.wrap_dim(dim, max(self._data.ndim, 1))
    return _like(self, dt)


def log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return softmax(self, dim, dtype)


def cross_entropy_indices(self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: Any = 1,
                          ignore_index: int = -100) -> Tensor:
    check_weight_dtype(self, weight)
    _class_targets(self, target, weight)
    dt = _softmax_dtype(self, None)
    if reduction_name(reduction) != "none":
        return empty((), dt)
    return empty(() if self._data.ndim == 1 else tuple(target._data.shape), dt)


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    if train is not False and not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _like(input), _like(input, dtypes.bool_)


def native_layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None, bias: Tensor | None,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"\"LayerNormKernelImpl\" not implemented for '{input._dtype.name}'")
    k = len(_layer_norm_shape(input, normalized_shape, weight, bias))
    shape = tuple(input._data.shape)
    stats = shape[:len(shape) - k] + (1,) * k
    return _like(input), empty(stats, input._dtype), empty(stats, input._dtype)


def _conv2d_forward(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                    padding: Sequence[int], dilation: Sequence[int], groups: int) -> Tensor:
    conv_ops._check_forward(input, weight, bias, groups)
    st, pad, dil = conv_ops._geometry(stride, padding, dilation)
    o, _, kh, kw = weight._data.shape
    oh, ow = conv_ops.out_size(input._data.shape, (kh, kw), dil, pad, st)
    return empty((input._data.shape[0], o, oh, ow), input._dtype)


def _conv2d_backward_input(grad_output: Tensor, weight: Tensor, input_size: Sequence[int], stride: Sequence[int],
                           padding: Sequence[int], dilation: Sequence[int], groups: int) -> Tensor:
    st, pad, dil = conv_ops._geometry(stride, padding, dilation)
    n, c, h, w = (int(s) for s in input_size)
    o, cg, kh, kw = weight._data.shape
    oh, ow = conv_ops.out_size((h, w), (kh, kw), dil, pad, st)
    if tuple(grad_output.shape) != (n, o, oh, ow) or cg * groups != c:
        raise RuntimeError(f"convolution backward: grad_output of size {list(grad_output.shape)} does not match "
                           f"input size {[n, c, h, w]} and weight of size {list(weight.shape)} (groups={groups})")
    return empty((n, c, h, w), grad_output._dtype)


def _conv2d_backward_weight(grad_output: Tensor, input: Tensor, weight_size: Sequence[int], stride: Sequence[int],
                            padding: Sequence[int], dilation: Sequence[int], groups: int) -> Tensor:
    o, cg, kh, kw = (int(s) for s in weight_size)
    x = input._data
    if x.ndim != 4 or cg * groups != x.shape[1]:
        raise RuntimeError(f"convolution backward: input of size {list(x.shape)} does not match weight size "
                           f"{[o, cg, kh, kw]} (groups={groups})")
    return empty((o, cg, kh, kw), grad_output._dtype)


def im2col(self: Tensor, kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
           stride: Sequence[int]) -> Tensor:
    k, dil, pad, st = (as_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    shape = tuple(self._data.shape)
    if len(shape) not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(shape)}")
    oh, ow = conv_ops.out_size(shape, k, dil, pad, st)
    cols = (shape[-3] * k[0] * k[1], oh * ow)
    return empty(shape[:1] + cols if len(shape) == 4 else cols, self._dtype)


def col2im(self: Tensor, output_size: Sequence[int], kernel_size: Sequence[int], dilation: Sequence[int],
           padding: Sequence[int], stride: Sequence[int]) -> Tensor:
    size, k, dil, pad, st = (as_tuple(v, 2) for v in (output_size, kernel_size, dilation, padding, stride))
    shape = tuple(self._data.shape)
    batched = len(shape) == 3
    n, ckk, length = shape if batched else (1, *shape)
    if ckk % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={ckk} and kernel_size={k}")
    oh, ow = conv_ops.out_size(size, k, dil, pad, st)
    if oh * ow != length:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={dil}, padding={pad}, stride={st}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{oh} * {ow} = {oh * ow}, but got input.size(2)={length}.")
    out = (ckk // (k[0] * k[1]), size[0], size[1])
    return empty((n, *out) if batched else out, self._dtype)


def max_pool2d_with_indices(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                            padding: Sequence[int] = 0, dilation: Sequence[int] = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    *_, oh, ow = _pool_args(self, kernel_size, stride, padding, dilation, ceil_mode)
    shape = tuple(self._data.shape[:-2]) + (oh, ow)
    return empty(shape, self._dtype), empty(shape, dtypes.int64)


def max_pool2d_with_indices_backward(grad_output: Tensor, self: Tensor, kernel_size: Sequence[int],
                                     stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                                     ceil_mode: bool, indices: Tensor) -> Tensor:
    _pool_args(self, kernel_size, stride, padding, dilation, ceil_mode)
    return _like(self, grad_output._dtype)
