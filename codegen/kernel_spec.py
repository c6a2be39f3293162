"""The pointwise kernel spec: one Python expression, rendered to NumPy (CPU) and to CUDA C++ by one
renderer class per backend (Note [One renderer per backend]).

An operator becomes pure YAML with

    - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
      pointwise: self + alpha * other

The expression is read with `ast` (never with regular expressions). Its names are the schema's
tensor and scalar arguments; its functions come from the table `FUNCTIONS`; its operators are
Python's. `promote` says how the output dtype is found (see `PROMOTIONS`) and `dtypes` which input
dtypes the op accepts.
"""

from __future__ import annotations

import ast
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

from codegen.errors import OpgenError
from codegen.formula_grammar import GrammarError, check_depth
from codegen.literals import cxx_number, python_number
from runtime.vocabulary import DTYPE_GROUPS, PROMOTE_KINDS, PromoteKind


@dataclass(frozen=True)
class FunctionRule:
    """One function usable in a pointwise expression: its NumPy spelling ({0}, {1} ... are arguments).

    The CUDA spelling is always `op_<name>(...)`, implemented for every compute type in
    runtime/cuda/include/opgen_math.cuh.
    """

    name: str
    arity: int
    numpy: str

    @property
    def cuda(self) -> str:
        args = ", ".join(f"{{{i}}}" for i in range(self.arity))
        return f"op_{self.name}({args})"


def _rules(arity: int, table: dict[str, str]) -> dict[str, FunctionRule]:
    return {name: FunctionRule(name, arity, numpy) for name, numpy in table.items()}


# The vocabulary of pointwise expressions (tinygrad-style: one table, no if-chains).
FUNCTIONS: dict[str, FunctionRule] = {
    **_rules(1, {
        "abs": "np.abs({0})", "sign": "_k.sign({0})", "sqrt": "np.sqrt({0})",
        "rsqrt": "np.reciprocal(np.sqrt({0}))", "reciprocal": "np.reciprocal({0})",
        "exp": "np.exp({0})", "exp2": "np.exp2({0})", "expm1": "np.expm1({0})",
        "log": "np.log({0})", "log2": "np.log2({0})", "log10": "np.log10({0})", "log1p": "np.log1p({0})",
        "sin": "np.sin({0})", "cos": "np.cos({0})", "tan": "np.tan({0})",
        "asin": "np.arcsin({0})", "acos": "np.arccos({0})", "atan": "np.arctan({0})",
        "sinh": "np.sinh({0})", "cosh": "np.cosh({0})", "tanh": "np.tanh({0})",
        "erf": "_k.erf({0})", "floor": "np.floor({0})", "ceil": "np.ceil({0})",
        "round": "np.round({0})", "trunc": "np.trunc({0})", "sigmoid": "_k.sigmoid({0})",
        "isnan": "np.isnan({0})", "isinf": "np.isinf({0})", "isfinite": "np.isfinite({0})",
        "log_sigmoid": "_k.log_sigmoid({0})", "softplus": "np.logaddexp(0, {0})",
        "acosh": "np.arccosh({0})", "asinh": "np.arcsinh({0})", "atanh": "np.arctanh({0})",
        "erfc": "_k.erfc({0})", "lgamma": "_k.lgamma({0})", "signbit": "np.signbit({0})",
    }),
    **_rules(2, {
        "atan2": "np.arctan2({0}, {1})", "maximum": "np.maximum({0}, {1})",
        "minimum": "np.minimum({0}, {1})", "fmod": "np.fmod({0}, {1})", "pow": "_k.power({0}, {1})",
        "copysign": "np.copysign({0}, {1})", "nextafter": "np.nextafter({0}, {1})",
        "gcd": "np.gcd({0}, {1})", "lcm": "np.lcm({0}, {1})", "shl": "_k.shl({0}, {1})", "shr": "_k.shr({0}, {1})",
    }),
    **_rules(3, {"where": "_k.where({0}, {1}, {2})"}),  # Note [Branch-free where] (cpu_pointwise.py)
}

# `promote:` kinds and `dtypes:` groups are closed sets of runtime/vocabulary.py.
PROMOTIONS = PROMOTE_KINDS

# The operators a spec may use (the grammar; each renderer spells every one of them).
_BINOPS: dict[type, str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
}
_COMPARE: dict[type, str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}


class SpecError(ValueError):
    """A kernel spec that is not valid; the loader adds file and line."""


@dataclass(frozen=True)
class PointwiseSpec:
    """A validated pointwise expression over a schema's arguments."""

    source: str
    tree: ast.expr
    promote: PromoteKind
    tensors: tuple[str, ...]
    scalars: tuple[str, ...]
    dtypes: tuple[str, ...]
    promote_scalars: tuple[str, ...] = ()   # scalars that take part in type promotion (wrapped numbers)
    zero_dim: tuple[str, ...] = ()  # tensors that must be 0-dimensional (masked_fill's value)
    # tensors that must have the first tensor's dtype (lerp's end), and whether a 0-d one must too (lerp's
    # weight need not: PyTorch's binding reads a 0-d weight as the Scalar overload's number)
    same_dtype: tuple[tuple[str, bool], ...] = ()

    @staticmethod
    def parse(source: str, *, tensors: tuple[str, ...], scalars: tuple[str, ...],
              promote: str = "common", dtypes: str | list[str] = "all",
              promote_scalars: tuple[str, ...] = (), zero_dim: tuple[str, ...] = (),
              same_dtype: tuple[tuple[str, bool], ...] = ()) -> PointwiseSpec:
        """Parse and validate `source`; `tensors`/`scalars` are the argument names it may use."""
        if promote not in PROMOTIONS:
            raise SpecError(f"unknown promote '{promote}'; expected one of {', '.join(PROMOTIONS)}")
        _check_one_line(source)
        try:
            tree = ast.parse(source.strip(), mode="eval").body
        except SyntaxError as e:
            raise SpecError(f"pointwise expression is not valid Python: {e.msg} (column {e.offset})") from None
        except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, absurd nesting
            raise SpecError(f"pointwise expression is not valid Python: {e}") from None
        try:
            check_depth(tree)
        except GrammarError as e:
            raise SpecError(str(e)) from None
        used = _validate(tree, set(tensors) | set(scalars))
        if not used & set(tensors):
            raise SpecError("pointwise expression uses no tensor argument")
        unknown = [s for s in promote_scalars if s not in scalars]
        if unknown:
            raise SpecError(f"promote_scalars names '{unknown[0]}', which is not a scalar argument of the op; "
                            f"its scalar arguments are: {', '.join(scalars) or 'none'}")
        return PointwiseSpec(source.strip(), tree, PromoteKind(promote), tensors, scalars, _dtype_names(dtypes),
                             tuple(promote_scalars), tuple(zero_dim), tuple(same_dtype))

    def render(self, renderer: SpecRenderer, names: Mapping[str, str]) -> str:
        """The spec in `renderer`'s language; `names` maps argument names to that language's variables."""
        return renderer.render(self.tree, names)

    @property
    def text(self) -> str:
        """The spec printed from its tree (one line, names and numbers only): what generated comments show."""
        return ast.unparse(self.tree)

    def specialize(self, constants: Mapping[str, float]) -> PointwiseSpec:
        """The spec with some scalar arguments fixed to constants and folded (`1 * x` -> `x`).

        Generated kernels use it for a fast path when scalars have their default value (add's alpha=1).
        """
        tree = _Fold(constants).visit(ast.parse(ast.unparse(self.tree), mode="eval").body)
        return PointwiseSpec(ast.unparse(tree), tree, self.promote, self.tensors, self.scalars, self.dtypes,
                             self.promote_scalars, self.zero_dim, self.same_dtype)


def _check_one_line(source: str) -> None:
    """A spec is one logical line of printable ASCII: no line break of any kind, no comment, no line
    continuation (it is rendered from its tree, but its text is shown by `opgen show`)."""
    for i, ch in enumerate(source.strip()):
        if not " " <= ch <= "~":
            raise SpecError(f"pointwise expression must be one line of printable ASCII; character "
                            f"U+{ord(ch):04X} at column {i + 1}")
        if ch in "#\\":
            raise SpecError(f"pointwise expression may not contain {ch!r} (column {i + 1}): it is one expression")


def _dtype_names(dtypes: str | list[str]) -> tuple[str, ...]:
    groups = [dtypes] if isinstance(dtypes, str) else list(dtypes)
    names: list[str] = []
    for group in groups:
        if group in DTYPE_GROUPS:
            names.extend(DTYPE_GROUPS[group])
        elif group in DTYPE_GROUPS["all"]:
            names.append(group)
        else:
            known = ", ".join(list(DTYPE_GROUPS) + list(DTYPE_GROUPS["all"]))
            raise SpecError(f"unknown dtype or dtype group '{group}'; expected one of {known}")
    return tuple(n for n in DTYPE_GROUPS["all"] if n in names)


def _validate(node: ast.expr, allowed: set[str]) -> set[str]:
    """Check that `node` uses only the spec's vocabulary, a closed grammar (Note [Formulas are a closed
    grammar], codegen/formula_grammar.py); return the argument names it uses."""
    used: set[str] = set()
    callees = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            if id(sub) in callees:
                continue  # checked with its Call
            if sub.id not in allowed:
                if sub.id in FUNCTIONS:
                    raise SpecError(f"function '{sub.id}' is used as a value in pointwise expression; call it")
                raise SpecError(f"unknown name '{sub.id}' in pointwise expression; "
                                f"the op's arguments are: {', '.join(sorted(allowed))}")
            used.add(sub.id)
        elif isinstance(sub, ast.Call):
            fn = sub.func.id if isinstance(sub.func, ast.Name) else None
            rule = FUNCTIONS.get(fn or "")
            if rule is None:
                raise SpecError(f"unknown function '{ast.unparse(sub.func)}' in pointwise expression; "
                                f"known: {', '.join(sorted(FUNCTIONS))}")
            if sub.keywords or len(sub.args) != rule.arity:
                raise SpecError(f"{fn}() takes {rule.arity} positional argument(s)")
        elif isinstance(sub, ast.Constant):
            if type(sub.value) not in (int, float, bool):
                raise SpecError(f"constant {sub.value!r} is not a number or bool")
            if type(sub.value) is float and not math.isfinite(sub.value):
                raise SpecError(f"constant {sub.value!r} is not finite")
            if type(sub.value) is int and not -(2**63) <= sub.value < 2**63:
                raise SpecError(f"constant {sub.value} does not fit in int64")
        elif isinstance(sub, ast.Compare):
            if len(sub.ops) != 1:
                raise SpecError("chained comparisons are not supported; combine with 'and'")
            if type(sub.ops[0]) not in _COMPARE:
                raise SpecError(f"comparison '{_OP_TEXT.get(type(sub.ops[0]), type(sub.ops[0]).__name__)}' is "
                                "not allowed in a pointwise expression; use <, <=, >, >=, == or !=")
        elif isinstance(sub, ast.BinOp) and type(sub.op) not in _BINOPS:
            raise SpecError(f"operator '{type(sub.op).__name__}' is not allowed in a pointwise expression; "
                            f"use {' '.join(_BINOPS.values())}")
        elif not isinstance(sub, _ALLOWED_NODES):
            raise SpecError(f"'{type(sub).__name__}' is not allowed in a pointwise expression")
    return used


_OP_TEXT = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


class _Fold(ast.NodeTransformer):
    """Replace named scalars by constants and drop multiplications by 1 and additions of 0."""

    def __init__(self, constants: Mapping[str, float]) -> None:
        self.constants = constants

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.constants:
            return ast.Constant(self.constants[node.id])
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        left, right = node.left, node.right

        def const(n: ast.expr, value: float) -> bool:
            return isinstance(n, ast.Constant) and type(n.value) in (int, float) and n.value == value

        if isinstance(node.op, ast.Mult):
            if const(left, 1):
                return right
            if const(right, 1):
                return left
        if isinstance(node.op, ast.Add | ast.Sub) and const(right, 0):
            return left
        if isinstance(node.op, ast.Add) and const(left, 0):
            return right
        return node


_ALLOWED_NODES = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Load, ast.operator,
                  ast.unaryop, ast.boolop, ast.cmpop)


# Note [One renderer per backend]
# A validated spec is turned into source text by a SpecRenderer: the base class walks the tree (the grammar
# of `_validate`) and asks its subclass for one spelling per construct. NumPy (CPU kernels) and CUDA C++ are
# the two subclasses; a new backend is one more subclass, with no change to the others or to the walk.
class SpecRenderer(ABC):
    """Turns a validated spec tree into an expression of one backend's language."""

    def render(self, node: ast.expr, names: Mapping[str, str]) -> str:
        def r(n: ast.expr) -> str:
            return self.render(n, names)

        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, int | float)  # _validate admits numbers and bools only
            return self.constant(node.value)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, r(node.left), r(node.right))
        if isinstance(node, ast.UnaryOp):
            return self.unary(node.op, r(node.operand))
        if isinstance(node, ast.BoolOp):
            return self.boolop(node.op, [r(v) for v in node.values])
        if isinstance(node, ast.Compare):
            return f"({r(node.left)} {_COMPARE[type(node.ops[0])]} {r(node.comparators[0])})"
        if isinstance(node, ast.IfExp):
            return self.select(r(node.test), r(node.body), r(node.orelse))
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)  # _validate admits only calls of listed names
            return self.call(FUNCTIONS[node.func.id], [r(a) for a in node.args])
        raise SpecError(f"cannot render {ast.dump(node)}")  # unreachable after _validate

    def constant(self, value: float) -> str:
        """A number or bool constant; a backend with its own spelling of non-finite values overrides it."""
        if isinstance(value, float) and not math.isfinite(value):
            raise SpecError(f"constant {value!r} is not finite")
        return repr(value)

    @abstractmethod
    def binop(self, op: ast.operator, a: str, b: str) -> str: ...

    @abstractmethod
    def unary(self, op: ast.unaryop, a: str) -> str: ...

    @abstractmethod
    def boolop(self, op: ast.boolop, parts: list[str]) -> str: ...

    @abstractmethod
    def select(self, test: str, body: str, orelse: str) -> str:
        """`body if test else orelse`, elementwise."""

    @abstractmethod
    def call(self, rule: FunctionRule, args: list[str]) -> str: ...


class NumpyRenderer(SpecRenderer):
    """NumPy over arrays (the CPU kernels of generated/_cpu_kernels.py)."""

    _UNARY: dict[type, str] = {ast.USub: "(-{0})", ast.UAdd: "(+{0})", ast.Not: "np.logical_not({0})",
                               ast.Invert: "np.invert({0})"}
    _BOOLOPS: dict[type, str] = {ast.And: "np.logical_and", ast.Or: "np.logical_or"}

    def constant(self, value: float) -> str:
        return repr(value) if isinstance(value, bool) else python_number(value)

    def binop(self, op: ast.operator, a: str, b: str) -> str:
        if isinstance(op, ast.Pow):  # integer tensors to negative integer tensors: PyTorch's answer
            return f"_k.power({a}, {b})"
        return f"({a} {_BINOPS[type(op)]} {b})"

    def unary(self, op: ast.unaryop, a: str) -> str:
        return self._UNARY[type(op)].format(a)

    def boolop(self, op: ast.boolop, parts: list[str]) -> str:
        out = parts[0]
        for p in parts[1:]:
            out = f"{self._BOOLOPS[type(op)]}({out}, {p})"
        return out

    def select(self, test: str, body: str, orelse: str) -> str:
        return f"_k.where({test}, {body}, {orelse})"

    def call(self, rule: FunctionRule, args: list[str]) -> str:
        return rule.numpy.format(*args)


class CudaRenderer(SpecRenderer):
    """CUDA C++ over scalars of the compute type (the device functions of generated/cuda/pointwise/)."""

    _BINOPS: dict[type, str] = {
        ast.Add: "({0} + {1})", ast.Sub: "({0} - {1})", ast.Mult: "({0} * {1})", ast.Div: "({0} / {1})",
        ast.FloorDiv: "op_floordiv({0}, {1})", ast.Mod: "op_remainder({0}, {1})", ast.Pow: "op_pow({0}, {1})",
        ast.BitAnd: "({0} & {1})", ast.BitOr: "({0} | {1})", ast.BitXor: "({0} ^ {1})",
    }
    # `~` through op_bitwise_not: C++'s `~` promotes bool to int (~true == -2, stored back as true).
    _UNARY: dict[type, str] = {ast.USub: "(-{0})", ast.UAdd: "(+{0})", ast.Not: "(!{0})",
                               ast.Invert: "op_bitwise_not({0})"}
    _BOOLOPS: dict[type, str] = {ast.And: "&&", ast.Or: "||"}

    def constant(self, value: float) -> str:
        try:
            return cxx_number(value)
        except OpgenError as e:
            raise SpecError(str(e)) from None

    def binop(self, op: ast.operator, a: str, b: str) -> str:
        return self._BINOPS[type(op)].format(a, b)

    def unary(self, op: ast.unaryop, a: str) -> str:
        return self._UNARY[type(op)].format(a)

    def boolop(self, op: ast.boolop, parts: list[str]) -> str:
        return "(" + f" {self._BOOLOPS[type(op)]} ".join(parts) + ")"

    def select(self, test: str, body: str, orelse: str) -> str:
        return f"({test} ? {body} : {orelse})"

    def call(self, rule: FunctionRule, args: list[str]) -> str:
        return rule.cuda.format(*args)


NUMPY = NumpyRenderer()
CUDA = CudaRenderer()


def condition_tensors(spec: PointwiseSpec) -> tuple[str, ...]:
    """The tensor arguments a spec uses as a condition (the test of `a if c else b`, the first argument of
    `where(c, a, b)`), in order of first use. PyTorch requires those to be bool (masked_fill's mask,
    where's condition); the generated kernels check it."""
    found: list[str] = []
    for node in ast.walk(spec.tree):
        test: ast.expr | None = None
        if isinstance(node, ast.IfExp):
            test = node.test
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "where" and node.args:
            test = node.args[0]
        if isinstance(test, ast.Name) and test.id in spec.tensors and test.id not in found:
            found.append(test.id)
    return tuple(found)


def integer_divisors(spec: PointwiseSpec) -> tuple[ast.expr, ...]:
    """The divisors of the integer divisions in a spec (the right operand of `//` and `%`, the second
    argument of `fmod`), in order of first use. PyTorch's CPU kernels refuse an integer divisor of zero;
    the generated NumPy kernels check it (Note [Integer division by zero] in runtime/kernels/checks.py)."""
    found: list[ast.expr] = []
    for node in ast.walk(spec.tree):
        divisor: ast.expr | None = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod):
            divisor = node.right
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "fmod":
            divisor = node.args[1]
        if divisor is not None and all(ast.dump(divisor) != ast.dump(d) for d in found):
            found.append(divisor)
    return tuple(found)
