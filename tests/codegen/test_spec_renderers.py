"""Note [One renderer per backend]: a kernel spec is rendered by one SpecRenderer subclass per backend, and a
new backend is a new subclass that touches neither the others nor the tree walk."""

from __future__ import annotations

import ast

import pytest

from codegen.kernel_spec import CUDA, NUMPY, FunctionRule, NumpyRenderer, PointwiseSpec, SpecRenderer

NAMES = {"self": "x", "other": "y", "alpha": "a"}


def _spec(source: str) -> PointwiseSpec:
    return PointwiseSpec.parse(source, tensors=("self", "other"), scalars=("alpha",))


class LispRenderer(SpecRenderer):
    """A toy third backend: prefix notation."""

    def binop(self, op: ast.operator, a: str, b: str) -> str:
        return f"({type(op).__name__.lower()} {a} {b})"

    def unary(self, op: ast.unaryop, a: str) -> str:
        return f"({type(op).__name__.lower()} {a})"

    def boolop(self, op: ast.boolop, parts: list[str]) -> str:
        return f"({type(op).__name__.lower()} {' '.join(parts)})"

    def select(self, test: str, body: str, orelse: str) -> str:
        return f"(if {test} {body} {orelse})"

    def call(self, rule: FunctionRule, args: list[str]) -> str:
        return f"({rule.name} {' '.join(args)})"


def test_a_third_backend_is_one_subclass() -> None:
    spec = _spec("where(self > 0, -exp(self), alpha * other) if not self and other else 2")
    assert spec.render(LispRenderer(), NAMES) == (
        "(if (and (not x) y) (where (x > 0) (usub (exp x)) (mult a y)) 2)")
    # the existing backends are unchanged by it
    assert spec.render(NUMPY, NAMES) == ("_k.where(np.logical_and(np.logical_not(x), y), _k.where((x > 0), "
                                         "(-np.exp(x)), (a * y)), 2)")
    assert spec.render(CUDA, NAMES) == "(((!x) && y) ? op_where((x > 0), (-op_exp(x)), (a * y)) : 2)"


@pytest.mark.parametrize(("source", "numpy", "cuda"), [
    ("self + alpha * other", "(x + (a * y))", "(x + (a * y))"),
    ("self // other % 2 ** alpha", "((x // y) % _k.power(2, a))", "op_remainder(op_floordiv(x, y), op_pow(2, a))"),
    ("self & other | ~self ^ other", "((x & y) | (np.invert(x) ^ y))", "((x & y) | (op_bitwise_not(x) ^ y))"),
    ("self or other or True", "np.logical_or(np.logical_or(x, y), True)", "(x || y || true)"),
    ("atan2(self, other) >= 1.5", "(np.arctan2(x, y) >= 1.5)", "(op_atan2(x, y) >= 1.5)"),
])
def test_numpy_and_cuda_spellings(source: str, numpy: str, cuda: str) -> None:
    spec = _spec(source)
    assert spec.render(NUMPY, NAMES) == numpy
    assert spec.render(CUDA, NAMES) == cuda


def test_a_renderer_must_spell_every_construct() -> None:
    class Partial(SpecRenderer):  # no binop/unary/...: abstract, cannot be made
        def call(self, rule: FunctionRule, args: list[str]) -> str:
            return rule.name

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]
    assert isinstance(NUMPY, NumpyRenderer)
