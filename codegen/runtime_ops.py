"""The operators the hand-written runtime itself calls, which every native_functions.yaml must declare.

`runtime/` calls ops of the generated API (`G.reshape`, `generated_ops().view`, `dispatcher.find(
"empty_strided")`, tensor methods such as `t.copy_(...)` and `t.fill_(...)`), so a native_functions.yaml
without them generates a package that cannot be imported or fails at the first tensor. `RUNTIME_OPS` lists
them by function name; tests/codegen/test_malformed_yaml.py scans runtime/ with `ast` and fails when a new call is
missing here.
"""

from __future__ import annotations

from collections.abc import Iterable

from codegen.errors import Diagnostic, LoadError, Location

RUNTIME_OPS: frozenset[str] = frozenset({
    "_conv2d_backward_input", "_conv2d_forward", "_cross_entropy_indices", "_linalg_lu", "_to_copy", "abs", "add",
    "add_", "addcdiv_", "addcmul_", "addmm", "all", "allclose", "amax", "amin", "any", "argmax", "argsort",
    "as_strided", "as_strided_backward", "atan", "bmm", "broadcast_to", "cat", "ceil", "chunk", "clamp", "clamp_",
    "clamp_max", "clamp_min", "clip", "clone", "col2im", "contiguous", "conv2d", "copy_", "cos", "count_nonzero",
    "cumprod", "cumsum", "diagonal", "div", "div_", "dot", "dropout", "empty_strided", "eq", "erf", "exp", "expand",
    "expand_as", "expm1", "fill_", "flatten", "flip", "floor", "gather", "im2col", "index", "index_add", "index_put",
    "index_put_", "index_select", "isclose", "isfinite", "isinf", "isnan", "leaky_relu", "leaky_relu_", "lerp_",
    "lgamma", "linalg_cholesky", "linalg_det", "linalg_eigh", "linalg_inv", "linalg_solve", "linalg_svd",
    "linalg_vector_norm", "log", "log1p", "log2", "log_sigmoid", "log_softmax", "logical_and", "logical_not",
    "logsumexp", "masked_fill", "matmul", "max", "max_pool2d", "max_pool2d_with_indices", "maximum", "mean", "min",
    "minimum", "mm", "moveaxis", "movedim", "mul", "mul_", "multinomial", "multiply", "mv", "nan_to_num", "nansum",
    "narrow", "native_dropout", "neg", "new_empty", "nonzero", "norm", "normal_", "one_hot", "outer",
    "pairwise_distance", "permute", "pow", "prelu", "prod", "random_", "ravel", "reciprocal", "relu", "relu_",
    "remainder", "repeat", "repeat_interleave", "reshape", "roll", "round", "rsqrt", "rsqrt_", "scatter", "scatter_add",
    "searchsorted",
    "select", "sigmoid", "sign", "sin", "slice", "softmax", "softplus", "sort", "sqrt", "sqrt_", "square_",
    "squeeze", "stack", "std", "sub", "sum", "swapaxes", "t", "take", "tan", "tanh", "transpose", "tril", "triu",
    "true_divide", "trunc", "unbind", "unflatten", "unfold", "uniform_", "unique", "unsqueeze", "var", "view", "where",
    "zero_",
    # F.<activation>(inplace=True) (runtime/nn/functional_activation.py)
    "elu_", "hardsigmoid_", "hardswish_", "hardtanh_", "mish_", "silu_",
    "_linalg_pinv",  # G.linalg.pinv (runtime/linalg.py)
    # F.linear_cross_entropy, F.multi_head_attention_forward, LKJCholesky, Muon
    "cross_entropy_loss", "diag_embed", "lerp", "linear",
    "cholesky", "linalg_qr", "put", "qr",  # legacy linalg names and numeric ops
    "slogdet",  # distributions.Wishart
    "new_zeros",  # runtime/compile/training.py
    "argmin", "i0", "logaddexp",  # runtime/masked.py, runtime/signal/windows.py
})  # fmt: skip


def check_runtime_ops(names: Iterable[str], file: str) -> None:
    """Raise a located LoadError naming every runtime op that `names` (function names) lacks."""
    missing = sorted(RUNTIME_OPS - set(names))
    if missing:
        raise LoadError([Diagnostic(Location(file, 1), f"the runtime needs {len(missing)} operator(s) that "
                                                       f"{file} does not declare: {', '.join(missing)}")])
