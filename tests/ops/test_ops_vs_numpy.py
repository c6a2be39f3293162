"""Every op of tests/op_db.py against NumPy: over its dtypes and layouts (contiguous, transposed, broadcast,
empty, 0-d), plus a gradcheck of its float64 sample and, for elementwise ops, the dtypes it refuses.
A new op is tested by adding a row to the table, not by writing a test here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_db import ALL, OPS, OpSpec, pointwise_inputs

TOL = {"float16": (1e-2, 1e-2), "float32": (1e-5, 1e-4)}


def _G() -> Any:
    import generated as G
    return G


def _inputs(spec: OpSpec, dtype: str, layout: str, seed: int = 0) -> list[np.ndarray] | None:
    rng = np.random.default_rng(seed)
    if layout not in spec.layouts:
        return None
    if spec.make is not None:
        return spec.make(rng, dtype, layout)
    if layout not in spec.layouts:
        return None
    return pointwise_inputs(spec, rng, dtype, layout)


def _tensor(G: Any, a: np.ndarray, layout: str, requires_grad: bool = False) -> Any:
    """`a` as an opgen tensor in `layout`: transposed data (non-contiguous) or a stride-0 expansion."""
    if layout == "transposed" and a.ndim >= 2:
        t = G.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
        assert not t.is_contiguous() or 1 in a.shape[-2:]
    else:
        t = G.tensor(a)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _expanded(G: Any, spec: OpSpec, arrays: list[np.ndarray], layout: str) -> tuple[list[Any], list[np.ndarray]]:
    """Tensors for the op and arrays for the reference (a unary op's broadcast layout is an expanded input)."""
    if layout == "broadcast" and spec.nargs == 1:
        shape = (3, arrays[0].shape[-1])
        return [G.tensor(arrays[0]).expand(shape)], [np.broadcast_to(arrays[0], shape)]
    return [_tensor(G, a, layout) for a in arrays], arrays


def _as_numpy(r: Any) -> Any:
    if isinstance(r, tuple | list):
        return tuple(_as_numpy(x) for x in r)
    return r.numpy()


def _compare(spec: OpSpec, dtype: str, layout: str, actual: Any, expected: Any) -> None:
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), f"{spec.name}: outputs differ"
        for a, e in zip(actual, expected, strict=True):
            _compare(spec, dtype, layout, a, e)
        return
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    where = f"{spec.name} [{dtype}, {layout}]"
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != NumPy's {expected.shape}"
    if expected.dtype == np.bool_ or actual.dtype == np.bool_:
        assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} != NumPy's {expected.dtype}"
    atol, rtol = TOL.get(dtype, (spec.atol, spec.rtol))
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=max(rtol, spec.rtol),
                               atol=max(atol, spec.atol), equal_nan=True, err_msg=where)


CASES = [(spec, dtype) for spec in OPS for dtype in spec.dtypes]


@pytest.mark.parametrize("spec,dtype", CASES, ids=[f"{s.name}-{d}" for s, d in CASES])
def test_op_matches_numpy(spec: OpSpec, dtype: str) -> None:
    G = _G()
    tested = 0
    for layout in ("contiguous", "transposed", "broadcast", "empty", "scalar"):
        arrays = _inputs(spec, dtype, layout)
        if arrays is None:
            continue
        tensors, refs = _expanded(G, spec, arrays, layout)
        with np.errstate(all="ignore"):
            expected = spec.ref(*refs)
        actual = _as_numpy(spec.op(G, *tensors))
        _compare(spec, dtype, layout, actual, expected)
        tested += 1
    assert tested, f"{spec.name}: no layout tested"


GRAD_CASES = [spec for spec in OPS if spec.grad and "float64" in spec.dtypes]


@pytest.mark.parametrize("spec", GRAD_CASES, ids=[s.name for s in GRAD_CASES])
def test_op_gradcheck(spec: OpSpec) -> None:
    """Finite differences in float64 (this also covers CompositeImplicitAutograd ops: losses, conv2d ...)."""
    from runtime.autograd.gradcheck import gradcheck
    G = _G()
    arrays = _inputs(spec, "float64", "contiguous", seed=1)
    assert arrays is not None
    diff = spec.grad_args if spec.grad_args is not None else tuple(range(len(arrays)))
    tensors = [_tensor(G, a, "contiguous", i in diff and a.dtype == np.float64) for i, a in enumerate(arrays)]
    grad_inputs = [t for i, t in enumerate(tensors) if i in diff]
    fixed = {i: t for i, t in enumerate(tensors) if i not in diff}

    def fn(*xs: Any) -> Any:
        it = iter(xs)
        args = [fixed[i] if i in fixed else next(it) for i in range(len(tensors))]
        out = spec.op(G, *args)
        return out[0] if isinstance(out, tuple) else out

    fn.__qualname__ = spec.name
    assert gradcheck(fn, grad_inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


REFUSED = [(spec, dtype) for spec in OPS if spec.pointwise for dtype in ALL if dtype not in spec.dtypes]


@pytest.mark.parametrize("spec,dtype", REFUSED, ids=[f"{s.name}-{d}" for s, d in REFUSED])
def test_op_refuses_unsupported_dtype(spec: OpSpec, dtype: str) -> None:
    G = _G()
    arrays = pointwise_inputs(spec, np.random.default_rng(0), dtype, "contiguous")
    with pytest.raises((RuntimeError, TypeError)):
        spec.op(G, *[G.tensor(a) for a in arrays])


def test_table_covers_every_op_name() -> None:
    """Each op the issue asks for has at least one row (by the name its row starts with)."""
    names = {s.name for s in OPS}
    for op in ("add", "sub", "mul", "div", "neg", "pow", "remainder", "fmod", "abs", "sign", "reciprocal", "sqrt",
               "rsqrt", "square", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
               "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "erf", "floor", "ceil", "round", "trunc",
               "frac", "clamp", "clip", "maximum", "minimum", "lerp", "where", "isnan", "isinf", "isfinite",
               "nan_to_num", "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "silu", "mish", "sigmoid",
               "log_sigmoid", "softplus", "hardtanh", "hardsigmoid", "hardswish", "sum", "mean", "prod", "amax",
               "amin", "max", "min", "argmax", "any", "var", "std", "logsumexp", "norm", "cumsum", "softmax",
               "log_softmax", "mm", "bmm", "matmul", "addmm", "linear", "dot", "outer", "mse_loss",
               "binary_cross_entropy", "nll_loss", "cross_entropy", "cat", "stack", "repeat", "tile", "roll", "flip",
               "tril", "triu", "index_select", "gather", "scatter", "scatter_add", "masked_fill", "embedding",
               "one_hot", "topk", "sort", "argsort", "conv2d", "max_pool2d", "avg_pool2d"):
        assert op in names, f"no row for {op}"
