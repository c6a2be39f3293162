"""The `opgen` command: generate, check, list, show."""

from __future__ import annotations

import ast
import difflib
import fnmatch
import json
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

import click

from codegen import gen, loading
from codegen.errors import LoadError, OpgenError
from codegen.model import SchemaKind
from codegen.native import NativeFunction
from codegen.render import registrations
from runtime.vocabulary import KEYS_BY_PRIORITY, DispatchKey, resolve


def find_project(start: Path) -> Path | None:
    """The nearest directory at or above `start` that holds native_functions.yaml (as git finds its repo)."""
    start = start.resolve()
    return next((d for d in (start, *start.parents) if (d / loading.NATIVE_YAML).is_file()), None)


def _root(root: str | None) -> Path:
    if root:
        path = Path(root).resolve()
        if not (path / loading.NATIVE_YAML).is_file():
            raise click.UsageError(f"no {loading.NATIVE_YAML} in {path}: pass the project directory to --root")
        return path
    found = find_project(Path.cwd())
    if found is None:
        raise click.UsageError(f"no {loading.NATIVE_YAML} in {Path.cwd().resolve()} or any parent directory: "
                               "run opgen inside a project, or pass --root DIR")
    return found


def _fail(error: OpgenError) -> NoReturn:
    """Exit 2 with the problems: located ones (`file:line: ...`, as compilers print them) as they are, others
    after `opgen: error:`."""
    text = str(error)
    located = isinstance(error, LoadError) and bool(error.diagnostics)
    click.echo(text if located else f"opgen: error: {text}", err=True)
    sys.exit(2)


def _render(project: Path) -> dict[str, str]:
    """Every generated file, or exit 2 with the problems (nothing is written either way)."""
    try:
        return gen.generate(project)
    except OpgenError as e:
        _fail(e)


def _model(project: Path) -> loading.Model:
    try:
        return loading.load_model(project)
    except OpgenError as e:
        _fail(e)


root_option = click.option("--root", type=click.Path(file_okay=False), default=None,
                           help="Project directory (default: the nearest one at or above the current directory).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(None, "-V", "--version", package_name="opgen", prog_name="opgen")
@click.pass_context
def main(ctx: click.Context) -> None:
    """opgen: tensor operators from YAML schemas.

    Edit native_functions.yaml and derivatives.yaml (or start with `opgen new-op NAME`), run
    `opgen generate`, then `import generated as G`.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@main.command()
@root_option
def generate(root: str | None) -> None:
    """Rewrite generated/ from the YAML files and templates (the new tree is swapped in whole)."""
    project = _root(root)
    start = time.perf_counter()
    files = _render(project)
    try:
        changed = gen.write_files(project, files)
    except OSError as e:  # generated/ is left whole (Note [Whole-tree swap])
        _fail(OpgenError(f"cannot write {gen.GENERATED}/: {e}"))
    took = time.perf_counter() - start
    click.echo(f"opgen: {len(files)} files in generated/, {len(changed)} changed ({took:.2f} s)")


@main.command()
@root_option
def check(root: str | None) -> None:
    """Exit 1 with a unified diff if generated/ is stale, 0 if it is fresh."""
    project = _root(root)
    files = _render(project)
    text = gen.diff(project, files)
    if text:
        click.echo(text, nl=False)
        click.echo("opgen: generated/ is stale; run `opgen generate` and commit the result", err=True)
        sys.exit(1)
    click.echo("opgen: generated/ is up to date")


@main.command(name="list")
@root_option
@click.argument("patterns", nargs=-1)
def list_ops(root: str | None, patterns: tuple[str, ...]) -> None:
    """List the operators: name, variants, dispatch keys, differentiable or not.

    PATTERNS (shell wildcards, e.g. 'add*' or '*_backward') keep only the operators whose name or overload
    name matches one of them; a pattern without a wildcard matches a whole name.
    """
    model = _model(_root(root))
    functions = [f for f in model.functions if not patterns or _matches(f, patterns)]
    if not functions:
        click.echo(f"opgen: error: no operator matches {' '.join(patterns)}", err=True)
        sys.exit(2)
    rows = [("operator", "variants", "kernels", "autograd")]
    for f in functions:
        variants = ", ".join(sorted(v.value for v in f.variants)) or "-"
        keys = ", ".join(f.kernel_keys()) or "-"
        d = model.derivative_of(f)
        if "CompositeImplicitAutograd" in f.root.dispatch:
            grad = "composite"
        elif d is not None and f.kind.value != "out":
            grad = d.node_name if d.differentiable else "no"
        else:
            grad = "no"
        rows.append((f.name + (" (derived)" if f.derived_from else ""), variants, keys, grad))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _matches(f: NativeFunction, patterns: tuple[str, ...]) -> bool:
    names = (f.name, f.func.name.name)
    return any(fnmatch.fnmatchcase(name, p) for p in patterns for name in names)


def static_table(f: NativeFunction, model: loading.Model) -> list[tuple[str, str, str]]:
    """What serves each runtime dispatch key of an op, with no fallback registered: the rule of
    `runtime.vocabulary.resolve`, which the runtime's dispatcher uses too, over the kernels that the
    generated package registers. Rows are (key, kernel path or '-', how)."""
    registered = dict(registrations.registrations(f))
    d = model.derivative_of(f)
    rows = []
    for key in KEYS_BY_PRIORITY:
        name, how = resolve(key, registered)
        kernel = registrations.kernel_path(registered[name]) if name is not None else "-"
        if key == DispatchKey.Autograd and how == "kernel" and f.has_autograd_kernel:
            how = (f"records {d.node_name}" if d is not None and d.differentiable and f.kind != SchemaKind.out
                   else "not differentiable" if d is not None and f.kind != SchemaKind.out else "no derivative")
        rows.append((key.name, kernel, how))
    return rows


def shown_ops(model: loading.Model, op: str) -> list[NativeFunction]:
    """The operators `opgen show OP` prints: the one whose full name is OP (`std` is an operator of its own,
    the table `dispatcher.find("std")` holds), else every overload and derived form named OP (`add`:
    add.Tensor, add.Scalar, add.out ...; `add_`), else those whose base name is OP."""
    exact = [f for f in model.functions if f.name == op]
    if exact:
        return exact
    return [f for f in model.functions if op in (f.func.name.name, f.func.name.base)]


@main.command()
@root_option
@click.option("--all", "show_all", is_flag=True,
              help="Every form (in-place, out=), every dispatch key and every derivative formula.")
@click.argument("op")
def show(root: str | None, op: str, show_all: bool) -> None:
    """Show one operator: schema, kernels and derivative (OP like add or add.Tensor).

    By default one block per overload with the keys that have a kernel; --all adds the in-place and out=
    forms and the whole dispatch table, keys without a kernel included.
    """
    model = _model(_root(root))
    matches = shown_ops(model, op)
    if not matches:
        names = sorted({n for f in model.functions for n in (f.name, f.func.name.name)})
        close = difflib.get_close_matches(op, names, n=5, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `opgen list` lists them all"
        click.echo(f"opgen: error: no operator '{op}'{hint}", err=True)
        sys.exit(2)
    shown = matches if show_all else [f for f in matches if f.derived_from is None] or matches
    for f in shown:
        click.echo(f"{f.name}\n  schema:   {f.func}\n  defined:  {f.loc}"
                   + (f"  (derived from {f.derived_from.name})" if f.derived_from else ""))
        if f.doc:
            click.echo(f"  doc:      {f.doc}")
        if f.pointwise is not None:
            click.echo(f"  pointwise: {f.pointwise.source}  (promote: {f.pointwise.promote})")
        rows = static_table(f, model)
        if not show_all:
            rows = [r for r in rows if r[1] != "-"]
        click.echo("  dispatch table (runtime key -> kernel):" if show_all else "  kernels (runtime key -> kernel):")
        for key, kernel, how in rows:
            click.echo(f"    {key:<14} {kernel}  [{how}]")
        d = model.derivative_of(f)
        if d is not None and f.kind != SchemaKind.out and not d.differentiable:
            click.echo(f"  derivative: none, outputs marked not differentiable ({d.loc})")
        elif d is not None and f.kind != SchemaKind.out:
            click.echo(f"  derivative: {d.node_name} ({d.loc})")
            for formula in d.formulas:
                # printed from its tree: one line, its strings escaped (the YAML text may hold any character)
                click.echo(f"    {', '.join(formula.inputs)}: {ast.unparse(formula.tree)}")
        elif f.kind == SchemaKind.out:
            click.echo("  derivative: none (out= forms are not differentiable)")
        click.echo("")
    others = [f.name for f in model.functions if f.func.name.name == op and f not in matches]
    if others:
        click.echo(f"other overloads: {', '.join(others)}")
    hidden = len(matches) - len(shown)
    if hidden:
        click.echo(f"({hidden} derived form{'s' if hidden > 1 else ''}: in-place and out=; `opgen show --all {op}`)")


@main.command(name="new-op")
@root_option
@click.argument("name")
@click.option("--pointwise", "spec", default="self", show_default=True,
              help="The kernel spec: a Python expression over `self` (docs/GUIDE.md: The kernel spec).")
@click.option("--derivative", default="grad", show_default=True,
              help="The gradient formula for `self` (derivatives.yaml's language).")
def new_op(root: str | None, name: str, spec: str, derivative: str) -> None:
    """Add the skeleton of a pointwise operator NAME(Tensor self) -> Tensor: one entry appended to
    native_functions.yaml and one to derivatives.yaml, checked by loading the project (both files are left
    as they were if it does not load). Edit them, then run `opgen generate`."""
    project = _root(root)
    if not name.isidentifier() or not name.isascii() or name.startswith("_"):
        raise click.BadParameter(f"{name!r} is not an operator name (an ASCII identifier not starting with _)",
                                 param_hint="NAME")
    model = _model(project)
    if any(name in (f.name, f.func.name.base) for f in model.functions):
        click.echo(f"opgen: error: an operator '{name}' exists already (`opgen show {name}`)", err=True)
        sys.exit(2)
    schema = f"{name}(Tensor self) -> Tensor"
    entries = {
        loading.NATIVE_YAML: f"- func: {schema}\n  variants: function, method\n  pointwise: {json.dumps(spec)}\n",
        loading.DERIVATIVES_YAML: f"- name: {schema}\n  self: {json.dumps(derivative)}\n",
    }
    paths = {file: project / file for file in entries}
    before = {file: path.read_bytes() for file, path in paths.items()}
    lines = {}
    for file, path in paths.items():
        text = before[file].decode("utf-8")
        sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        lines[file] = text.count("\n") + sep.count("\n") + 1
        _replace(path, (text + sep + entries[file]).encode("utf-8"))
    try:
        loading.load_model(project)
    except OpgenError as e:
        for file, path in paths.items():
            _replace(path, before[file])
        click.echo(f"opgen: error: the new entry does not load, so nothing was added:\n{e}", err=True)
        sys.exit(2)
    click.echo(f"opgen: added {name} at {loading.NATIVE_YAML}:{lines[loading.NATIVE_YAML]} and "
               f"{loading.DERIVATIVES_YAML}:{lines[loading.DERIVATIVES_YAML]}; edit them, then run `opgen generate`")


def _replace(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (a temporary file beside it, flushed, then renamed over it)."""
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
