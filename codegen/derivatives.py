"""derivatives.yaml: backward formulas, loaded and validated against native_functions.yaml.

A formula is a Python expression over the generated op API (read with `ast`, never with regular
expressions). It may use: `grad` (or `grads[i]` for multi-output ops), the op's arguments, `result`
(or the named outputs, or `result0`, `result1` ...), the functions of the op API, the helper
functions defined at the top level of runtime/autograd/formulas.py, and a few Python builtins: a closed
grammar (Note [Formulas are a closed grammar], codegen/formula_grammar.py).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from codegen import disk_cache, runtime_reads
from codegen.errors import Diagnostic, LoadError, Location
from codegen.formula_grammar import CALLABLE_BUILTINS, GrammarError, check_formula
from codegen.native import NativeFunction, Variant
from codegen.yaml_lines import LocatedMap, load_entries, read_source

HELPERS_MODULE = runtime_reads.FORMULA_HELPERS
BUILTINS = CALLABLE_BUILTINS
SPECIAL_KEYS = ("name", "result", "output_differentiability")


@dataclass(frozen=True)
class Formula:
    """The gradient of one or more inputs (`self, weight: f(...)` gives a tuple)."""

    inputs: tuple[str, ...]
    source: str
    tree: ast.expr
    uses: frozenset[str]        # variable names the formula reads
    line: int


@dataclass(frozen=True, eq=False)
class Derivative:
    function: NativeFunction
    loc: Location
    formulas: tuple[Formula, ...]
    class_name: str                                  # unique in generated/_autograd.py, e.g. MulBackward1
    output_differentiability: tuple[bool, ...] | None = None
    forward: str | None = None                       # the `result:` formula (forward mode), kept as text

    @property
    def differentiable(self) -> bool:
        """False for an entry that marks every output not differentiable (argmax, nonzero ...)."""
        return self.output_differentiability is None or any(self.output_differentiability)

    @property
    def node_name(self) -> str:
        """The name the node reports (`grad_fn.name()`), PyTorch's: Note [Autograd node names]."""
        return PYTORCH_NODE_NAMES.get(self.function.name, self.class_name)

    @property
    def uses(self) -> frozenset[str]:
        out: set[str] = set()
        for f in self.formulas:
            out |= f.uses
        return frozenset(out)


def output_names(f: NativeFunction) -> tuple[str, ...]:
    """Names a formula may use for the op's outputs."""
    returns = f.func.returns
    if len(returns) == 1:
        return ("result",) + ((returns[0].name,) if returns[0].name else ())
    names = [f"result{i}" for i in range(len(returns))]
    names += [r.name for r in returns if r.name]
    return tuple(names)


def helper_names(root: Path) -> frozenset[str]:
    """Top-level functions of the runtime's formula helpers (read with ast; codegen never imports runtime;
    kept across runs by the file's content, Note [Generator caches] in codegen/disk_cache.py)."""
    path = root / HELPERS_MODULE
    if not path.is_file():
        return frozenset()
    text = path.read_text()

    def names() -> str:
        tree = ast.parse(text, filename=str(path))
        return " ".join(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_"))

    return frozenset(disk_cache.memo("names", disk_cache.digest("formula helpers", sys.version, text), names).split())


def op_function_names(functions: list[NativeFunction]) -> frozenset[str]:
    return frozenset(f.func.name.name for f in functions if Variant.function in f.variants)


def op_method_names(functions: list[NativeFunction]) -> frozenset[str]:
    """Ops a formula may call as tensor methods (never dunders: Note [Formulas are a closed grammar])."""
    return frozenset(n for f in functions if Variant.method in f.variants
                     for n in (f.func.name.name,) if not n.startswith("_"))


def load_derivatives(path: Path, functions: list[NativeFunction], *, root: Path,
                     text: str | None = None, file: str | None = None) -> list[Derivative]:
    """Load derivatives.yaml; every problem of the file is reported together."""
    file = file or path.name
    text = read_source(path, file) if text is None else text
    by_schema = {str(f.func): f for f in functions if f.derived_from is None}
    by_name = {f.name: f for f in functions if f.derived_from is None}
    callables = op_function_names(functions) | helper_names(root)
    methods = op_method_names(functions)
    problems: list[Diagnostic] = []
    derivatives: list[Derivative] = []
    seen: dict[str, int] = {}
    counts: dict[str, int] = {}
    for entry in load_entries(text, file):
        diag_count = len(problems)
        d = _load_entry(entry, file, by_schema, by_name, callables, methods, counts, problems)
        if d is None or len(problems) > diag_count:
            continue
        if d.function.name in seen:
            problems.append(Diagnostic(d.loc, f"'{d.function.name}' has a derivative already "
                                              f"(line {seen[d.function.name]})"))
            continue
        seen[d.function.name] = d.loc.line
        derivatives.append(d)
    if problems:
        raise LoadError(problems)
    return derivatives


# Note [Autograd node names]
# A node is named `<CamelBase>Backward<i>`, i counting the entries of one base name in file order, as PyTorch
# names its nodes after its own derivatives.yaml. Where opgen's file order or overload set differs, the table
# gives the name a PyTorch user sees for the same call: Python numbers reach PyTorch's Tensor overloads
# (`t * 2` records MulBackward0, not the Scalar overload's MulBackward1), and `square` is `pow(self, 2)`.
# The generated class keeps its unique Python name in generated/_autograd.py and takes the table's name as
# its `__name__` and `__qualname__` (templates/autograd.py.j2), so `type(node).__name__` and `node.name()`
# agree, as in PyTorch. tests/compat/test_result_types.py checks the names against torch.
PYTORCH_NODE_NAMES = {
    "add.Scalar": "AddBackward0", "sub.Scalar": "SubBackward0", "mul.Scalar": "MulBackward0",
    "div.Scalar": "DivBackward0", "div.Scalar_mode": "DivBackward2",
    "max": "MaxBackward1", "max.dim": "MaxBackward0", "min": "MinBackward1", "min.dim": "MinBackward0",
    "remainder.Scalar": "RemainderBackward0", "remainder.Tensor": "RemainderBackward1",
    "fmod.Scalar": "FmodBackward0", "fmod.Tensor": "FmodBackward1",
    "clamp": "ClampBackward1", "square": "PowBackward0", "copy_": "CopyBackwards", "fill_.Scalar": "FillBackward2",
    "index_put_": "IndexPutBackward0", "scatter.value": "ScatterBackward1",
    # PyTorch's linalg functions record the node of the `_ex` op they call (which also returns an info code)
    "linalg_inv": "LinalgInvExBackward0", "linalg_solve": "LinalgSolveExBackward0",
    "linalg_cholesky": "LinalgCholeskyExBackward0",
}


def _node_base(base: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in base.split("_") if part)


def _load_entry(entry: LocatedMap, file: str, by_schema: dict[str, NativeFunction],
                by_name: dict[str, NativeFunction], callables: frozenset[str], methods: frozenset[str],
                counts: dict[str, int], problems: list[Diagnostic]) -> Derivative | None:
    loc = Location(file, entry.line)

    def problem(key: str | None, message: str) -> None:
        line = entry.key_lines.get(key, entry.line) if key else entry.line
        problems.append(Diagnostic(Location(file, line), message))

    name = entry.get("name")
    if not isinstance(name, str):
        problem(None, "entry has no 'name: <schema>'")
        return None
    f = by_schema.get(name.strip()) or (by_name.get(name.strip()) if "(" not in name else None)
    if f is None:
        base = name.split("(")[0]
        near = sorted(s for s in by_schema if s.split("(")[0] == base)
        hint = f"; did you mean: {near[0]}" if near else "; the name must be a schema from native_functions.yaml"
        problem("name", f"derivative for unknown operator '{name}'{hint}")
        return None
    args = {a.name: a for a in f.func.arguments.flat_non_out}
    outputs = output_names(f)
    clash = sorted(({"grad", "grads"} | set(outputs)) & set(args))
    if clash:
        # a formula's `grad` and `result` are the node's own locals (Note [Reserved names in generated code])
        problem("name", f"{f.name} has an argument named '{clash[0]}', which a formula reads as the incoming "
                        "gradient or an output; rename the argument to give it a derivative")
        return None
    variables = {"grad", "grads", *args, *outputs}
    formulas = []
    for key, value in entry.items():
        if key in SPECIAL_KEYS:
            continue
        inputs = tuple(k.strip() for k in str(key).split(","))
        bad = [i for i in inputs if i not in args]
        if bad:
            problem(key, f"'{bad[0]}' is not an argument of {f.name}; its arguments are: {', '.join(args)}")
            continue
        nondiff = [i for i in inputs if not args[i].type.is_tensor_like()]
        if nondiff:
            problem(key, f"argument '{nondiff[0]}' ({args[nondiff[0]].type}) of {f.name} is not differentiable")
            continue
        line = entry.key_lines[key]
        if not isinstance(value, str):
            problem(key, f"the formula of '{key}' must be a string (a Python expression), not "
                         f"{_type_name(value)}")
            continue
        formula = _parse_formula(value, inputs, line, variables, callables, methods)
        if isinstance(formula, str):
            problem(key, formula)
        else:
            formulas.append(formula)
    diff = entry.get("output_differentiability")
    if diff is not None and (not isinstance(diff, list) or len(diff) != len(f.func.returns)
                             or not all(isinstance(b, bool) for b in diff)):
        problem("output_differentiability",
                f"output_differentiability must be a list of {len(f.func.returns)} True/False values")
        diff = None
    forward = entry.get("result")
    if forward is not None and not isinstance(forward, str):
        problem("result", f"'result' (the forward-mode formula) must be a string, not {_type_name(forward)}")
        forward = None
    base = _node_base(f.func.name.base)
    index = counts.get(base, 0)
    counts[base] = index + 1
    return Derivative(f, loc, tuple(formulas), f"{base}Backward{index}",
                      tuple(diff) if diff is not None else None, forward)


def _type_name(value: object) -> str:
    return {dict: "a mapping", list: "a list", type(None): "empty"}.get(type(value), type(value).__name__)


def _parse_formula(source: str, inputs: tuple[str, ...], line: int, variables: set[str],
                   callables: frozenset[str], methods: frozenset[str]) -> Formula | str:
    """Parse a formula and check it against the grammar; return it, or a message saying what is wrong."""
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError as e:
        return f"formula is not a valid Python expression: {e.msg} (column {e.offset})\n  in formula: {source.strip()}"
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, absurd nesting
        return f"formula is not a valid Python expression: {e}"
    try:
        uses = check_formula(tree, variables, callables, methods)
    except GrammarError as e:
        return f"{e}\n  in formula: {source.strip()}"
    return Formula(inputs, source.strip(), tree, frozenset(uses), line)
