"""gradcheck of every operator that has a derivative, parametrised from derivatives.yaml itself.

An op added to native_functions.yaml + derivatives.yaml is checked here with no new test code: its
inputs are built from its schema (Tensor -> a random float64 tensor that requires grad, Scalar -> a
number, defaults used otherwise). Ops whose inputs need particular shapes or values have an entry in
SHAPES / DOMAINS / ARG_VALUES below; anything else gets the defaults. First derivatives are always
checked; second derivatives where the backward formula is itself differentiable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from codegen.schema_parser import default_value
from tests.op_samples import TYPE_VALUES  # values by type when the schema has no default

ROOT = Path(__file__).resolve().parents[2]

DEFAULT_SHAPE = (2, 3)
# Tensor argument shapes, in schema order, for ops that need them (matrix products ...).
SHAPES: dict[str, list[tuple[int, ...]]] = {
    "mm": [(2, 3), (3, 4)],
    "matmul": [(2, 3), (3, 4)],
    "bmm": [(2, 2, 3), (2, 3, 4)],
    "mv": [(2, 3), (3,)],
    "dot": [(3,), (3,)],
    "outer": [(2,), (3,)],
    "addmm": [(2, 4), (2, 3), (3, 4)],
    "linear": [(2, 3), (4, 3), (4,)],
    "select_backward": [(2,)],
    "slice_backward": [(2, 2)],
    "as_strided_backward": [(2, 2)],
    "diagonal_backward": [(2,)],
    "im2col": [(1, 4, 4)],
    "col2im": [(4, 4)],
    "max_pool2d_with_indices": [(1, 4, 4)],
    "max_pool2d_with_indices_backward": [(1, 2, 2), (1, 4, 4)],
    # grouped (2 groups of 2 channels), strided, padded and dilated: OH = 3, OW = 4
    "_conv2d_forward": [(2, 4, 5, 6), (4, 2, 3, 3), (4,)],
    "_conv2d_backward_input": [(2, 4, 3, 4), (4, 2, 3, 3)],
    "_conv2d_backward_weight": [(2, 4, 3, 4), (2, 4, 5, 6)],
    "masked_fill": [(2, 3), ()],
    "linalg_inv": [(3, 3)],
    "linalg_det": [(2, 3, 3)],
    "linalg_solve": [(3, 3), (3, 2)],
    "linalg_cholesky": [(3, 3)],
    "linalg_qr": [(4, 3)],
    "linalg_svd": [(4, 3)],
    "linalg_eigh": [(3, 3)],
    "linalg_slogdet": [(2, 3, 3)],
    "_linalg_lu": [(3, 3)],
    "kthvalue": [(2, 3)],
    "cummax": [(2, 3)],
    "native_layer_norm": [(2, 3), (3,), (3,)],
}
# Inputs made well-posed inside the checked function (a random matrix is neither well-conditioned nor
# positive-definite): op name -> {argument index: transform of the random tensor}.
def _well_conditioned(a: Any) -> Any:
    import generated as G
    return a + 3 * G.eye(a.shape[-1], dtype=a.dtype)


def _positive_definite(a: Any) -> Any:
    import generated as G
    return a.matmul(a.transpose(-2, -1)) + G.eye(a.shape[-1], dtype=a.dtype)


PREPARE: dict[str, dict[int, Any]] = {
    "linalg_inv": {0: _well_conditioned}, "linalg_det": {0: _well_conditioned},
    "linalg_solve": {0: _well_conditioned}, "linalg_cholesky": {0: _positive_definite},
    "linalg_eigh": {0: _positive_definite}, "linalg_slogdet": {0: _well_conditioned},
    "_linalg_lu": {0: _well_conditioned},
}
# Value domains (low, high) of Tensor arguments; the default keeps |x| in [0.2, 0.9] with random signs,
# away from kinks at 0 (abs, relu) and inside [-1, 1] (asin, acos).
POSITIVE = (0.3, 1.5)
DOMAINS: dict[str, tuple[float, float]] = {op: POSITIVE for op in (
    "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "pow", "reciprocal", "lgamma", "digamma", "xlogy")}
DOMAINS.update({op: POSITIVE for op in ("special_entr", "igamma", "igammac", "polygamma", "special_i0e",
                                        "special_i1e")})
DOMAINS.update({"acosh": (1.2, 3.0), "special_ndtri": (0.1, 0.9), "special_zeta": (1.5, 3.0)})
# Values of non-Tensor arguments by op and argument name (otherwise: the schema default, else by type).
ARG_VALUES: dict[str, dict[str, Any]] = {
    "view": {"size": [3, 2]},
    "reshape": {"shape": [3, 2]},
    "expand": {"size": [4, 2, 3]},
    "permute": {"dims": [1, 0]},
    "transpose": {"dim0": 0, "dim1": 1},
    "clamp": {"min": -0.5, "max": 0.5},
    "select": {"dim": 1, "index": 1},
    "select_backward": {"input_sizes": [2, 3], "dim": 1, "index": 1},
    "slice_backward": {"input_sizes": [2, 4], "dim": 1, "start": 1, "end": 3, "step": 1},
    # a column-major 2x2 window of a row-major 3x4 input, at storage offset 1
    "as_strided_backward": {"input_sizes": [3, 4], "input_strides": [4, 1], "input_offset": 0, "size": [2, 2],
                            "stride": [1, 2], "storage_offset": 1},
    "diagonal_backward": {"input_sizes": [2, 3], "offset": 0, "dim1": 0, "dim2": 1},
    "repeat": {"repeats": [2, 1]},
    "roll": {"shifts": [1], "dims": [1]},
    "topk": {"k": 2},
    "scatter_reduce": {"dim": 1, "reduce": "mean"},
    "native_dropout": {"p": 0.0, "train": True},
    "im2col": {"kernel_size": [2, 2], "dilation": [1, 1], "padding": [0, 0], "stride": [1, 1]},
    "col2im": {"output_size": [3, 3], "kernel_size": [2, 2], "dilation": [1, 1], "padding": [0, 0],
               "stride": [1, 1]},
    "max_pool2d_with_indices": {"kernel_size": [2, 2]},
    "max_pool2d_with_indices_backward": {"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0],
                                         "dilation": [1, 1]},
    **{op: {"stride": [2, 1], "padding": [1, 1], "dilation": [1, 2], "groups": 2, **extra} for op, extra in (
        ("_conv2d_forward", {}),
        ("_conv2d_backward_input", {"input_size": [2, 4, 5, 6]}),
        ("_conv2d_backward_weight", {"weight_size": [4, 2, 3, 3]}))},
    "linalg_svd": {"full_matrices": False},
    "kthvalue": {"k": 2, "dim": 1},
    "median": {"dim": 1},
    "mode": {"dim": 1},
    "native_layer_norm": {"normalized_shape": [3], "eps": 1e-5},
    "_cross_entropy_indices": {"reduction": "mean"},
}
# Non-differentiable Tensor arguments (no formula in derivatives.yaml) by name: index tensors valid for
# a (2, 3) input along dim 1 (permutations, so scatter has no duplicate targets), masks.
INDEX_1D = [2, 0, 1]
INDEX_2D = [[2, 0, 1], [1, 2, 0]]
MASK = [[True, False, True], [False, True, False]]
# Ops whose second derivative is not checked, with the reason.
NO_GRADGRAD: dict[str, str] = {}


def _load() -> tuple[list[Any], list[Any], str | None]:
    """(derivatives, native functions, load error) from the YAML files at the repository root."""
    try:
        from codegen.derivatives import load_derivatives
        from codegen.native import load_native_functions
    except ImportError as e:
        return [], [], f"codegen is not importable: {e}"
    nf, dy = ROOT / "native_functions.yaml", ROOT / "derivatives.yaml"
    if not nf.is_file() or not dy.is_file():  # no YAML would leave every case below uncollected
        return [], [], f"missing {nf.name} or {dy.name} in {ROOT}"
    try:
        functions = load_native_functions(nf, root=ROOT)
        # entries with no formula only mark an op's outputs non-differentiable: nothing to check
        return [d for d in load_derivatives(dy, functions, root=ROOT) if d.formulas], functions, None
    except Exception as e:  # reported by test_yaml_loads, so that collection itself never fails
        return [], [], f"{type(e).__name__}: {e}"


# Ops whose output is a random draw: no finite difference says anything about them; their zero gradient
# is checked in tests/codegen/test_derivative_required.py.
RANDOM_FILLS = {"uniform_", "normal_", "random_", "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_"}

DERIVATIVES, FUNCTIONS, LOAD_ERROR = _load()
# entries without formulas only mark outputs not differentiable (argmax, nonzero ...): nothing to check
DERIVATIVES = [d for d in DERIVATIVES if d.formulas and d.function.func.name.name not in RANDOM_FILLS]


def test_yaml_loads() -> None:
    if LOAD_ERROR is not None:
        pytest.fail(f"native_functions.yaml / derivatives.yaml do not load: {LOAD_ERROR}")


def _generated() -> Any:
    import generated as G  # a broken generated/ fails these tests: it never skips them
    return G


def _op_callable(f: Any) -> Any:
    """The unboxed call of exactly this overload (all arguments positional, in schema order)."""
    from codegen.api_python import op_id
    from generated import _ops
    return getattr(_ops, f"_call_{op_id(f)}")


def _random_tensor(G: Any, rng: np.random.Generator, shape: tuple[int, ...],
                   domain: tuple[float, float] | None,
                   requires_grad: bool = True) -> Any:
    if domain is None:
        values = rng.uniform(0.2, 0.9, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    else:
        values = rng.uniform(domain[0], domain[1], size=shape)
    return G.tensor(values, dtype=G.float64, requires_grad=requires_grad)


def make_inputs(d: Any, seed: int = 0, shift_scalars: bool = False) -> list[Any]:
    """Arguments (schema order, out arguments excluded) for the op of derivative `d`. With
    `shift_scalars`, Scalar and float arguments get a value other than their default (see
    `_nondefault`), so that a formula that drops or misplaces such a term (softplus's `beta`) fails."""
    G = _generated()
    f = d.function
    name = f.func.name.name
    rng = np.random.default_rng(seed)
    shapes = list(SHAPES.get(name, []))
    domain = DOMAINS.get(name)
    values = ARG_VALUES.get(name, {})
    differentiable = {i for formula in d.formulas for i in formula.inputs}
    args: list[Any] = []
    for a in f.func.arguments.flat_non_out:
        t = a.type
        if a.name in values:
            args.append(values[a.name])
        elif t.is_tensor_like() and a.name not in differentiable:
            args.append(_non_differentiable_tensor(G, name, a))
        elif t.is_tensor_like():
            if t.is_optional() and a.default is not None:
                args.append(None)
            elif t.is_list():
                args.append([_random_tensor(G, rng, DEFAULT_SHAPE, domain) for _ in range(2)])
            else:
                shape = shapes.pop(0) if shapes else DEFAULT_SHAPE
                args.append(_random_tensor(G, rng, shape, domain))
        elif a.default is not None:
            args.append(default_value(a))
        elif t.is_optional():
            args.append(None)
        else:
            args.append(TYPE_VALUES.get(str(t), TYPE_VALUES.get(t.base_name())))
        if shift_scalars and a.name not in values and str(t) in SHIFTED_TYPES:
            args[-1] = _nondefault(args[-1])
    return args


# Argument types whose values gradcheck also varies (int, bool and str arguments choose shapes and modes).
SHIFTED_TYPES = ("Scalar", "float")


def _nondefault(value: Any) -> Any:
    """A value near `value` but different from it (None, an absent optional, stays None)."""
    return None if value is None or isinstance(value, str) else float(value) + 0.75


def _non_differentiable_tensor(G: Any, op: str, a: Any) -> Any:
    """A value for a Tensor argument without a formula: an index tensor, a mask, or a constant."""
    if a.name in ("mask", "condition"):
        return G.tensor(MASK)
    if a.name == "indices" and a.type.is_list():
        return [G.tensor([1, 0])]
    if a.name == "indices" and op == "max_pool2d_with_indices_backward":
        return G.tensor([[[0, 3], [9, 14]]])  # one position in each 2x2 window of a 4x4 plane
    if a.name == "indices":
        return G.tensor([[0, 1], [1, 0]])
    if a.name == "index":
        return G.tensor(INDEX_1D if op in ("index_select", "index_add") else INDEX_2D)
    if a.name == "target" and op == "_cross_entropy_indices":
        return G.tensor([2, 0])  # class indices of the (2, 3) logits
    if a.type.is_optional() and a.default is not None:
        return None
    if op == "special_zeta":  # the Hurwitz zeta's order: x > 1
        return G.tensor(np.full(DEFAULT_SHAPE, 2.5), dtype=G.float64)
    return G.tensor(np.full(DEFAULT_SHAPE, 0.5), dtype=G.float64)


def _case_id(d: Any) -> str:
    return f"{d.function.name}[{d.node_name}]"


def _flat_tensors(args: list[Any]) -> list[Any]:
    out = []
    for a in args:
        if _is_tensor_list(a):
            out.extend(a)
        elif hasattr(a, "_grad_fn"):
            out.append(a)
    return out


def _is_tensor_list(a: Any) -> bool:
    return isinstance(a, list) and bool(a) and all(hasattr(x, "_grad_fn") for x in a)


def _kind(a: Any) -> int | None:
    """-1 for a tensor, the length for a list of tensors, None for anything else."""
    if _is_tensor_list(a):
        return len(a)
    return -1 if hasattr(a, "_grad_fn") else None


def _as_function(d: Any, args: list[Any]) -> tuple[Any, list[Any]]:
    """A function of the flat tensor inputs that calls the op with the other arguments fixed."""
    from codegen.model import SchemaKind
    op = _op_callable(d.function)
    if d.function.kind == SchemaKind.inplace:
        def call(first: Any, *rest: Any) -> Any:
            return op(first * 1.0, *rest)  # a non-leaf copy: in-place on a leaf that requires grad fails
    else:
        call = op
    layout = [_kind(a) for a in args]
    prepare = PREPARE.get(d.function.func.name.name, {})

    def fn(*tensors: Any) -> Any:
        it = iter(tensors)
        full = []
        for i, (a, kind) in enumerate(zip(args, layout, strict=True)):
            if kind is None:
                full.append(a)
            elif kind == -1:
                full.append(prepare[i](next(it)) if i in prepare else next(it))
            else:
                full.append([next(it) for _ in range(kind)])
        out = call(*full)
        if diff is not None and isinstance(out, tuple):  # only the outputs marked differentiable are checked
            kept = tuple(o for o, keep in zip(out, diff, strict=True) if keep)
            return kept[0] if len(kept) == 1 else kept
        return out

    diff = d.output_differentiability
    fn.__qualname__ = d.function.name
    return fn, _flat_tensors(args)


def _is_not_implemented(e: Exception) -> bool:
    return "is not implemented" in str(e)


@pytest.mark.parametrize("d", DERIVATIVES, ids=_case_id)
def test_gradcheck(d: Any) -> None:
    from runtime.autograd.gradcheck import gradcheck
    fn, inputs = _as_function(d, make_inputs(d))
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


def _has_shiftable_scalar(d: Any) -> bool:
    values = ARG_VALUES.get(d.function.func.name.name, {})
    return any(str(a.type) in SHIFTED_TYPES and a.name not in values for a in d.function.func.arguments.flat_non_out)


SCALAR_CASES = [d for d in DERIVATIVES if _has_shiftable_scalar(d)]


@pytest.mark.parametrize("d", SCALAR_CASES, ids=_case_id)
def test_gradcheck_nondefault_scalars(d: Any) -> None:
    """The formulas also hold away from the defaults: every Scalar/float argument moved off its default."""
    from runtime.autograd.gradcheck import gradcheck
    args = make_inputs(d, seed=2, shift_scalars=True)
    defaults = make_inputs(d, seed=2)
    moved = [i for i, (a, b) in enumerate(zip(args, defaults, strict=True)) if _kind(a) is None and a != b]
    assert moved, f"{d.function.name}: no argument was moved off its default"
    fn, inputs = _as_function(d, args)
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("d", DERIVATIVES, ids=_case_id)
def test_gradgradcheck(d: Any) -> None:
    from runtime.autograd.gradcheck import gradgradcheck
    name = d.function.func.name.name
    if name in NO_GRADGRAD:
        pytest.skip(NO_GRADGRAD[name])
    fn, inputs = _as_function(d, make_inputs(d, seed=1))
    try:
        assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-4, rtol=1e-3)
    except RuntimeError as e:
        if _is_not_implemented(e):
            pytest.skip(f"second derivative not defined: {e}")
        raise


def _inplace_forms() -> list[tuple[Any, Any]]:
    """(derivative, in-place form) for every op with a derivative and a derived `op_` form."""
    from codegen.model import SchemaKind
    out = []
    for d in DERIVATIVES:
        for f in FUNCTIONS:
            if f.derived_from is d.function and f.kind == SchemaKind.inplace:
                out.append((d, f))
    return out


@pytest.mark.parametrize("d,f", [pytest.param(d, f, id=f.name) for d, f in _inplace_forms()])
def test_gradcheck_inplace_form(d: Any, f: Any) -> None:
    """The in-place form (`add_`) on a fresh non-leaf copy has the same gradient as the op."""
    G = _generated()
    args = make_inputs(d)
    fn, inputs = _as_function(d, args)
    call = _op_callable(f)

    def inplace(*tensors: Any) -> Any:
        first, *rest = tensors
        copy = first * 1.0  # a non-leaf copy: in-place on a leaf that requires grad is an error
        return call(*_rebuild(args, (copy, *rest)))

    inplace.__qualname__ = f.name
    from runtime.autograd.gradcheck import gradcheck
    assert G is not None and gradcheck(inplace, inputs)


def _rebuild(args: list[Any], tensors: tuple[Any, ...]) -> list[Any]:
    it = iter(tensors)
    out = []
    for a in args:
        if _is_tensor_list(a):
            out.append([next(it) for _ in a])
        elif hasattr(a, "_grad_fn"):
            out.append(next(it))
        else:
            out.append(a)
    return out
