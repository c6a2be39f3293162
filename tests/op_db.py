"""The op test table (OpInfo style): one row per operator, run by tests/ops/test_ops_vs_numpy.py.

A row names the op, how to call it in opgen (`op(G, *tensors)`), its NumPy reference (`ref(*arrays)`),
how many tensor inputs it takes, the dtypes it supports, its input domain and the layouts it is tested
in. Rows marked `pointwise` are also checked to refuse the dtypes they don't support, and are tested
with broadcasting. A new op needs no row here: tests/ops/test_every_yaml_op.py tests every op of
native_functions.yaml from its schema (Note [Samples from the schema] in tests/op_samples.py); a row adds
a NumPy reference (which holds without torch installed) or particular inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
NUMERIC = ALL[1:]
INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")
FLOAT = ("float16", "float32", "float64")
LAYOUTS = ("contiguous", "transposed", "broadcast", "empty", "scalar")
REDUCE_LAYOUTS = ("contiguous", "transposed", "empty", "scalar")
SHAPE = (3, 4)

Array = np.ndarray
# A sample maker: (rng, dtype name, layout) -> list of NumPy inputs, or None when the layout is not tested.
Maker = Callable[[np.random.Generator, str, str], "list[Array] | None"]


@dataclass(frozen=True)
class OpSpec:
    name: str
    op: Callable[..., Any]                     # (G, *tensors) -> Tensor | tuple of Tensors
    ref: Callable[..., Any]                    # (*arrays) -> array | tuple of arrays
    nargs: int = 1
    dtypes: tuple[str, ...] = FLOAT
    domain: tuple[float, float] = (-2.0, 2.0)  # floating inputs (integers: the same range, rounded)
    layouts: tuple[str, ...] = LAYOUTS
    pointwise: bool = False
    grad: bool = True                          # gradcheck the float64 contiguous sample
    grad_args: tuple[int, ...] | None = None   # which inputs get gradients (default: every input)
    make: Maker | None = None                  # custom inputs instead of `nargs` tensors of SHAPE
    atol: float = 1e-6
    rtol: float = 1e-5
    nonzero: tuple[int, ...] = ()              # inputs kept away from 0 (divisors)
    extra: dict[str, Any] = field(default_factory=dict)


def rand(rng: np.random.Generator, dtype: str, shape: Sequence[int], domain: tuple[float, float] = (-2.0, 2.0),
         nonzero: bool = False) -> Array:
    """Random values of `dtype` in `domain` (unsigned types: the non-negative part)."""
    lo, hi = domain
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in INTEGRAL:
        lo_i, hi_i = math.floor(lo), math.ceil(hi)
        if dtype == "uint8":
            lo_i = max(lo_i, 0)
        a = rng.integers(lo_i, hi_i + 1, size=shape)
        if nonzero:
            a = np.where(a == 0, 1 if hi_i >= 1 else -1, a)
        return a.astype(dtype)
    a = rng.uniform(lo, hi, size=shape)
    if nonzero:
        a = np.where(np.abs(a) < 0.25, 0.5, a)
    return a.astype(dtype)


def pointwise_inputs(spec: OpSpec, rng: np.random.Generator, dtype: str, layout: str) -> list[Array] | None:
    """Inputs of an elementwise op: every input of SHAPE, or broadcast against a row/column, empty, 0-d."""
    shapes: list[tuple[int, ...]] = {
        "contiguous": [SHAPE] * spec.nargs,
        "transposed": [SHAPE] * spec.nargs,
        "broadcast": [SHAPE, (SHAPE[1],), (SHAPE[0], 1)] if spec.nargs > 1 else [(1, SHAPE[1])],
        "empty": [(0, SHAPE[1])] * spec.nargs,
        "scalar": [()] * spec.nargs,
    }[layout][: spec.nargs]
    return [rand(rng, dtype, s, spec.domain, i in spec.nonzero) for i, s in enumerate(shapes)]


# -- row constructors -------------------------------------------------------------------------------

def unary(name: str, ref: Callable[..., Any], dtypes: tuple[str, ...] = ALL, op: Callable[..., Any] | None = None,
          **kw: Any) -> OpSpec:
    return OpSpec(name, op or (lambda G, x: getattr(G, name)(x)), ref, 1, dtypes, pointwise=True, **kw)


def binary(name: str, ref: Callable[..., Any], dtypes: tuple[str, ...] = ALL, op: Callable[..., Any] | None = None,
           **kw: Any) -> OpSpec:
    return OpSpec(name, op or (lambda G, x, y: getattr(G, name)(x, y)), ref, 2, dtypes, pointwise=True, **kw)


def _erf(x: Array) -> Array:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def _softplus(x: Array, beta: float = 1.0, threshold: float = 20.0) -> Array:
    return np.where(x * beta > threshold, x, np.logaddexp(0, x * beta) / beta)


def _f(x: Array) -> Array:
    """Compute integer/bool inputs of float-valued refs in float64 (as opgen promotes them)."""
    return x.astype(np.float64) if x.dtype.kind in "biu" else x


def _trunc_div(a: Array, b: Array) -> Array:
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return np.trunc(a / b)
    q = a // b
    return np.where((a % b != 0) & ((a < 0) != (b < 0)), q + 1, q)


def _hardtanh(x: Array, lo: float = -1.0, hi: float = 1.0) -> Array:
    return np.where(x < lo, lo, np.where(x > hi, hi, x)).astype(x.dtype)


def _reduce_dims(x: Array) -> Any:
    return (1,) if x.ndim >= 2 else None


# -- the table --------------------------------------------------------------------------------------
POS = (0.3, 3.0)
UNIT = (-0.9, 0.9)

OPS: list[OpSpec] = [
    # arithmetic
    binary("add", lambda a, b: a + b, grad=True),
    OpSpec("add_alpha", lambda G, x, y: G.add(x, y, alpha=2), lambda a, b: a + 2 * b, 2, NUMERIC),
    binary("sub", lambda a, b: a - b, NUMERIC),
    binary("mul", lambda a, b: a * b),
    binary("div", lambda a, b: _f(a) / _f(b), nonzero=(1,)),
    binary("div_trunc", _trunc_div, NUMERIC, op=lambda G, x, y: G.div(x, y, rounding_mode="trunc"),
           nonzero=(1,), grad=False),
    binary("div_floor", lambda a, b: np.floor_divide(a, b), NUMERIC,
           op=lambda G, x, y: G.div(x, y, rounding_mode="floor"), nonzero=(1,), grad=False),
    binary("floor_divide", np.floor_divide, NUMERIC, nonzero=(1,), grad=False),
    binary("remainder", np.remainder, NUMERIC, nonzero=(1,), grad_args=(0,)),
    binary("fmod", np.fmod, NUMERIC, nonzero=(1,), grad_args=(0,)),
    binary("pow", lambda a, b: np.power(a, b), NUMERIC, domain=(0.5, 2.0)),
    binary("atan2", lambda a, b: np.arctan2(_f(a), _f(b)), nonzero=(1,)),
    binary("maximum", np.maximum),
    binary("minimum", np.minimum),
    OpSpec("lerp", lambda G, a, b, w: G.lerp(a, b, w), lambda a, b, w: a + w * (b - a), 3, FLOAT, pointwise=True),
    OpSpec("lerp_scalar", lambda G, a, b: G.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a), 2, FLOAT,
           pointwise=True),
    unary("neg", np.negative, NUMERIC),
    unary("abs", np.abs, NUMERIC),
    unary("sign", lambda a: a.copy() if a.dtype == bool else np.sign(a), ALL, grad=False),
    unary("reciprocal", lambda x: 1 / _f(x), nonzero=(0,)),
    unary("sqrt", lambda x: np.sqrt(_f(x)), domain=POS),
    unary("rsqrt", lambda x: 1 / np.sqrt(_f(x)), domain=POS),
    unary("square", lambda a: np.square(a.astype(np.int64) if a.dtype == np.bool_ else a)),  # bool -> int64
    # exp / log
    unary("exp", lambda x: np.exp(_f(x))),
    unary("exp2", lambda x: np.exp2(_f(x))),
    unary("expm1", lambda x: np.expm1(_f(x))),
    unary("log", lambda x: np.log(_f(x)), domain=POS),
    unary("log2", lambda x: np.log2(_f(x)), domain=POS),
    unary("log10", lambda x: np.log10(_f(x)), domain=POS),
    unary("log1p", lambda x: np.log1p(_f(x)), domain=POS),
    # trigonometric and hyperbolic
    unary("sin", lambda x: np.sin(_f(x))),
    unary("cos", lambda x: np.cos(_f(x))),
    unary("tan", lambda x: np.tan(_f(x)), domain=(-1.2, 1.2)),
    unary("asin", lambda x: np.arcsin(_f(x)), domain=UNIT),
    unary("acos", lambda x: np.arccos(_f(x)), domain=UNIT),
    unary("atan", lambda x: np.arctan(_f(x))),
    unary("sinh", lambda x: np.sinh(_f(x))),
    unary("cosh", lambda x: np.cosh(_f(x))),
    unary("tanh", lambda x: np.tanh(_f(x))),
    unary("erf", lambda x: _erf(_f(x))),
    # rounding
    unary("floor", np.floor, NUMERIC, grad=False),
    unary("ceil", np.ceil, NUMERIC, grad=False),
    unary("round", np.round, NUMERIC, grad=False),
    unary("trunc", np.trunc, NUMERIC, grad=False),
    unary("frac", lambda x: x - np.trunc(x), FLOAT),
    unary("clamp", lambda x: np.clip(x, -0.5, 0.7), NUMERIC, op=lambda G, x: G.clamp(x, -0.5, 0.7)),
    unary("clamp_min", lambda x: np.maximum(x, 0.5), NUMERIC, op=lambda G, x: G.clamp(x, min=0.5)),
    # the bound -1 of an unsigned input wraps to the type's max, as PyTorch converts it (the result is all 1)
    unary("clip", lambda x: np.full_like(x, 1) if x.dtype.kind == "u" else np.clip(x, -1, 1), NUMERIC,
          op=lambda G, x: G.clip(x, -1, 1)),
    OpSpec("nan_to_num", lambda G, x: G.nan_to_num(x, posinf=9.0), lambda x: np.nan_to_num(x, posinf=9.0), 1, ALL,
           make=lambda rng, dt, layout: None if layout not in ("contiguous", "transposed") else
           [np.array([[np.nan, np.inf, -1.5], [2.0, -np.inf, 0.5]], dtype=dt) if dt in FLOAT
            else rand(rng, dt, SHAPE)]),
    OpSpec("where", lambda G, c, a, b: G.where(c, a, b), lambda c, a, b: np.where(c, a, b), 3, ALL,
           pointwise=True, grad_args=(1, 2),
           make=lambda rng, dt, layout: None if layout != "contiguous" else
           [rng.random(SHAPE) > 0.5, rand(rng, dt, SHAPE), rand(rng, dt, SHAPE)]),
    # comparison and logical
    *[binary(n, f, grad=False) for n, f in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                                             ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                                             ("logical_and", np.logical_and), ("logical_or", np.logical_or),
                                             ("logical_xor", np.logical_xor))],
    binary("gt_scalar", lambda a, b: a > 1, op=lambda G, x, y: G.gt(x, 1), grad=False),
    unary("logical_not", np.logical_not, grad=False),
    binary("bitwise_and", np.bitwise_and, ("bool",) + INTEGRAL, grad=False),
    binary("bitwise_or", np.bitwise_or, ("bool",) + INTEGRAL, grad=False),
    binary("bitwise_xor", np.bitwise_xor, ("bool",) + INTEGRAL, grad=False),
    unary("bitwise_not", np.invert, ("bool",) + INTEGRAL, grad=False),
    unary("isnan", np.isnan, grad=False),
    unary("isinf", np.isinf, grad=False),
    unary("isfinite", np.isfinite, grad=False),
    # activations
    unary("relu", lambda x: np.maximum(x, 0).astype(x.dtype), NUMERIC),
    unary("relu6", lambda x: _hardtanh(x, 0, 6), NUMERIC, domain=(-3, 8)),
    binary("threshold_backward", lambda g, x: np.where(x > 0.5, g, 0).astype(np.result_type(g, x)), NUMERIC,
           op=lambda G, g, x: G.threshold_backward(g, x, 0.5), grad_args=(0,)),
    unary("leaky_relu", lambda x: np.where(x > 0, x, x * 0.01), FLOAT),
    unary("elu", lambda x: np.where(x > 0, x, np.expm1(x)), FLOAT),
    unary("selu", lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)), FLOAT),
    unary("gelu", lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2))), FLOAT),
    unary("gelu_tanh", lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), FLOAT,
          op=lambda G, x: G.gelu(x, approximate="tanh"), atol=1e-5),
    unary("silu", lambda x: x * _sigmoid(x), FLOAT),
    unary("mish", lambda x: x * np.tanh(np.logaddexp(0, x)), FLOAT),
    unary("sigmoid", lambda x: _sigmoid(_f(x))),
    unary("log_sigmoid", lambda x: -np.logaddexp(0, -x), FLOAT),
    unary("softplus", _softplus, FLOAT),
    unary("softplus_beta", lambda x: _softplus(x, 2.0, 1.0), FLOAT, op=lambda G, x: G.softplus(x, 2.0, 1.0)),
    # uint8 refused: PyTorch's hardtanh refuses negative limits (the defaults) on an unsigned dtype
    unary("hardtanh", _hardtanh, tuple(d for d in NUMERIC if d != "uint8")),
    unary("hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1), FLOAT, domain=(-4, 4)),
    unary("hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6, FLOAT, domain=(-4, 4)),
]


# -- non-elementwise ops ----------------------------------------------------------------------------

def one(shape: tuple[int, ...], domain: tuple[float, float] = (-2.0, 2.0)) -> Maker:
    """One input of `shape` (contiguous, or transposed), plus the empty and 0-d variants of reductions."""
    def make(rng: np.random.Generator, dt: str, layout: str) -> list[Array] | None:
        s = {"contiguous": shape, "transposed": shape, "empty": (0,) + shape[1:], "scalar": ()}.get(layout)
        return None if s is None else [rand(rng, dt, s, domain)]
    return make


def fixed(*shapes: tuple[int, ...], ints: dict[int, Callable[[np.random.Generator], Array]] | None = None,
          domain: tuple[float, float] = (-2.0, 2.0), layouts: tuple[str, ...] = ("contiguous", "transposed")) -> Maker:
    """Inputs of fixed shapes; `ints` gives index inputs (position -> maker)."""
    def make(rng: np.random.Generator, dt: str, layout: str) -> list[Array] | None:
        if layout not in layouts:
            return None
        out = []
        for i, s in enumerate(shapes):
            out.append(ints[i](rng) if ints and i in ints else rand(rng, dt, s, domain))
        return out
    return make


def _red(name: str, ref: Callable[..., Any], dtypes: tuple[str, ...] = ALL, op: Callable[..., Any] | None = None,
         layouts: tuple[str, ...] = ("contiguous", "transposed"), **kw: Any) -> OpSpec:
    return OpSpec(name, op or (lambda G, x: getattr(G, name)(x)), ref, 1, dtypes, layouts=layouts,
                  make=kw.pop("make", one(SHAPE, kw.get("domain", (-2.0, 2.0)))), **kw)


def _dim1(x: Array) -> int | None:
    return 1 if x.ndim >= 2 else None


def _np_var(x: Array, axis: Any = None, ddof: int = 1, keepdims: bool = False) -> Array:
    with np.errstate(all="ignore"):
        n = x.size if axis is None else x.shape[axis]
        m = x.mean(axis=axis, keepdims=True) if n else x.sum(axis=axis, keepdims=True)
        return ((x - m) ** 2).sum(axis=axis, keepdims=keepdims) / (n - ddof) if n - ddof > 0 else \
            np.full(np.sum(x, axis=axis, keepdims=keepdims).shape, np.nan)


def _softmax(x: Array, axis: int) -> Array:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _logsumexp(x: Array, axis: Any, keepdims: bool = False) -> Array:
    with np.errstate(all="ignore"):
        return np.log(np.exp(x).sum(axis=axis, keepdims=keepdims))


def _nll(logp: Array, t: Array, w: Array | None = None, reduction: str = "mean", ignore: int = -100) -> Array:
    valid = t != ignore
    safe = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    ww = (w[safe] if w is not None else np.ones_like(picked)) * valid
    loss = -picked * ww
    return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / ww.sum()}[reduction]


def _log_softmax(x: Array, axis: int) -> Array:
    return x - _logsumexp(x, axis, True)


def _targets(n: int, c: int, ignore: bool = False) -> Callable[[np.random.Generator], Array]:
    def make(rng: np.random.Generator) -> Array:
        t = rng.integers(0, c, size=n)
        if ignore:
            t[0] = -100
        return t
    return make


def _conv_ref(x: Array, w: Array, b: Array | None, stride: int = 1, pad: int = 0, dil: int = 1,
              groups: int = 1) -> Array:
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, ww = xp.shape
    o, cg, kh, kw = w.shape
    oh = (h - dil * (kh - 1) - 1) // stride + 1
    ow = (ww - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, i * dil:i * dil + stride * (oh - 1) + 1:stride,
                           j * dil:j * dil + stride * (ow - 1) + 1:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out if b is None else out + b[None, :, None, None]


def _pool_ref(x: Array, k: int, s: int, mode: str) -> Array:
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    win = np.stack([x[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s] for i in range(k) for j in range(k)])
    return win.max(0) if mode == "max" else win.mean(0)


def _scatter_ref(x: Array, idx: Array, src: Array, add: bool) -> Array:
    out = x.copy()
    rows = np.arange(idx.shape[0])[:, None]
    if add:
        np.add.at(out, (rows, idx), src[:, : idx.shape[1]])
    else:
        out[rows, idx] = src[:, : idx.shape[1]]
    return out


_PERM = np.array([[2, 0, 1, 3], [1, 3, 0, 2], [0, 1, 2, 3]])
_I64 = {"dtype": "int64"}


def _perm(rng: np.random.Generator) -> Array:
    return _PERM[:, :2].copy()


def _idx(rng: np.random.Generator) -> Array:
    return np.array([2, 0, 2, 1])


def _emb_idx(rng: np.random.Generator) -> Array:
    return np.array([[0, 2], [4, 2]])


def _bool_mask(rng: np.random.Generator) -> Array:
    return rng.random(SHAPE) > 0.5


def _probs(rng: np.random.Generator) -> Array:
    return rng.uniform(0.1, 0.9, size=SHAPE)


OPS += [
    # reductions
    _red("sum", lambda x: x.sum(dtype=np.float64 if x.dtype.kind == "f" else np.int64), layouts=REDUCE_LAYOUTS),
    _red("sum_dim", lambda x: x.sum(axis=_dim1(x), keepdims=True, dtype=np.float64 if x.dtype.kind == "f" else
                                     np.int64), op=lambda G, x: G.sum(x, 1 if x.dim() >= 2 else None, keepdim=True)),
    _red("mean", lambda x: np.mean(x) if x.size else np.nan, FLOAT, layouts=REDUCE_LAYOUTS),
    _red("mean_dim", lambda x: x.mean(axis=_dim1(x)) if x.size or x.ndim < 2 else np.full(x.shape[1], np.nan),
         FLOAT, op=lambda G, x: G.mean(x, 1 if x.dim() >= 2 else None)),
    _red("prod", lambda x: x.astype(np.float64).prod(), NUMERIC, domain=(-1.5, 1.5), layouts=REDUCE_LAYOUTS),
    _red("prod_dim", lambda x: x.astype(np.float64).prod(axis=0), NUMERIC, op=lambda G, x: G.prod(x, 0),
         domain=(-1.5, 1.5)),
    _red("amax", lambda x: x.max(axis=_dim1(x)), NUMERIC, op=lambda G, x: G.amax(x, 1 if x.dim() >= 2 else []),
         layouts=("contiguous", "transposed", "scalar")),
    _red("amin", lambda x: x.min(axis=0), NUMERIC, op=lambda G, x: G.amin(x, 0),
         layouts=("contiguous", "transposed", "scalar")),
    _red("max", np.max, ALL, layouts=("contiguous", "transposed", "scalar")),
    _red("min", np.min, ALL, layouts=("contiguous", "transposed", "scalar")),
    _red("max_dim", lambda x: (x.max(axis=1), x.argmax(axis=1)), NUMERIC, op=lambda G, x: G.max(x, 1),
         layouts=("contiguous", "transposed")),
    _red("min_dim", lambda x: (x.min(axis=0, keepdims=True), x.argmin(axis=0)[None]), NUMERIC,
         op=lambda G, x: G.min(x, 0, keepdim=True), layouts=("contiguous", "transposed")),
    _red("argmax", np.argmax, ALL, grad=False, layouts=("contiguous", "transposed", "scalar")),
    _red("argmin_dim", lambda x: x.argmin(axis=1), NUMERIC, op=lambda G, x: G.argmin(x, 1), grad=False,
         layouts=("contiguous", "transposed")),
    _red("any", lambda x: np.any(x).astype(np.uint8 if x.dtype == np.uint8 else np.bool_), ALL, grad=False,
         layouts=REDUCE_LAYOUTS),
    _red("all_dim", lambda x: np.all(x, axis=0).astype(np.uint8 if x.dtype == np.uint8 else np.bool_), ALL,
         op=lambda G, x: G.all(x, 0), grad=False,
         layouts=("contiguous", "transposed", "empty")),
    _red("var", lambda x: _np_var(x), FLOAT, layouts=("contiguous", "transposed", "empty")),
    _red("var_dim", lambda x: _np_var(x, 1, 0, True), FLOAT,
         op=lambda G, x: G.var(x, 1, correction=0, keepdim=True), layouts=("contiguous", "transposed")),
    _red("std", lambda x: np.sqrt(_np_var(x, 0)), FLOAT, op=lambda G, x: G.std(x, 0),
         layouts=("contiguous", "transposed")),
    _red("logsumexp", lambda x: _logsumexp(x, 1), FLOAT, op=lambda G, x: G.logsumexp(x, 1),
         layouts=("contiguous", "transposed", "empty")),
    _red("norm", lambda x: np.sqrt((x.astype(np.float64) ** 2).sum()), FLOAT, layouts=REDUCE_LAYOUTS),
    _red("norm_p1_dim", lambda x: np.abs(x).sum(axis=1), FLOAT, op=lambda G, x: G.norm(x, 1, [1]),
         layouts=("contiguous", "transposed")),
    _red("norm_p3", lambda x: (np.abs(x) ** 3).sum() ** (1 / 3), FLOAT,
         op=lambda G, x: G.linalg_vector_norm(x, 3)),
    _red("norm_inf", lambda x: np.abs(x).max(axis=1), FLOAT,
         op=lambda G, x: G.linalg_vector_norm(x, float("inf"), [1]), layouts=("contiguous", "transposed")),
    _red("cumsum", lambda x: x.cumsum(axis=1, dtype=np.float64 if x.dtype.kind == "f" else np.int64), ALL,
         op=lambda G, x: G.cumsum(x, 1), layouts=("contiguous", "transposed", "empty")),
    _red("softmax", lambda x: _softmax(x, 1), FLOAT, op=lambda G, x: G.softmax(x, 1),
         layouts=("contiguous", "transposed", "empty")),
    _red("log_softmax", lambda x: _log_softmax(x, 0), FLOAT, op=lambda G, x: G.log_softmax(x, 0),
         layouts=("contiguous", "transposed")),
    # linear algebra
    OpSpec("mm", lambda G, a, b: G.mm(a, b), np.matmul, 2, NUMERIC, make=fixed((3, 4), (4, 5))),
    OpSpec("bmm", lambda G, a, b: G.bmm(a, b), np.matmul, 2, FLOAT, make=fixed((2, 3, 4), (2, 4, 5))),
    OpSpec("matmul", lambda G, a, b: G.matmul(a, b), np.matmul, 2, FLOAT, make=fixed((2, 3, 4), (4, 5))),
    OpSpec("matmul_vec", lambda G, a, b: G.matmul(a, b), np.matmul, 2, FLOAT, make=fixed((3, 4), (4,))),
    OpSpec("addmm", lambda G, c, a, b: G.addmm(c, a, b, beta=0.5, alpha=2), lambda c, a, b: 0.5 * c + 2 * (a @ b),
           3, FLOAT, make=fixed((5,), (3, 4), (4, 5)), atol=1e-5),
    OpSpec("linear", lambda G, x, w, b: G.linear(x, w, b), lambda x, w, b: x @ w.T + b, 3, FLOAT,
           make=fixed((2, 3, 4), (5, 4), (5,)), atol=1e-5),
    OpSpec("dot", lambda G, a, b: G.dot(a, b), np.dot, 2, NUMERIC, make=fixed((4,), (4,)), atol=1e-5),
    OpSpec("outer", lambda G, a, b: G.outer(a, b), np.outer, 2, FLOAT, make=fixed((3,), (4,))),
    # losses
    OpSpec("mse_loss", lambda G, a, b: G.mse_loss(a, b), lambda a, b: ((a - b) ** 2).mean(), 2, FLOAT,
           make=fixed(SHAPE, SHAPE)),
    OpSpec("mse_loss_none", lambda G, a, b: G.mse_loss(a, b, "none"), lambda a, b: (a - b) ** 2, 2, FLOAT,
           make=fixed(SHAPE, SHAPE)),
    OpSpec("l1_loss_sum", lambda G, a, b: G.l1_loss(a, b, "sum"), lambda a, b: np.abs(a - b).sum(), 2, FLOAT,
           make=fixed(SHAPE, SHAPE)),
    OpSpec("smooth_l1_loss", lambda G, a, b: G.smooth_l1_loss(a, b, beta=0.5),
           lambda a, b: np.where(np.abs(a - b) < 0.5, (a - b) ** 2, np.abs(a - b) - 0.25).mean(), 2, FLOAT,
           make=fixed(SHAPE, SHAPE)),
    OpSpec("binary_cross_entropy", lambda G, p, t: G.binary_cross_entropy(p, t),
           lambda p, t: -(t * np.log(p) + (1 - t) * np.log(1 - p)).mean(), 2, FLOAT,
           make=fixed(SHAPE, SHAPE, domain=(0.1, 0.9)), atol=1e-5, rtol=1e-4),
    OpSpec("bce_with_logits", lambda G, x, t, pw: G.binary_cross_entropy_with_logits(x, t, pos_weight=pw),
           lambda x, t, pw: (-(pw * t * np.log(_sigmoid(x)) + (1 - t) * np.log(1 - _sigmoid(x)))).mean(), 3, FLOAT,
           make=fixed(SHAPE, SHAPE, (SHAPE[1],), ints={1: _probs}), grad_args=(0, 2), atol=1e-5, rtol=1e-4),
    OpSpec("nll_loss", lambda G, x, t, w: G.nll_loss(x, t, w, ignore_index=-100),
           lambda x, t, w: _nll(x, t, w), 3, FLOAT, make=fixed(SHAPE, (3,), (4,), ints={1: _targets(3, 4, True)}),
           grad_args=(0,)),
    OpSpec("cross_entropy", lambda G, x, t: G.cross_entropy_loss(x, t), lambda x, t: _nll(_log_softmax(x, 1), t), 2,
           FLOAT, make=fixed(SHAPE, (3,), ints={1: _targets(3, 4)}), grad_args=(0,), atol=1e-5, rtol=1e-4),
    OpSpec("cross_entropy_sum_ls", lambda G, x, t: G.cross_entropy_loss(x, t, reduction="sum", label_smoothing=0.2),
           lambda x, t: 0.8 * _nll(_log_softmax(x, 1), t, reduction="sum") - 0.05 * _log_softmax(x, 1).sum(), 2,
           FLOAT, make=fixed(SHAPE, (3,), ints={1: _targets(3, 4)}), grad_args=(0,), atol=1e-5, rtol=1e-4),
    OpSpec("cross_entropy_probs", lambda G, x, p: G.cross_entropy_loss(x, p),
           lambda x, p: -(_log_softmax(x, 1) * p).sum(1).mean(), 2, FLOAT, make=fixed(SHAPE, SHAPE),
           atol=1e-5, rtol=1e-4),
    # shape ops
    OpSpec("cat", lambda G, a, b: G.cat([a, b], 1), lambda a, b: np.concatenate([a, b], 1), 2, ALL,
           make=fixed(SHAPE, (3, 2))),
    OpSpec("stack", lambda G, a, b: G.stack([a, b], -1), lambda a, b: np.stack([a, b], -1), 2, ALL,
           make=fixed(SHAPE, SHAPE)),
    OpSpec("repeat", lambda G, a: a.repeat([2, 1, 3]), lambda a: np.tile(a, (2, 1, 3)), 1, ALL, make=fixed(SHAPE)),
    OpSpec("tile", lambda G, a: G.tile(a, [2]), lambda a: np.tile(a, 2), 1, ALL, make=fixed(SHAPE)),
    OpSpec("roll", lambda G, a: G.roll(a, [1, -2], [0, 1]), lambda a: np.roll(a, (1, -2), (0, 1)), 1, ALL,
           make=fixed(SHAPE)),
    OpSpec("roll_flat", lambda G, a: G.roll(a, 5), lambda a: np.roll(a, 5), 1, ALL, make=fixed(SHAPE)),
    OpSpec("flip", lambda G, a: G.flip(a, [0, 1]), lambda a: np.flip(a, (0, 1)), 1, ALL, make=fixed(SHAPE)),
    OpSpec("tril", lambda G, a: G.tril(a, 1), lambda a: np.tril(a, 1), 1, ALL, make=fixed(SHAPE)),
    OpSpec("triu", lambda G, a: G.triu(a, -1), lambda a: np.triu(a, -1), 1, ALL, make=fixed(SHAPE)),
    # indexing
    OpSpec("index_select", lambda G, a, i: G.index_select(a, 1, i), lambda a, i: np.take(a, i, 1), 2, ALL,
           make=fixed(SHAPE, (4,), ints={1: _idx}), grad_args=(0,)),
    OpSpec("index_add", lambda G, a, i, s: G.index_add(a, 1, i, s, alpha=2),
           lambda a, i, s: _index_add_ref(a, i, s * 2), 3, NUMERIC, make=fixed(SHAPE, (4,), (3, 4), ints={1: _idx}),
           grad_args=(0, 2)),
    OpSpec("gather", lambda G, a, i: G.gather(a, 1, i), lambda a, i: np.take_along_axis(a, i, 1), 2, ALL,
           make=fixed(SHAPE, (3, 2), ints={1: _perm}), grad_args=(0,)),
    OpSpec("scatter", lambda G, a, i, s: G.scatter(a, 1, i, s), lambda a, i, s: _scatter_ref(a, i, s, False), 3,
           ALL, make=fixed(SHAPE, (3, 2), (3, 2), ints={1: _perm}), grad_args=(0, 2)),
    OpSpec("scatter_value", lambda G, a, i: G.scatter(a, 1, i, 1.5 if a.is_floating_point() else 1),
           lambda a, i: _scatter_ref(a, i, np.full(a.shape, 1.5 if a.dtype.kind == "f" else 1, a.dtype), False),
           2, ALL, make=fixed(SHAPE, (3, 2), ints={1: _perm}), grad_args=(0,)),
    OpSpec("scatter_add", lambda G, a, i, s: G.scatter_add(a, 1, i, s), lambda a, i, s: _scatter_ref(a, i, s, True),
           3, NUMERIC, make=fixed(SHAPE, (3, 2), (3, 2), ints={1: lambda r: np.array([[0, 0], [1, 1], [3, 0]])}),
           grad_args=(0, 2)),
    OpSpec("masked_fill", lambda G, a, m: G.masked_fill(a, m, 0), lambda a, m: np.where(m, 0, a).astype(a.dtype),
           2, ALL, make=fixed(SHAPE, SHAPE, ints={1: _bool_mask}), grad_args=(0,)),
    OpSpec("embedding", lambda G, w, i: G.embedding(w, i), lambda w, i: w[i], 2, FLOAT,
           make=fixed((5, 3), (2, 2), ints={1: _emb_idx}), grad_args=(0,)),
    OpSpec("embedding_padding", lambda G, w, i: G.embedding(w, i, 2), lambda w, i: w[i], 2, FLOAT,
           make=fixed((5, 3), (2, 2), ints={1: _emb_idx}), grad=False),  # the padding row gets no gradient
    OpSpec("one_hot", lambda G, i: G.one_hot(i, 5), lambda i: np.eye(5, dtype=np.int64)[i], 1, ("int64",),
           make=fixed((2, 2), ints={0: _emb_idx}), grad=False),
    # sorting
    OpSpec("sort", lambda G, a: G.sort(a, 1), lambda a: (np.sort(a, 1, kind="stable"),
                                                          np.argsort(a, 1, kind="stable")), 1, NUMERIC,
           make=fixed(SHAPE)),
    OpSpec("sort_desc_stable", lambda G, a: G.sort(a, stable=True, dim=0, descending=True),
           lambda a: (np.take_along_axis(a, _desc(a, 0), 0), _desc(a, 0)), 1, ALL, make=fixed(SHAPE)),
    OpSpec("argsort", lambda G, a: G.argsort(a, descending=True), lambda a: _desc(a, 1), 1, ALL,
           make=fixed(SHAPE), grad=False),
    OpSpec("topk", lambda G, a: G.topk(a, 2), lambda a: (np.take_along_axis(a, _desc(a, 1)[:, :2], 1),
                                                          _desc(a, 1)[:, :2]), 1, NUMERIC, make=fixed(SHAPE)),
    OpSpec("topk_smallest", lambda G, a: G.topk(a, 3, 0, largest=False)[0], lambda a: np.sort(a, 0)[:3], 1, FLOAT,
           make=fixed(SHAPE)),
    # convolution and pooling
    OpSpec("conv2d", lambda G, x, w, b: G.conv2d(x, w, b, 2, 1), lambda x, w, b: _conv_ref(x, w, b, 2, 1), 3,
           ("float32", "float64"), make=fixed((2, 3, 5, 6), (4, 3, 3, 3), (4,)), atol=1e-4, rtol=1e-4),
    OpSpec("conv2d_groups_dilation", lambda G, x, w: G.conv2d(x, w, None, 1, 2, 2, 2),
           lambda x, w: _conv_ref(x, w, None, 1, 2, 2, 2), 2, ("float32", "float64"),
           make=fixed((1, 4, 6, 6), (6, 2, 3, 3)), atol=1e-4, rtol=1e-4),
    OpSpec("max_pool2d", lambda G, x: G.max_pool2d(x, 2), lambda x: _pool_ref(x, 2, 2, "max"), 1, FLOAT,
           make=fixed((2, 3, 4, 6))),
    OpSpec("max_pool2d_pad_ceil", lambda G, x: G.max_pool2d(x, 3, 2, 1, ceil_mode=True),
           lambda x: _pool_ref(np.pad(x, ((0, 0), (0, 0), (1, 2), (1, 1)), constant_values=-np.inf), 3, 2, "max"),
           1, FLOAT, make=fixed((1, 2, 6, 5))),
    OpSpec("avg_pool2d", lambda G, x: G.avg_pool2d(x, 2), lambda x: _pool_ref(x, 2, 2, "avg"), 1, FLOAT,
           make=fixed((2, 3, 4, 6)), atol=1e-5),
    OpSpec("avg_pool2d_pad", lambda G, x: G.avg_pool2d(x, 3, 1, 1),
           lambda x: _pool_ref(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), 3, 1, "avg"), 1, FLOAT,
           make=fixed((1, 2, 4, 5)), atol=1e-5),
    OpSpec("dropout_eval", lambda G, x: G.dropout(x, 0.5, False), lambda x: x, 1, FLOAT, make=fixed(SHAPE)),
]


# normalization, adaptive pooling, attention and the losses added with them (runtime/kernels/normalization.py)
def _norm_ref(x: Array, axes: tuple[int, ...], eps: float = 1e-5) -> Array:
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _channel(v: Array, ndim: int) -> Array:
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _group_norm_ref(x: Array, groups: int, w: Array, b: Array) -> Array:
    n = x.shape[0]
    y = _norm_ref(x.reshape(n, groups, -1), (2,)).reshape(x.shape)
    return y * _channel(w, x.ndim) + _channel(b, x.ndim)


def _adaptive_avg_ref(x: Array, oh: int, ow: int) -> Array:
    h, w = x.shape[-2:]
    out = np.empty(x.shape[:-2] + (oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
            c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            out[..., i, j] = x[..., r0:r1, c0:c1].mean(axis=(-2, -1))
    return out


def _sdpa_ref(q: Array, k: Array, v: Array, causal: bool = False) -> Array:
    scores = q @ np.swapaxes(k, -2, -1) / np.sqrt(q.shape[-1])
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)
    return _softmax(scores, -1) @ v


def _positive(rng: np.random.Generator) -> Array:
    return rng.uniform(0.5, 2.0, size=(3,))


OPS += [
    OpSpec("batch_norm_train", lambda G, x, w, b: G.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
           lambda x, w, b: _norm_ref(x, (0, 2, 3)) * _channel(w, 4) + _channel(b, 4), 3, FLOAT,
           make=fixed((4, 3, 2, 2), (3,), (3,)), atol=1e-4, rtol=1e-3),
    OpSpec("batch_norm_eval", lambda G, x, m, v: G.batch_norm(x, None, None, m, v, False, 0.1, 1e-5, True),
           lambda x, m, v: (x - _channel(m, 3)) / np.sqrt(_channel(v, 3) + 1e-5), 3, FLOAT,
           make=fixed((2, 3, 4), (3,), (3,), ints={2: _positive}), grad_args=(0,), atol=1e-4, rtol=1e-3),
    OpSpec("layer_norm", lambda G, x, w, b: G.layer_norm(x, [4], w, b), lambda x, w, b: _norm_ref(x, (-1,)) * w + b,
           3, FLOAT, make=fixed((2, 3, 4), (4,), (4,)), atol=1e-4, rtol=1e-3),
    OpSpec("group_norm", lambda G, x, w, b: G.group_norm(x, 2, w, b), lambda x, w, b: _group_norm_ref(x, 2, w, b),
           3, FLOAT, make=fixed((2, 4, 3), (4,), (4,)), atol=1e-4, rtol=1e-3),
    OpSpec("adaptive_avg_pool2d", lambda G, x: G.adaptive_avg_pool2d(x, [2, 3]), lambda x: _adaptive_avg_ref(x, 2, 3),
           1, FLOAT, make=fixed((1, 2, 5, 7)), atol=1e-5),
    OpSpec("scaled_dot_product_attention", lambda G, q, k, v: G.scaled_dot_product_attention(q, k, v), _sdpa_ref, 3,
           FLOAT, make=fixed((2, 3, 4), (2, 5, 4), (2, 5, 3)), atol=1e-4, rtol=1e-3),
    OpSpec("scaled_dot_product_attention_causal",
           lambda G, q, k, v: G.scaled_dot_product_attention(q, k, v, is_causal=True),
           lambda q, k, v: _sdpa_ref(q, k, v, True), 3, FLOAT, make=fixed((2, 4, 4), (2, 4, 4), (2, 4, 3)),
           atol=1e-4, rtol=1e-3),
    OpSpec("huber_loss", lambda G, a, b: G.huber_loss(a, b, "sum", 0.5),
           lambda a, b: np.where(np.abs(a - b) < 0.5, 0.5 * (a - b) ** 2, 0.5 * (np.abs(a - b) - 0.25)).sum(), 2,
           FLOAT, make=fixed(SHAPE, SHAPE), atol=1e-5, rtol=1e-4),
    OpSpec("kl_div", lambda G, x, t: G.kl_div(x, t, "sum"), lambda x, t: (t * (np.log(t) - x)).sum(), 2, FLOAT,
           make=fixed(SHAPE, SHAPE, domain=(0.1, 0.9)), atol=1e-5, rtol=1e-4),
    OpSpec("kl_div_log_target", lambda G, x, t: G.kl_div(x, t, log_target=True),
           lambda x, t: (np.exp(t) * (t - x)).mean(), 2, FLOAT, make=fixed(SHAPE, SHAPE), atol=1e-5, rtol=1e-4),
]


def _desc(a: Array, axis: int) -> Array:
    """Stable descending argsort (ties keep their order), NaN first."""
    a = a.astype(np.float64) if a.dtype.kind in "bf" else a.astype(np.int64)
    return np.argsort(-a, axis=axis, kind="stable")


def _index_add_ref(a: Array, i: Array, s: Array) -> Array:
    out = a.copy()
    np.add.at(out, (slice(None), i), s.astype(a.dtype))
    return out


# -- PyTorch compatibility: tensor ops ---------------------------------------------------------------------

def _stable_rank(a: Array, axis: int, rank: int) -> tuple[Array, Array]:
    """Values and indices at `rank` of the stable ascending sort along `axis` (median, kthvalue)."""
    idx = np.take(np.argsort(a, axis=axis, kind="stable"), [rank], axis=axis)
    return np.take_along_axis(a, idx, axis).squeeze(axis), idx.squeeze(axis)


def _mode_ref(a: Array) -> tuple[Array, Array]:
    """Mode of each row: the most frequent value (the smallest on ties) and the last index holding it."""
    values, indices = [], []
    for row in a.reshape(-1, a.shape[-1]):
        uniq, counts = np.unique(row, return_counts=True)
        v = uniq[np.argmax(counts)]
        values.append(v)
        indices.append(len(row) - 1 - int(np.argmax(row[::-1] == v)))
    return np.array(values, dtype=a.dtype).reshape(a.shape[:-1]), np.array(indices).reshape(a.shape[:-1])


def _cum_ref(a: Array, largest: bool) -> tuple[Array, Array]:
    """cummax/cummin along dim 1: the running extreme, and the last index where it was reached."""
    keys = a.astype(np.float64) if a.dtype.kind in "bf" else a
    values, idx = a.copy(), np.zeros(a.shape, np.int64)
    for j in range(1, a.shape[1]):
        take = keys[:, j] >= keys[np.arange(a.shape[0]), idx[:, j - 1]] if largest else \
            keys[:, j] <= keys[np.arange(a.shape[0]), idx[:, j - 1]]
        idx[:, j] = np.where(take, j, idx[:, j - 1])
        values[:, j] = a[np.arange(a.shape[0]), idx[:, j]]
    return values, idx


def _distinct(rng: np.random.Generator, dt: str, shape: tuple[int, ...]) -> Array:
    """Values without ties (a permutation), so order statistics have one right index."""
    return (rng.permutation(int(np.prod(shape))).reshape(shape) - 5).astype(dt if dt != "uint8" else "int64") \
        .astype(dt) if dt != "bool" else rng.random(shape) > 0.5


def _square(rng: np.random.Generator, dt: str, layout: str, batch: tuple[int, ...] = ()) -> list[Array] | None:
    if layout not in ("contiguous", "transposed"):
        return None
    return [(rng.uniform(-1, 1, batch + (3, 3)) + 3 * np.eye(3)).astype(dt)]


def _spd(rng: np.random.Generator, dt: str, layout: str) -> list[Array] | None:
    if layout not in ("contiguous", "transposed"):
        return None
    a = rng.uniform(-1, 1, (3, 3))
    return [(a @ a.T + np.eye(3)).astype(dt)]


def _cdist_ref(a: Array, b: Array, p: float) -> Array:
    d = np.abs(a[:, None, :] - b[None, :, :])
    return (d ** p).sum(-1) ** (1 / p)


def _isclose_ref(a: Array, b: Array) -> Array:
    return np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-8) if a.dtype != np.bool_ \
        else a == b


LINALG = ("float32", "float64")

OPS += [
    OpSpec("addcmul", lambda G, a, b, c: G.addcmul(a, b, c, value=2), lambda a, b, c: a + 2 * b * c, 3, NUMERIC,
           pointwise=True, domain=(-1.0, 1.0)),
    OpSpec("addcdiv", lambda G, a, b, c: G.addcdiv(a, b, c, value=0.5), lambda a, b, c: a + 0.5 * b / c, 3, FLOAT,
           pointwise=True, nonzero=(2,)),
    OpSpec("addcmul_", lambda G, a, b, c: a.clone().addcmul_(b, c), lambda a, b, c: a + b * c, 3, FLOAT,
           make=fixed(SHAPE, SHAPE, (4,))),
    binary("logaddexp", np.logaddexp, FLOAT),
    OpSpec("logaddexp_inf", lambda G, a: G.logaddexp(a, a), lambda a: np.logaddexp(a, a), 1, FLOAT,
           make=lambda rng, dt, layout: None if layout != "contiguous" else
           [np.array([-np.inf, np.inf, 0.5, -2.0], dtype=dt)], grad=False),
    OpSpec("clamp_tensor", lambda G, x, lo, hi: G.clamp(x, lo, hi), lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
           3, NUMERIC, make=fixed(SHAPE, (4,), (3, 1), domain=(-2.0, 2.0))),
    OpSpec("clamp_tensor_min", lambda G, x, lo: G.clamp(x, min=lo), lambda x, lo: np.maximum(x, lo), 2, FLOAT,
           make=fixed(SHAPE, SHAPE)),
    OpSpec("clip_tensor_max", lambda G, x, hi: x.clip(max=hi), lambda x, hi: np.minimum(x, hi), 2, FLOAT,
           make=fixed(SHAPE, (4,))),
    OpSpec("clamp_tensor_", lambda G, x, lo: x.clone().clamp_(lo), lambda x, lo: np.maximum(x, lo), 2, FLOAT,
           make=fixed(SHAPE, (4,))),
    _red("var_unbiased", lambda x: _np_var(x, None, 0), FLOAT, op=lambda G, x: G.var(x, unbiased=False)),
    _red("var_dim_unbiased", lambda x: _np_var(x, 1, 0, True), FLOAT,
         op=lambda G, x: x.var(1, unbiased=False, keepdim=True)),
    _red("std_dim_unbiased", lambda x: np.sqrt(_np_var(x, 0, 1)), FLOAT, op=lambda G, x: G.std(x, 0, True)),
    _red("nonzero", lambda x: np.argwhere(x), ALL, grad=False, layouts=REDUCE_LAYOUTS),
    _red("nonzero_tuple", lambda x: np.nonzero(x), ALL, op=lambda G, x: x.nonzero(as_tuple=True), grad=False,
         layouts=("contiguous", "transposed", "empty")),
    _red("count_nonzero", lambda x: np.count_nonzero(x, axis=1), ALL, op=lambda G, x: G.count_nonzero(x, 1),
         grad=False),
    OpSpec("masked_select", lambda G, a, m: G.masked_select(a, m), lambda a, m: a[m], 2, ALL,
           make=fixed(SHAPE, SHAPE, ints={1: _bool_mask}), grad_args=(0,)),
    OpSpec("masked_select_broadcast", lambda G, a, m: a.masked_select(m), lambda a, m: np.broadcast_to(a, SHAPE)[m],
           2, FLOAT, make=fixed((4,), SHAPE, ints={1: _bool_mask}), grad_args=(0,)),
    OpSpec("median", lambda G, a: G.median(a), lambda a: np.sort(a.reshape(-1))[(a.size - 1) // 2], 1, NUMERIC,
           make=lambda rng, dt, layout: None if layout != "contiguous" else [_distinct(rng, dt, SHAPE)]),
    OpSpec("median_dim", lambda G, a: G.median(a, 1), lambda a: _stable_rank(a, 1, (a.shape[1] - 1) // 2), 1,
           NUMERIC, make=fixed(SHAPE)),
    OpSpec("kthvalue", lambda G, a: a.kthvalue(2, 0, True), lambda a: tuple(
        x[None] for x in _stable_rank(a, 0, 1)), 1, NUMERIC, make=fixed(SHAPE)),
    OpSpec("mode", lambda G, a: G.mode(a), _mode_ref, 1, ALL, grad=False,
           make=lambda rng, dt, layout: None if layout not in ("contiguous", "transposed") else
           [rng.integers(0, 3, (3, 7)).astype(dt)]),
    OpSpec("cummax", lambda G, a: G.cummax(a, 1), lambda a: _cum_ref(a, True), 1, NUMERIC, make=fixed(SHAPE)),
    OpSpec("cummin", lambda G, a: a.cummin(1), lambda a: _cum_ref(a, False), 1, NUMERIC, make=fixed(SHAPE)),
    OpSpec("bucketize", lambda G, a, b: G.bucketize(a, b), lambda a, b: np.searchsorted(b, a), 2, NUMERIC,
           make=lambda rng, dt, layout: None if layout not in ("contiguous", "transposed") else
           [rand(rng, dt, SHAPE), np.array([-1, 0, 1], dtype=dt) if dt != "uint8" else np.array([0, 1, 2], dt)],
           grad=False),
    OpSpec("bucketize_right", lambda G, a, b: G.bucketize(a, b, right=True, out_int32=True),
           lambda a, b: np.searchsorted(b, a, side="right").astype(np.int32), 2, ("int64", "float32"),
           make=fixed(SHAPE, (3,), ints={1: lambda rng: np.array([-1, 0, 1])}), grad=False),
    OpSpec("unique", lambda G, a: G.unique(a, return_inverse=True, return_counts=True),
           lambda a: np.unique(a, return_inverse=True, return_counts=True), 1, ALL, grad=False,
           make=lambda rng, dt, layout: None if layout not in ("contiguous", "transposed") else
           [rng.integers(0, 3, SHAPE).astype(dt)]),
    OpSpec("unique_dim", lambda G, a: a.unique(dim=0), lambda a: np.unique(a, axis=0), 1, NUMERIC, grad=False,
           make=lambda rng, dt, layout: None if layout != "contiguous" else
           [np.array([[1, 2], [0, 1], [1, 2]], dtype=dt)]),
    OpSpec("repeat_interleave", lambda G, a: G.repeat_interleave(a, 2), lambda a: np.repeat(a, 2), 1, ALL,
           make=fixed(SHAPE)),
    OpSpec("repeat_interleave_tensor", lambda G, a, r: a.repeat_interleave(r, dim=1),
           lambda a, r: np.repeat(a, r, axis=1), 2, ALL, make=fixed(SHAPE, (4,),
                                                                   ints={1: lambda rng: np.array([1, 0, 3, 2])}),
           grad_args=(0,)),
    OpSpec("movedim", lambda G, a: G.movedim(a, [0, 1], [2, 0]), lambda a: np.moveaxis(a, [0, 1], [2, 0]), 1, ALL,
           make=fixed((2, 3, 4))),
    OpSpec("moveaxis", lambda G, a: a.moveaxis(0, -1), lambda a: np.moveaxis(a, 0, -1), 1, ALL, make=fixed(SHAPE)),
    OpSpec("diag_embed", lambda G, a: G.diag(a, 1), lambda a: np.diag(a, 1), 1, ALL, make=fixed((4,))),
    OpSpec("diag_extract", lambda G, a: a.diag(-1), lambda a: np.diag(a, -1), 1, ALL, make=fixed(SHAPE)),
    OpSpec("cdist", lambda G, a, b: G.cdist(a, b), lambda a, b: _cdist_ref(a, b, 2), 2, ("float32", "float64"),
           make=fixed((3, 4), (5, 4)), atol=1e-5),
    OpSpec("cdist_p1", lambda G, a, b: G.cdist(a, b, p=1.0), lambda a, b: _cdist_ref(a, b, 1), 2,
           ("float32", "float64"), make=fixed((3, 4), (2, 4)), atol=1e-5),
    binary("isclose", _isclose_ref, grad=False),
    OpSpec("einsum", lambda G, a, b: G.einsum("bij,jk->bki", a, b), lambda a, b: np.einsum("bij,jk->bki", a, b), 2,
           FLOAT, make=fixed((2, 3, 4), (4, 5)), atol=1e-5),
    OpSpec("einsum_trace_ellipsis", lambda G, a: G.einsum("...ii->...", a), lambda a: np.einsum("...ii->...", a), 1,
           FLOAT, make=fixed((2, 3, 3))),
    OpSpec("meshgrid", lambda G, a, b: G.meshgrid(a, b, indexing="xy"), lambda a, b: tuple(np.meshgrid(a, b)), 2,
           ALL, make=fixed((3,), (4,))),
    OpSpec("broadcast_tensors", lambda G, a, b: G.broadcast_tensors(a, b),
           lambda a, b: tuple(np.broadcast_arrays(a, b)), 2, ALL, make=fixed((3, 1), (4,))),
    OpSpec("linalg_inv", lambda G, a: G.linalg.inv(a), np.linalg.inv, 1, LINALG, make=_square, atol=1e-5),
    OpSpec("linalg_det", lambda G, a: G.linalg.det(a), np.linalg.det, 1, LINALG,
           make=lambda rng, dt, layout: _square(rng, dt, layout, (2,)), atol=1e-4),
    OpSpec("linalg_solve", lambda G, a, b: G.linalg.solve(a, b), lambda a, b: np.linalg.solve(a, b), 2, LINALG,
           make=lambda rng, dt, layout: None if layout != "contiguous" else
           _square(rng, dt, layout, (2,)) + [rand(rng, dt, (3, 2))], atol=1e-5),
    OpSpec("linalg_solve_vector", lambda G, a, b: G.linalg.solve(a, b), lambda a, b: np.linalg.solve(a, b), 2,
           LINALG, make=lambda rng, dt, layout: None if layout != "contiguous" else
           _square(rng, dt, layout) + [rand(rng, dt, (3,))], atol=1e-5),
    OpSpec("linalg_cholesky", lambda G, a: G.linalg.cholesky(a), np.linalg.cholesky, 1, LINALG, make=_spd,
           grad=False, atol=1e-5),
    OpSpec("linalg_qr", lambda G, a: G.linalg.qr(a), lambda a: tuple(np.linalg.qr(a)), 1, LINALG,
           make=fixed((4, 3)), grad=False, atol=1e-5),
    OpSpec("linalg_svd", lambda G, a: G.linalg.svd(a, full_matrices=False),
           lambda a: tuple(np.linalg.svd(a, full_matrices=False)), 1, LINALG, make=fixed((4, 3)), grad=False,
           atol=1e-5),
    OpSpec("linalg_norm_nuc", lambda G, a: G.linalg.norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc"), 1, LINALG,
           make=fixed(SHAPE), atol=1e-5),
    OpSpec("linalg_matrix_norm_inf", lambda G, a: G.linalg.matrix_norm(a, float("inf")),
           lambda a: np.linalg.norm(a, np.inf, axis=(-2, -1)), 1, LINALG, make=fixed((2, 3, 4))),
    OpSpec("linalg_vector_norm_dims", lambda G, a: G.linalg.vector_norm(a, 3, dim=(0, 2)),
           lambda a: (np.abs(a) ** 3).sum(axis=(0, 2)) ** (1 / 3), 1, LINALG, make=fixed((2, 3, 4)), atol=1e-5),
]


BY_NAME = {spec.name: spec for spec in OPS}
assert len(BY_NAME) == len(OPS), "duplicate op names in the table"
