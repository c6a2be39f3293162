"""`G.nn.functional` (`F`): the neural-network ops under torch.nn.functional's names and signatures.

The ops are generated from native_functions.yaml; this module re-exports them (`F.relu is G.relu`,
`F.linear is G.linear`): any name not defined here is looked up in the generated API, so a newly
added op is `F.<name>` without editing this file. The functions below only adapt a call where
torch.nn.functional's signature differs from the ATen schema: `training=`/`inplace=` for dropout,
`F.cross_entropy` for the op `cross_entropy_loss`, keyword order of `nll_loss`, argument order of
`embedding`. The functions that are compositions of ops (convolutions in 1-3 dims, pooling, padding,
resampling, the newer losses, normalizations and dropouts) live in the `functional_*.py` modules named by
their idea and are imported here.
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.nn.functional_activation import (
    bilinear,
    celu,
    celu_,
    channel_shuffle,
    elu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    mish,
    native_channel_shuffle,
    relu6,
    rrelu,
    rrelu_,
    selu,
    selu_,
    silu,
    softshrink,
    threshold,
    threshold_,
)
from runtime.nn.functional_attention import multi_head_attention_forward
from runtime.nn.functional_conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_tbc,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from runtime.nn.functional_ctc import ctc_loss
from runtime.nn.functional_dropout import (
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from runtime.nn.functional_embedding import (
    _embedding_renorm_,
    embedding_bag,
)
from runtime.nn.functional_linear_ce import LinearCrossEntropyOptions, linear_cross_entropy
from runtime.nn.functional_loss import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    pdist,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from runtime.nn.functional_norm import (
    instance_norm,
    local_response_norm,
    rms_norm,
)
from runtime.nn.functional_overrides import (
    BroadcastingList1,
    BroadcastingList2,
    BroadcastingList3,
    assert_int_or_pair,
    boolean_dispatch,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)
from runtime.nn.functional_pad import pad
from runtime.nn.functional_pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from runtime.nn.functional_sampling import (
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    affine_grid,
    grid_sample,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from runtime.tensor import Tensor

# the functions of the modules above, re-exported as F.<name>
__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "affine_grid", "alpha_dropout", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "bilinear", "celu", "celu_", "channel_shuffle", "conv1d", "conv2d", "conv3d",
    "elu", "hardsigmoid", "hardswish", "hardtanh", "mish", "relu6", "selu", "silu", "threshold",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss", "ctc_loss", "dropout1d",
    "dropout2d", "dropout3d", "embedding_bag", "feature_alpha_dropout", "fold", "fractional_max_pool2d",
    "fractional_max_pool3d", "gaussian_nll_loss", "grid_sample", "gumbel_softmax", "hardshrink",
    "hinge_embedding_loss", "instance_norm", "interpolate", "local_response_norm", "lp_pool1d", "lp_pool2d",
    "lp_pool3d", "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d",
    "max_unpool3d", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "native_channel_shuffle", "pad", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "rms_norm",
    "rrelu", "rrelu_", "selu_", "soft_margin_loss", "softshrink", "threshold_", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "unfold", "upsample", "upsample_bilinear", "upsample_nearest"
]
__all__ += ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "GRID_SAMPLE_INTERPOLATION_MODES",
            "GRID_SAMPLE_PADDING_MODES", "LinearCrossEntropyOptions", "assert_int_or_pair", "boolean_dispatch",
            "conv_tbc", "handle_torch_function", "has_torch_function", "has_torch_function_unary",
            "has_torch_function_variadic", "linear_cross_entropy", "multi_head_attention_forward"]


def _G() -> Any:
    return opcall.api


# torch.nn.functional's names for ops whose native name differs
_RENAMED = {"logsigmoid": "log_sigmoid"}


def __getattr__(name: str) -> Any:
    if not name.startswith("_"):
        op = getattr(_G(), _RENAMED.get(name, name), None)
        if op is not None:
            return op
    raise AttributeError(f"G.nn.functional has no function '{name}' (no op of that name in "
                         "native_functions.yaml)")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the others by 1/(1-p); identity when not training."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    out = _G().dropout(input, p, True)
    return input.copy_(out) if inplace else out


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """softmax(-input) along `dim`."""
    if dim is None:
        raise TypeError("softmin(): opgen needs an explicit `dim` (PyTorch's implicit choice is deprecated)")
    return _G().softmax(-input, dim, dtype=dtype)


def softsign(input: Tensor) -> Tensor:
    """input / (1 + abs(input)) elementwise."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """input - tanh(input) elementwise."""
    return input - input.tanh()


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction named by the deprecated size_average/reduce flags (reduction when both are None)."""
    if size_average is None and reduce is None:
        return reduction
    import warnings
    warnings.warn("size_average and reduce args will be deprecated, please use reduction instead.",
                  UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def _check_reduction(reduction: str) -> str:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _check_same_size(input: Tensor, target: Tensor, name: str) -> None:
    if tuple(input.shape) != tuple(target.shape):
        import warnings
        warnings.warn(f"Using a target size ({list(target.shape)}) that is different to the input size "
                      f"({list(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits `input` (N, C, ...) and class indices or probabilities `target`."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _G().cross_entropy_loss(input, target, weight, reduction=reduction, ignore_index=ignore_index,
                                   label_smoothing=label_smoothing)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of log-probabilities `input` (N, C, ...) at class indices `target`."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _G().nll_loss(input, target, weight, reduction=reduction, ignore_index=ignore_index)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The mean squared error between input and target, reduced by `reduction` ('mean', 'sum' or 'none')."""
    _check_same_size(input, target, "mse_loss")
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if weight is not None:
        d = input - target
        return _apply_reduction(d * d * weight, reduction)
    return _G().mse_loss(input, target, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean") -> Tensor:
    """The mean absolute error between input and target, reduced by `reduction` ('mean', 'sum' or 'none')."""
    _check_same_size(input, target, "l1_loss")
    return _G().l1_loss(input, target, _check_reduction(_legacy_reduction(size_average, reduce, reduction)))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """The smooth L1 loss: squared below `beta` (halved, divided by beta), absolute above; reduced by `reduction`."""
    _check_same_size(input, target, "smooth_l1_loss")
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _G().smooth_l1_loss(input, target, reduction, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """The Huber loss: squared below `delta` (halved), linear above; reduced by `reduction`."""
    _check_same_size(input, target, "huber_loss")
    return _G().huber_loss(input, target, _check_reduction(reduction), delta)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise; reduction="batchmean" divides the sum by the batch size."""
    if reduction != "batchmean":
        reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if reduction == "mean":
        import warnings
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    return _G().kl_div(input, target, reduction, log_target=log_target)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """The binary cross entropy between probabilities `input` and `target`, optionally weighted; reduced by
    `reduction`."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _G().binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """The binary cross entropy of sigmoid(input) and `target`, computed stably from the logits; `pos_weight` weighs
    the positives."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    return _G().binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    return loss if reduction == "none" else (loss.sum() if reduction == "sum" else loss.mean())


# -- normalization, embedding, pooling, attention -------------------------------------------------------

def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise per channel (dim 1): batch statistics when training (updating the running ones), else the
    running statistics. An empty 1-D input gives an empty result, as PyTorch's."""
    if input.dim() == 1 and input.numel() == 0:
        return input.clone()
    if training:
        size = input.shape
        n = size[0] * (input.numel() // (size[0] * size[1]) if input.numel() else 0) if input.dim() > 1 else 0
        if input.dim() > 1 and n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(size)}")
    return _G().batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalize over the last dimensions (`normalized_shape`) to mean 0 and variance 1, then scale by weight and add
    bias."""
    return _G().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalize each group of `num_groups` channel groups to mean 0 and variance 1, then scale and shift per channel.
    Normalize each group of `num_groups` channel groups to mean 0 and variance 1, then scale and shift per channel."""
    return _G().group_norm(input, num_groups, weight, bias, eps)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` at the indices `input` (torch.nn.functional's order: input first)."""
    if padding_idx is not None:
        n = weight.shape[0]
        if padding_idx > 0 and padding_idx >= n or padding_idx < 0 and padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _G().embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise; in place on input with `inplace=True`."""
    return _G().relu_(input) if inplace else _G().relu(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """input where positive, negative_slope * input elsewhere; in place with `inplace=True`."""
    return input.leaky_relu_(negative_slope) if inplace else _G().leaky_relu(input, negative_slope)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p along dim, eps)."""
    G = _G()
    denom = G.clamp(G.linalg_vector_norm(input, p, [dim], True), eps)
    result = input / denom
    return result if out is None else out.copy_(result)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """max_pool1d with return_indices=True: returns (values, indices)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """max_pool2d with return_indices=True: returns (values, indices)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False, return_indices: bool = True) -> Any:
    """max_pool3d with return_indices=True: returns (values, indices)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> Any:
    """adaptive_max_pool1d with return_indices=True: returns (values, indices)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> Any:
    """adaptive_max_pool2d with return_indices=True: returns (values, indices)."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> Any:
    """adaptive_max_pool3d with return_indices=True: returns (values, indices)."""
    return adaptive_max_pool3d(input, output_size, True)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = True,
                                       _random_samples: Tensor | None = None) -> Any:
    """fractional_max_pool2d with return_indices=True: returns (values, indices)."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = True,
                                       _random_samples: Tensor | None = None) -> Any:
    """fractional_max_pool3d with return_indices=True: returns (values, indices)."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)
