"""Every runtime definition the generator reads (Note [What the generator reads from the runtime]).

Note [What the generator reads from the runtime]
The generator imports nothing of the runtime but its vocabulary (pyproject.toml's import contracts), yet a
few rules that run on every op call are written once in runtime/ and carried by the generated code (Note
[Generated, not copied, fast paths] in codegen/inline.py), and two runtime modules are read for names.
Such a read is an edge that neither import-linter nor a reader of the runtime sees, so each one is
declared here, and only here:
  - `INLINED`: the definitions the templates render with `inline(name, *args)` (statements) or
    `inline_expr(name, *args)` (one expression), by the name declared here; a template naming anything
    else fails to render. `binds` renames the module-level names a definition reads to the names the
    generated module imports them as (`shared` -> `_shared`).
  - `SOURCE_READS`: the runtime files read for names (the stub's imports, the formula helpers).
Beyond these, the generator reads the runtime modules that `dispatch:` entries of native_functions.yaml
name (codegen/kernel_targets.py), chosen by the YAML, not by the generator.
tests/house/test_runtime_reads_declared.py checks that every template use names a declared entry of the right form, that
every entry exists and is used, that the generated package carries each rendering, and that codegen names
no runtime file outside this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegen import inline as _inline
from codegen.errors import OpgenError


@dataclass(frozen=True)
class InlinedDefinition:
    """One runtime function whose body (or returned expression) the generated code carries."""

    module: str                   # its file, relative to the project root
    function: str                 # "name", or "Class.method"
    expression: bool              # rendered by `inline_expr` (one `return <expression>`), else by `inline`
    templates: tuple[str, ...]    # the templates that render it
    binds: tuple[tuple[str, str], ...] = ()  # module-level name in the runtime -> its name in generated code
    expand: tuple[str, ...] = ()  # functions of the same module whose calls are inlined too (inline's `expand`)
    why: str = field(default="", compare=False)


INLINED: dict[str, InlinedDefinition] = {
    "dispatch_key": InlinedDefinition(
        "runtime/dispatcher.py", "dispatch_key", True, ("ops.py.j2", "methods.py.j2", "autograd.py.j2"),
        binds=(("shared", "_shared"), ("tls", "_tls")),
        why="the key-set step of every generated dispatch"),
    "fresh_tensor": InlinedDefinition(
        "runtime/tensor.py", "fresh_tensor", False, ("cpu_kernels.py.j2",),
        why="the slots of a new tensor, in every generated CPU kernel"),
    "Tensor._view": InlinedDefinition(
        "runtime/tensor.py", "Tensor._view", False, ("methods.py.j2",), expand=("fresh_tensor",),
        why="a view of a tensor's memory (the generated Tensor._view)"),
    "record_output": InlinedDefinition(
        "runtime/autograd/node.py", "record_output", False, ("autograd.py.j2",),
        why="an output's history, in the Autograd kernels of one-output ops"),
    "edge_through": InlinedDefinition(
        "runtime/autograd/node.py", "edge_through", True, ("autograd.py.j2",),
        binds=(("leaf_edge", "_leaf_edge"),),
        why="the edge of one differentiable input (Note [Backward graph shape])"),
    "input_needed": InlinedDefinition(
        "runtime/autograd/node.py", "input_needed", True, ("autograd.py.j2",),
        why="whether a backward node computes an input's gradient"),
    "varargs": InlinedDefinition(
        "runtime/opcall.py", "varargs", True, ("methods.py.j2",),
        why="PyTorch's varargs sizes in the generated Tensor methods"),
}

API_MODULE = "runtime/api.py"
FORMULA_HELPERS = "runtime/autograd/formulas.py"
SOURCE_READS: dict[str, str] = {
    API_MODULE: "`__all__`: the names generated/__init__.pyi imports (the stub's imports)",
    FORMULA_HELPERS: "its top-level functions: the helpers a derivatives.yaml formula may call "
                     "(codegen/derivatives.py)",
}


def declared(name: str, expression: bool) -> InlinedDefinition:
    """The entry `name`, which a template renders as an expression or as statements."""
    entry = INLINED.get(name)
    if entry is None:
        raise OpgenError(f"inline: {name!r} is not declared in codegen/runtime_reads.py INLINED "
                         f"(declared: {', '.join(sorted(INLINED))})")
    if entry.expression != expression:
        use, other = ("inline_expr", "inline") if expression else ("inline", "inline_expr")
        raise OpgenError(f"inline: {name!r} is declared for {other}, not {use}")
    return entry


def render_statements(root: Path, name: str, *args: str) -> list[str]:
    """The statements of the declared definition `name`, its parameters replaced by `args`."""
    e = declared(name, expression=False)
    return _inline.inline(root, e.module, e.function, *args, expand=e.expand, binds=dict(e.binds))


def render_expression(root: Path, name: str, *args: str) -> str:
    """The expression of the declared definition `name`, its parameters replaced by `args`."""
    e = declared(name, expression=True)
    return _inline.inline_expr(root, e.module, e.function, *args, binds=dict(e.binds))


def jinja_globals(root: Path, record: Callable[[str, tuple[str, ...], Any], None] | None = None,
                  ) -> dict[str, Callable[..., Any]]:
    """`inline` and `inline_expr` for the templates of the project at `root`; `record(name, args, text)` is
    told of each rendering (tests use it to find every rendering in the generated package)."""

    def statements(name: str, *args: str) -> list[str]:
        text = render_statements(root, name, *args)
        if record is not None:
            record(name, args, text)
        return text

    def expression(name: str, *args: str) -> str:
        text = render_expression(root, name, *args)
        if record is not None:
            record(name, args, text)
        return text

    return {"inline": statements, "inline_expr": expression}
