"""The closed grammar of derivatives.yaml formulas.

Note [Formulas are a closed grammar]
A formula is YAML text that becomes Python source in generated/_autograd.py and runs at backward()
time, so whatever it can express, the YAML's author can run. The check is therefore a whitelist, not a
blacklist: every AST node type, every name and every attribute must be on a list below, and anything
else is refused at generate time (`file:line: message`). In particular:
  - a name is either a value (the op's arguments, `grad`/`grads`, `result`/named outputs) or a callee
    (a declared op, a helper of runtime/autograd/formulas.py, a builtin of `CALLABLE_BUILTINS`), and is
    only ever used as what it is: `abs(self) + abs` (a function as a value) and `grad(1)` are refused;
  - a callee is a plain name or `<expression>.<tensor method>`: `[eval][0](...)`, `f()(x)` and
    `(lambda: 0)()` are refused, as is any attribute outside `TENSOR_MEMBERS` and the ops declared as
    methods (so no dunder or private attribute, no `.type`, `._data`, `.__class__`);
  - no lambdas, comprehensions, walrus, f-strings, starred arguments or `**kwargs`.
Generated code never evaluates YAML text: the checked tree is renamed and unparsed into the module
(codegen/gen_autograd.py, render_formula). The pointwise kernel spec has its own, smaller closed grammar
(codegen/kernel_spec.py, _validate).
"""

from __future__ import annotations

import ast

from codegen.errors import did_you_mean

# Builtins a formula may call (never use as values).
CALLABLE_BUILTINS = frozenset({"len", "range", "tuple", "list", "min", "max", "abs", "int", "float", "bool",
                               "zip", "enumerate", "sorted", "reversed", "any", "all"})

# Tensor members a formula may read or call besides the ops declared with `variants: method`.
TENSOR_MEMBERS = frozenset({
    "shape", "dtype", "device", "ndim", "T", "mT", "stride", "storage_offset", "size", "dim", "numel",
    "is_floating_point", "is_contiguous", "new_zeros", "new_ones", "new_full", "new_empty", "view_as",
    "reshape_as", "expand_as", "float", "double", "half", "int", "long", "bool", "to", "detach",
})

# Node types a formula may contain (names, calls, attributes and constants are checked further).
_ALLOWED = (
    ast.Name, ast.Call, ast.Attribute, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
    ast.IfExp, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.keyword, ast.Load,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)
_CONSTANTS = (int, float, bool, str, type(None), type(Ellipsis))


class GrammarError(ValueError):
    """A formula outside the grammar; the loader adds file and line."""


def check_formula(tree: ast.expr, variables: frozenset[str] | set[str], callables: frozenset[str],
                  methods: frozenset[str]) -> set[str]:
    """Check `tree` against the grammar; return the variables it reads. `callables`: the op and helper
    functions it may call by name; `methods`: the ops it may call as tensor methods."""
    check_depth(tree)
    members = methods | TENSOR_MEMBERS
    callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    uses: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise GrammarError(f"{_describe(node)} is not allowed in a formula")
        if isinstance(node, ast.Name):
            if id(node) in callees:
                if node.id in variables:
                    raise GrammarError(f"'{node.id}' is a value, not a function; it cannot be called")
                if node.id not in callables and node.id not in CALLABLE_BUILTINS:
                    hint = did_you_mean(node.id, [*callables, *CALLABLE_BUILTINS]) or (
                        "; use an op of native_functions.yaml or a helper of runtime/autograd/formulas.py")
                    raise GrammarError(f"formula calls unknown function '{node.id}'{hint}")
            elif node.id in variables:
                uses.add(node.id)
            elif node.id in callables or node.id in CALLABLE_BUILTINS:
                raise GrammarError(f"function '{node.id}' is used as a value; a formula may only call it")
            else:
                hint = did_you_mean(node.id, variables)
                raise GrammarError(f"formula uses undefined name '{node.id}'{hint} (the names a formula can "
                                   f"use here: {', '.join(sorted(variables))})")
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                raise GrammarError(f"attribute '{node.attr}' is private; a formula may not use it")
            if node.attr not in members:
                hint = did_you_mean(node.attr, members)
                raise GrammarError(f"unknown tensor attribute or method '{node.attr}'{hint} (a formula may use "
                                   "the ops declared as methods and: " + ", ".join(sorted(TENSOR_MEMBERS)) + ")")
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name | ast.Attribute):
                raise GrammarError(f"'{ast.unparse(node.func)}' is not a function name; a formula calls only "
                                   "ops, helpers and tensor methods by name")
            if any(k.arg is None for k in node.keywords):
                raise GrammarError("'**' arguments are not allowed in a formula")
        elif isinstance(node, ast.Constant):
            if type(node.value) not in _CONSTANTS:
                raise GrammarError(f"constant {node.value!r} is not allowed in a formula (numbers, bools, "
                                   "strings, None and ... are)")
    return uses


MAX_DEPTH = 64


def check_depth(tree: ast.AST, limit: int = MAX_DEPTH) -> None:
    """Refuse expressions nested deeper than `limit` (the renderers and `ast.unparse` recurse)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise GrammarError(f"expression is nested more than {limit} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _describe(node: ast.AST) -> str:
    names = {ast.Lambda: "a lambda", ast.NamedExpr: "':=' (walrus)", ast.JoinedStr: "an f-string",
             ast.Starred: "a starred argument", ast.ListComp: "a comprehension", ast.SetComp: "a comprehension",
             ast.DictComp: "a comprehension", ast.GeneratorExp: "a comprehension", ast.Await: "'await'",
             ast.Yield: "'yield'", ast.YieldFrom: "'yield from'"}
    return names.get(type(node), f"'{type(node).__name__}'")
