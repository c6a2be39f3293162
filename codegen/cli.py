"""The `opgen` command: generate, check, list, show."""

from __future__ import annotations

import ast
import difflib
import fnmatch
import sys
import time
from pathlib import Path
from typing import NoReturn

import click

from codegen import gen, loading
from codegen.errors import OpgenError
from codegen.model import SchemaKind
from codegen.native import NativeFunction
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
    click.echo(f"opgen: error:\n{error}" if "\n" in str(error) else f"opgen: error: {error}", err=True)
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="opgen", prog_name="opgen")
def main() -> None:
    """opgen: tensor operators from YAML schemas.

    Edit native_functions.yaml and derivatives.yaml, run `opgen generate`, then `import generated as G`.
    """


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
            grad = d.node_name
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
    registered = dict(gen.registrations(f))
    d = model.derivative_of(f)
    rows = []
    for key in KEYS_BY_PRIORITY:
        name, how = resolve(key, registered)
        kernel = gen.kernel_path(registered[name]) if name is not None else "-"
        if key == DispatchKey.Autograd and how == "kernel" and f.has_autograd_kernel:
            how = f"records {d.node_name}" if d is not None and f.kind != SchemaKind.out else "no derivative"
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
@click.argument("op")
def show(root: str | None, op: str) -> None:
    """Show one operator: schema, dispatch table and derivative formulas (OP like add or add.Tensor)."""
    model = _model(_root(root))
    matches = shown_ops(model, op)
    if not matches:
        names = sorted({n for f in model.functions for n in (f.name, f.func.name.name)})
        close = difflib.get_close_matches(op, names, n=5, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `opgen list` lists them all"
        click.echo(f"opgen: error: no operator '{op}'{hint}", err=True)
        sys.exit(2)
    for f in matches:
        click.echo(f"{f.name}\n  schema:   {f.func}\n  defined:  {f.loc}"
                   + (f"  (derived from {f.derived_from.name})" if f.derived_from else ""))
        if f.doc:
            click.echo(f"  doc:      {f.doc}")
        if f.pointwise is not None:
            click.echo(f"  pointwise: {f.pointwise.source}  (promote: {f.pointwise.promote})")
        click.echo("  dispatch table (runtime key -> kernel):")
        for key, kernel, how in static_table(f, model):
            click.echo(f"    {key:<14} {kernel}  [{how}]")
        d = model.derivative_of(f)
        if d is not None:
            click.echo(f"  derivative: {d.node_name} ({d.loc})")
            for formula in d.formulas:
                # printed from its tree: one line, its strings escaped (the YAML text may hold any character)
                click.echo(f"    {', '.join(formula.inputs)}: {ast.unparse(formula.tree)}")
        click.echo("")
    others = [f.name for f in model.functions if f.func.name.name == op and f not in matches]
    if others:
        click.echo(f"other overloads: {', '.join(others)}")


if __name__ == "__main__":
    main()
