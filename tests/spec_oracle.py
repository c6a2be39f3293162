"""A NumPy reference for pointwise ops that does not go through the generator: the `pointwise:` expression
of native_functions.yaml is walked here, in float64, with this module's own function table.

It is the value oracle of tests/ops/test_every_yaml_op.py where PyTorch is not installed (or has no such op). Being
written apart from codegen/kernel_spec.py's NumPy rendering, it catches what the generator, the templates,
dtype promotion and the layout handling get wrong; a wrong expression in the YAML it shares with the kernel,
which only the PyTorch comparison catches.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _shift(a: Any, b: Any, *, left: bool) -> Any:
    """PyTorch's integer shifts, element by element with Python ints: the count read as signed of a's
    width; out of range, << gives 0 and >> the sign fill (0 for unsigned types)."""
    a = np.asarray(a)
    bits = 8 * a.dtype.itemsize
    signed = a.dtype.kind == "i"

    def one(x: int, c: int) -> int:
        c = (int(c) + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
        x = int(x)
        if left:
            v = (x << c) & ((1 << bits) - 1) if 0 <= c < bits else 0
            return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v
        return x >> c if 0 <= c < bits - signed else (-1 if x < 0 else 0)
    return np.vectorize(one, otypes=[a.dtype])(a, b)

FUNCTIONS: dict[str, Callable[..., Any]] = {
    "acosh": np.arccosh, "asinh": np.arcsinh, "atanh": np.arctanh,
    "erfc": np.vectorize(math.erfc, otypes=[np.float64]),
    "lgamma": np.vectorize(lambda v: math.lgamma(v) if v > 0 or v != math.floor(v) else math.inf,
                           otypes=[np.float64]),
    "signbit": np.signbit, "copysign": np.copysign, "nextafter": np.nextafter,
    "abs": np.abs, "sign": np.sign, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "erf": _erf, "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "log_sigmoid": lambda x: -np.logaddexp(0, -x), "softplus": lambda x: np.logaddexp(0, x),
    "atan2": np.arctan2, "maximum": np.maximum, "minimum": np.minimum, "fmod": np.fmod, "pow": np.power,
    "where": np.where, "gcd": np.gcd, "lcm": np.lcm,
    "shl": lambda a, b: _shift(a, b, left=True), "shr": lambda a, b: _shift(a, b, left=False),
}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: np.floor_divide, ast.Mod: np.remainder, ast.Pow: np.power, ast.BitAnd: np.bitwise_and,
    ast.BitOr: np.bitwise_or, ast.BitXor: np.bitwise_xor,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos,
                                            ast.Not: np.logical_not, ast.Invert: np.invert}


def evaluate(tree: ast.expr, env: Mapping[str, Any]) -> Any:
    """The value of a pointwise expression over NumPy arrays and Python numbers named in `env`."""
    if isinstance(tree, ast.Name):
        return env[tree.id]
    if isinstance(tree, ast.Constant):
        return tree.value
    if isinstance(tree, ast.BinOp):
        return _BINARY[type(tree.op)](evaluate(tree.left, env), evaluate(tree.right, env))
    if isinstance(tree, ast.UnaryOp):
        return _UNARY[type(tree.op)](evaluate(tree.operand, env))
    if isinstance(tree, ast.Compare) and len(tree.ops) == 1:
        return _COMPARE[type(tree.ops[0])](evaluate(tree.left, env), evaluate(tree.comparators[0], env))
    if isinstance(tree, ast.BoolOp):
        combine = np.logical_and if isinstance(tree.op, ast.And) else np.logical_or
        values = [evaluate(v, env) for v in tree.values]
        result = values[0]
        for v in values[1:]:
            result = combine(result, v)
        return result
    if isinstance(tree, ast.IfExp):
        return np.where(evaluate(tree.test, env), evaluate(tree.body, env), evaluate(tree.orelse, env))
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name):
        return FUNCTIONS[tree.func.id](*(evaluate(a, env) for a in tree.args))
    raise NotImplementedError(f"spec_oracle cannot evaluate {ast.dump(tree)}: extend tests/spec_oracle.py")
