"""generated/cpu/compound_pointwise.cpp: the C++ kernels of the compound pointwise ops, for eager execution
on the CPU (templates/compound_pointwise.cpp.j2); runtime/kernels/compiled_pointwise.py compiles the file
once, lazily, and the NumPy kernels of generated/_cpu_kernels.py call it above a measured size.

Note [Compound pointwise ops]
An op's NumPy kernel makes one full pass over memory (and a temporary) per NumPy call its spec renders to;
a C++ loop makes one, whatever the expression. The gain is there only when the NumPy kernel makes more than
one pass, so an op is *compound* when `numpy_passes(spec)` > 1: each operator or function applied to a
tensor value costs one pass (operators between scalars only are folded by Python and cost none), and a call
costs what its NumPy spelling of kernel_spec.FUNCTIONS does (`np.reciprocal(np.sqrt(x))` two; the helpers
of runtime/kernels/cpu_pointwise.py by `HELPER_PASSES`, e.g. `_k.sigmoid` ten and `_k.erf`, a Python call
per element, `PER_ELEMENT`). sigmoid, silu, softplus, mish, elu, logaddexp, lerp, addcmul, hardswish, erf
are compound; exp, add, relu, maximum are not. The C++ kernels exist for float32 and float64 inputs of one
dtype (each computed in its own dtype), so an op is compiled only when its spec accepts both, reads no
tensor as a condition or as a 0-d value, and makes a floating result (not `promote: bool`).
An op whose spec calls a function of `NOT_VECTORISED` (the rounding functions) is left to NumPy (unless its
NumPy kernel calls Python per element): its loop would run an element at a time (measured slower than
NumPy's vector loop: frac). The expression is the CUDA renderer's (one spec, every backend: the `op_*`
functions of runtime/cuda/include/opgen_math.cuh, compiled for the host as G.compile's fused kernels are),
except that a choice blends two computed values and maximum, minimum, softplus and log_sigmoid are branch-free
versions of the template (`HostRenderer`: opgen_math.cuh's call fmaxf/fminf), so that every loop vectorises.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import jinja2

from codegen.api_python import kernel_name
from codegen.gen_cuda import cxx_name
from codegen.kernel_spec import FUNCTIONS, CudaRenderer, FunctionRule, PointwiseSpec, condition_tensors
from codegen.literals import comment_text
from codegen.model import SchemaKind
from codegen.native import NativeFunction
from codegen.pointwise_kernel import numeric_defaults
from codegen.render.inputs import Inputs
from codegen.render_errors import owned
from runtime.vocabulary import PromoteKind

PER_ELEMENT = 100  # a helper that calls Python once per element (np.vectorize) costs more than any pass count
# The NumPy passes of the helpers of runtime/kernels/cpu_pointwise.py that kernel_spec.FUNCTIONS calls
# (tests/codegen/test_compound_pointwise.py checks that every helper it calls is listed).
HELPER_PASSES: dict[str, int] = {
    "_k.sign": 1, "_k.erf": PER_ELEMENT, "_k.erfc": 1, "_k.lgamma": 1, "_k.power": 1, "_k.where": 1,
    "_k.shl": 3, "_k.shr": 3, "_k.log_sigmoid": 3,
    "_k.sigmoid": 10,  # a comparison and its inverse, a negation, two zero fills, two exps, two sums, two divisions
}
# The functions whose opgen_math.cuh form calls fmaxf/fminf, which the compiler vectorises only under fast-math:
# the host kernels call the template's branch-free versions instead (same values, NaN propagated).
HOST_FUNCTIONS = {name: f"opgen_eager::{name}" for name in ("maximum", "minimum", "softplus", "log_sigmoid")}
# The functions the compiler does not vectorise without -fno-trapping-math (the rounding functions: truncf ...).
# A loop that calls one runs an element at a time and loses to NumPy's vector loops.
NOT_VECTORISED = frozenset({"trunc", "floor", "ceil", "round"})
COMPILED_DTYPES = ("float32", "float64")
SOURCE = "cpu/compound_pointwise.cpp"  # the output, relative to generated/  # name -> its C++ type in the template


def call_passes(numpy_spelling: str) -> int:
    """The passes of one FUNCTIONS entry's NumPy spelling: one per `np.` call, a helper's by HELPER_PASSES."""
    tree = ast.parse(numpy_spelling.format(*(["x"] * 3)), mode="eval")
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = ast.unparse(node.func)
            if callee.startswith("_k."):
                if callee not in HELPER_PASSES:
                    raise KeyError(f"{callee}: its NumPy passes are not in HELPER_PASSES")
                total += HELPER_PASSES[callee]
            else:
                total += 1
    return total


def numpy_passes(spec: PointwiseSpec) -> int:
    """How many passes over memory the NumPy kernel of `spec` makes (Note [Compound pointwise ops])."""
    tensors = set(spec.tensors)

    def walk(node: ast.expr) -> tuple[int, bool]:  # (passes, whether the value is a tensor)
        if isinstance(node, ast.Name):
            return 0, node.id in tensors
        if isinstance(node, ast.Constant):
            return 0, False
        children: list[ast.expr]
        if isinstance(node, ast.Call):
            children = list(node.args)
        elif isinstance(node, ast.BinOp):
            children = [node.left, node.right]
        elif isinstance(node, ast.UnaryOp):
            children = [node.operand]
        elif isinstance(node, ast.BoolOp):
            children = list(node.values)
        elif isinstance(node, ast.Compare):
            children = [node.left, *node.comparators]
        elif isinstance(node, ast.IfExp):
            children = [node.test, node.body, node.orelse]
        else:
            raise TypeError(f"unexpected node {ast.dump(node)}")  # kernel_spec._validate admits no other
        results = [walk(c) for c in children]
        passes = sum(p for p, _ in results)
        if not any(t for _, t in results):
            return passes, False
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            return passes + call_passes(FUNCTIONS[node.func.id].numpy), True
        if isinstance(node, ast.BoolOp):
            return passes + len(node.values) - 1, True
        return passes + 1, True

    return walk(spec.tree)[0]


def _calls(spec: PointwiseSpec) -> set[str]:
    return {n.func.id for n in ast.walk(spec.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def is_compiled(f: NativeFunction) -> bool:
    """Whether `f` (a functional op with a pointwise spec) has a compiled eager kernel."""
    spec = f.pointwise
    if (spec is None or f.derived_from is not None or f.func.kind() != SchemaKind.functional
            or not all(d in spec.dtypes for d in COMPILED_DTYPES) or spec.promote is PromoteKind.bool
            or condition_tensors(spec) or spec.zero_dim):
        return False
    passes = numpy_passes(spec.specialize(numeric_defaults(f)))
    return passes > 1 and (passes >= PER_ELEMENT or not _calls(spec) & NOT_VECTORISED)


class HostRenderer(CudaRenderer):
    """The CUDA renderer's C++, with every choice (`a if c else b`, `where(c, a, b)`) a blend of both values
    (`opgen_eager::blend` in the template): the compiler does not move a branch's arithmetic out of its branch
    (it could trap), so a conditional expression leaves the loop scalar; a blend of values computed before it
    vectorises."""

    def select(self, test: str, body: str, orelse: str) -> str:
        return f"opgen_eager::blend({test}, {body}, {orelse})"

    def call(self, rule: FunctionRule, args: list[str]) -> str:
        if rule.name == "where":
            return self.select(*args)
        if rule.name in HOST_FUNCTIONS:
            return f"{HOST_FUNCTIONS[rule.name]}({', '.join(args)})"
        return super().call(rule, args)


HOST = HostRenderer()


@dataclass(frozen=True)
class CompoundOp:
    """One compound op's kernels: C++ parameters `a_<argument>` (tensors, then scalars) and its expression."""

    kernel: str  # kernel_name(f); the entry points are `<kernel>__<dtype>__contig` and `__strided`
    source: str  # the spec, as comment text
    tensors: tuple[str, ...]
    scalars: tuple[str, ...]
    expr: str
    passes: int

    @property
    def cost(self) -> str:
        """What the NumPy kernel costs, as comment text."""
        return "NumPy: a Python call per element" if self.passes >= PER_ELEMENT else f"{self.passes} NumPy passes"


@dataclass(frozen=True)
class CompoundFile:
    ops: tuple[CompoundOp, ...]  # sorted by kernel name


def compound_op(f: NativeFunction) -> CompoundOp:
    spec = f.pointwise
    assert spec is not None
    names = {a: cxx_name(a) for a in (*spec.tensors, *spec.scalars)}
    return CompoundOp(kernel_name(f), comment_text(spec.text), tuple(names[t] for t in spec.tensors),
                      tuple(names[s] for s in spec.scalars), spec.render(HOST, names), numpy_passes(spec))


def contexts(inputs: Inputs) -> CompoundFile:
    ops = [owned(compound_op(f), f) for f in inputs.model.functions if is_compiled(f)]
    return CompoundFile(tuple(sorted(ops, key=lambda op: op.kernel)))


def render(env: jinja2.Environment, ctx: CompoundFile) -> dict[str, str]:
    text = env.get_template("compound_pointwise.cpp.j2").render(ops=ctx.ops, dtypes={"float32": "float",
                                                                                      "float64": "double"})
    return {SOURCE: text}
