"""The operators the hand-written runtime itself calls, which every native_functions.yaml must declare.

`runtime/` calls ops of the generated API (`G.reshape`, `generated_ops().view`, `dispatcher.find(
"empty_strided")`, tensor methods such as `t.copy_(...)` and `t.fill_(...)`), so a native_functions.yaml
without them generates a package that cannot be imported or fails at the first tensor. `RUNTIME_OPS` lists
them by function name; tests/test_yaml_inputs.py scans runtime/ with `ast` and fails when a new call is
missing here.
"""

from __future__ import annotations

from collections.abc import Iterable

from codegen.errors import Diagnostic, LoadError, Location

RUNTIME_OPS: frozenset[str] = frozenset({
    "lgamma", "linalg_det", "nansum", "new_empty", "ravel", "searchsorted",
    "_conv2d_forward", "_cross_entropy_indices", "_to_copy", "abs", "add", "add_", "addmm", "all", "amax", "amin",
    "any", "argmax", "argsort", "as_strided", "as_strided_backward", "bmm", "cat", "ceil", "chunk", "clamp",
    "clone", "contiguous", "copy_", "cos", "cumsum", "diagonal", "div", "dropout", "empty_strided", "eq", "erf",
    "exp", "expand", "fill_", "flatten", "flip", "floor", "gather", "im2col", "index", "index_add", "index_put",
    "index_put_", "index_select", "isclose", "isfinite", "isinf", "isnan", "leaky_relu_", "linalg_inv",
    "linalg_solve", "linalg_vector_norm", "log", "log_sigmoid", "log_softmax", "logical_and", "logical_not",
    "masked_fill", "matmul", "max", "max_pool2d", "max_pool2d_with_indices", "maximum", "mean", "min", "mm",
    "movedim", "mul", "mul_", "nan_to_num", "narrow", "neg", "nonzero", "normal_", "one_hot", "permute", "prelu",
    "prod", "random_", "relu", "relu_", "repeat_interleave", "reshape", "roll", "round", "rsqrt", "scatter",
    "scatter_add", "select", "sigmoid", "sign", "slice", "softmax", "softplus", "sort", "sqrt", "squeeze", "stack",
    "std", "sub", "sum", "t", "take", "tanh", "transpose", "tril", "triu", "trunc", "unbind", "unflatten",
    "uniform_", "unique", "unsqueeze", "var", "view", "where", "zero_"
})  # fmt: skip


def check_runtime_ops(names: Iterable[str], file: str) -> None:
    """Raise a located LoadError naming every runtime op that `names` (function names) lacks."""
    missing = sorted(RUNTIME_OPS - set(names))
    if missing:
        raise LoadError([Diagnostic(Location(file, 1), f"the runtime needs {len(missing)} operator(s) that "
                                                       f"{file} does not declare: {', '.join(missing)}")])
