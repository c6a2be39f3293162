"""Inline the body of a runtime function into generated code (Note [Generated, not copied, fast paths]).

Note [Generated, not copied, fast paths]
A few rules run on every op call: how a tensor is constructed (runtime/tensor.py `fresh_tensor`) and how
an output gets its history (runtime/autograd/node.py `record_output`), whether a backward node's input
needs a gradient (node.py `input_needed`, in every generated node's `apply`). The runtime calls those functions;
the generated kernels, where a call would cost a frame per op, carry their body instead, rendered by
`inline` from the function's source. So each rule has one definition: change the function and
`codegen generate` changes every copy (the `codegen check` of CI fails until it is regenerated).

`inline` reads the source with `ast` (it imports nothing from the runtime), substitutes each parameter
by the expression given for it, and returns the statements. A definition to be inlined must be a plain
sequence of statements whose names are its parameters, its own locals and the module names the
generated module also binds (`_new`, `Tensor`, `_AUTOGRAD_BIT` ...); a `return` may end it only.
`inline_expr` gives the expression of a definition that is one `return`, for a use inside an expression
(the varargs rule of runtime/opcall.py `varargs` in the generated Tensor methods). Templates name the
definitions they render as declared in codegen/runtime_reads.py (Note [What the generator reads from the
runtime]), never by path.
"""

from __future__ import annotations

import ast
import copy
import functools
from collections.abc import Mapping
from pathlib import Path

from codegen.errors import OpgenError


@functools.cache
def _module(text: str, filename: str) -> ast.Module:
    return ast.parse(text, filename=filename)  # cached by content: an edited file is parsed again


def _definition(path: Path, name: str) -> ast.FunctionDef:
    """Top-level function `name` of the file, or method `Class.method` of one of its top-level classes."""
    scope: list[ast.stmt] = _module(path.read_text(encoding="utf-8"), str(path)).body
    owner, _, fn = name.rpartition(".")
    if owner:
        classes = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == owner]
        scope = classes[0].body if classes else []
    for node in scope:
        if isinstance(node, ast.FunctionDef) and node.name == fn:
            return node
    raise OpgenError(f"{path}: no {'method' if owner else 'top-level function'} {name!r} to inline")


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr], binds: Mapping[str, str]) -> None:
        self.values = values
        self.binds = binds

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.values.get(node.id)
        if value is None:
            bound = self.binds.get(node.id)
            return node if bound is None else ast.copy_location(ast.Name(bound, node.ctx), node)
        if not isinstance(node.ctx, ast.Load):
            raise OpgenError(f"inline: parameter {node.id!r} is assigned to in the inlined function")
        return ast.copy_location(value, node)


def inline(root: Path, module: str, name: str, *args: str, expand: tuple[str, ...] = (),
           binds: Mapping[str, str] | None = None) -> list[str]:
    """The statements of function `name` of `module` (a path under `root`, e.g. "runtime/tensor.py"; a method
    is "Class.method"), with its parameters replaced by the expressions `args`, one source line per statement.

    A statement `x = f(...)` whose `f` is named in `expand` (a top-level function of the same module that
    ends in `return <expression>`) becomes the inlined body of `f`, its `return e` turned into `x = e`.
    `binds` renames module-level names the definition reads to the names the generated module binds them
    to (`{"tls": "_tls"}`)."""
    binds = binds or {}
    fn = _definition(root / module, name)
    params = [a.arg for a in fn.args.args]
    stored = sorted({n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                    & binds.keys())
    if stored:
        raise OpgenError(f"inline: {module}:{name} assigns {stored}, which are bound as module names")
    if len(params) != len(args):
        raise OpgenError(f"inline: {module}:{name} takes {len(params)} arguments ({', '.join(params)}), "
                         f"got {len(args)}")
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Return) and i != len(body) - 1:
            raise OpgenError(f"inline: {module}:{name} may return only at its end")
    stmts = []
    for stmt in body:
        values = {p: ast.parse(a, mode="eval").body for p, a in zip(params, args, strict=True)}
        stmts.append(_Substitute(values, binds).visit(copy.deepcopy(stmt)))
    names = {n.id for stmt in stmts for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    lines = []
    for stmt in stmts:
        callee = _expanded_call(stmt, expand)
        if callee is None:
            lines.append(ast.unparse(stmt))
        else:
            lines.extend(_expand(root, module, name, names, stmt, callee, expand, binds))
    return lines


def _expanded_call(stmt: ast.stmt, expand: tuple[str, ...]) -> str | None:
    """The name of the function `stmt` assigns the result of, when it is one to expand: `x = f(...)`."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id in expand):
        return stmt.value.func.id
    return None


def _expand(root: Path, module: str, caller: str, names: set[str], stmt: ast.stmt, callee: str,
            expand: tuple[str, ...], binds: Mapping[str, str]) -> list[str]:
    """`x = callee(args)` as the inlined body of `callee` ending in `x = <its returned expression>`; `names`:
    the names the caller's inlined statements use."""
    assert isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
    target = stmt.targets[0]
    assert isinstance(target, ast.Name)
    call = stmt.value
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        raise OpgenError(f"inline: {module}:{caller} calls {callee} with keywords or *args; only positional "
                         "arguments can be expanded")
    lines = inline(root, module, callee, *(ast.unparse(a) for a in call.args), expand=expand, binds=binds)
    last = ast.parse(lines[-1]).body[0] if lines else None
    if not isinstance(last, ast.Return) or last.value is None:
        raise OpgenError(f"inline: {module}:{callee} must end in `return <expression>` to be expanded")
    # the callee's own locals would overwrite the caller's names of the same spelling
    # (the target too, when an argument reads it: the callee would assign it before that argument is read)
    own = {n.id for n in ast.walk(_definition(root / module, callee))
           if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if not any(isinstance(n, ast.Name) and n.id == target.id for a in call.args for n in ast.walk(a)):
        own.discard(target.id)
    clash = sorted(own & names)
    if clash:
        raise OpgenError(f"inline: {module}:{callee}'s locals {clash} are also names of {caller}; rename them "
                         "to expand it there")
    value = ast.unparse(last.value)
    return lines[:-1] + ([] if value == target.id else [f"{target.id} = {value}"])


def inline_expr(root: Path, module: str, name: str, *args: str, binds: Mapping[str, str] | None = None) -> str:
    """The returned expression of function `name` of `module`, whose body is one `return` (after its
    docstring), with its parameters replaced by the expressions `args`: for a use inside an expression.
    It is parenthesised unless it is a primary (a name, an attribute, a subscript or a call), which binds
    tighter than any operator around it."""
    lines = inline(root, module, name, *args, binds=binds)
    tree = ast.parse(lines[0]).body[0] if len(lines) == 1 else None
    if not isinstance(tree, ast.Return) or tree.value is None:
        raise OpgenError(f"inline: {module}:{name} must be one `return <expression>` to be inlined as an expression")
    text = ast.unparse(tree.value)
    return text if isinstance(tree.value, ast.Name | ast.Attribute | ast.Subscript | ast.Call) else f"({text})"
