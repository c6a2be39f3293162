"""Autocast's cast policy: which operators run in the lower-precision dtype, which in float32, and which
promote their floating inputs to the widest of them, per device type (Note [Autocast in opgen],
runtime/amp/autocast_mode.py). The one place these lists live.

Names are opgen operator names without the overload (`softmax` covers `softmax.int`); an operator's `.out`
overloads, its in-place forms (`mm_`) and any call given an explicit `dtype=` are never cast, as in
PyTorch. The lists follow PyTorch's "Autocast Op Reference" restricted to the operators opgen's dispatcher
has. A Python-level function is covered through the operators it calls (`F.normalize` through
`linalg_vector_norm`, `F.conv1d` through `conv2d`), or, where those would not give PyTorch's result (a bias
added after the convolution in float32), by naming it here and decorating it with
`runtime.amp.autocast_mode.autocast_function` (AUTOCAST_FUNCTIONS). Where opgen composes from listed
operators an operator that PyTorch runs as one unlisted kernel, the `whole` policy keeps autocast away from
the operators it calls.
tests/runtime/test_autocast_and_grad_scaler.py checks that every name here is a declared operator or one of those.
"""

from __future__ import annotations

from enum import StrEnum


class CastPolicy(StrEnum):
    """What autocast does with an operator's eligible inputs (floating tensors of the region's device type
    that are not float64)."""

    lower = "lower_precision_fp"  # cast to the region's dtype (float16 by default on CUDA)
    fp32 = "fp32"                 # cast to float32
    promote = "promote"           # cast to the widest floating dtype among them
    refuse = "refuse"             # unsafe to autocast: the call raises (binary_cross_entropy on CUDA)
    # not cast, and the operators it calls see no autocast either: PyTorch runs it as one kernel in its
    # inputs' dtype where opgen composes it from listed operators (`mv` from matmul on the CPU)
    whole = "whole"


_CUDA_LOWER = (
    "matmul", "mm", "bmm", "mv", "addmm", "addmv", "addr", "addbmm", "baddbmm", "linear", "conv2d",
    "prelu", "scaled_dot_product_attention", "einsum",
    *("conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
)
_CUDA_FP32 = (
    "acos", "asin", "cosh", "sinh", "tan", "erfinv", "exp", "expm1", "log", "log10", "log1p", "log2", "pow",
    "reciprocal", "rsqrt", "softplus", "layer_norm", "native_layer_norm", "group_norm", "cosine_similarity",
    "nll_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "cross_entropy_loss",
    "_cross_entropy_indices", "binary_cross_entropy_with_logits", "dist", "cdist", "renorm", "logsumexp",
    "prod", "softmax", "log_softmax", "cumprod", "cumsum", "sum", "norm", "linalg_vector_norm",
    "linalg_matrix_norm",
)
_CUDA_PROMOTE = (
    "addcdiv", "addcmul", "atan2", "cross", "linalg_cross", "dot", "vdot", "index_put", "scatter_add", "cat",
    "stack", "index_copy", "bilinear",
)
_CUDA_REFUSE = ("binary_cross_entropy",)

_CPU_LOWER = (
    "matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "linear", "conv2d", "prelu", "scaled_dot_product_attention",
    "einsum", *("conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
)
_CPU_FP32 = (
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "prod", "quantile", "nanquantile", "cdist",
    "trace", "mse_loss", "nll_loss", "cross_entropy_loss", "_cross_entropy_indices", "l1_loss", "huber_loss",
    "smooth_l1_loss", "kl_div", "inverse", "linalg_inv", "linalg_solve", "linalg_cholesky", "linalg_qr",
    "linalg_svd", "linalg_svdvals", "linalg_eigh", "linalg_matrix_norm",
)
_CPU_PROMOTE = ("cat", "stack", "index_copy")
_CPU_WHOLE = ("mv", "addmv", "addr", "dot", "vdot")


# Python functions of runtime/nn decorated with runtime.amp.autocast_mode.autocast_function (not dispatcher operators).
AUTOCAST_FUNCTIONS = ("conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "bilinear", "einsum")


def _table(**lists: tuple[str, ...]) -> dict[str, CastPolicy]:
    table: dict[str, CastPolicy] = {}
    for kind, names in lists.items():
        for name in names:
            if name in table:
                raise ValueError(f"autocast policy lists {name!r} twice")
            table[name] = CastPolicy[kind]
    return table


# device type -> operator name (no overload) -> policy
POLICY: dict[str, dict[str, CastPolicy]] = {
    "cuda": _table(lower=_CUDA_LOWER, fp32=_CUDA_FP32, promote=_CUDA_PROMOTE, refuse=_CUDA_REFUSE),
    "cpu": _table(lower=_CPU_LOWER, fp32=_CPU_FP32, promote=_CPU_PROMOTE, whole=_CPU_WHOLE),
}

# The dtypes autocast can compute in on each device type; a region with another dtype keeps autocast's state
# but casts nothing (opgen's CPU has no bfloat16, and its CUDA matmuls take no bfloat16).
CASTING_DTYPES: dict[str, tuple[str, ...]] = {"cuda": ("float16", "float32"), "cpu": ("float16", "float32")}
