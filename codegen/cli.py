"""The `opgen` command: generate, check, list, show."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import NoReturn

import click

from codegen import gen
from codegen.api_python import kernel_name
from codegen.errors import OpgenError
from codegen.model import SchemaKind
from codegen.native import NativeFunction


def _root(root: str | None) -> Path:
    path = Path(root) if root else Path.cwd()
    if not (path / gen.NATIVE_YAML).is_file():
        raise click.UsageError(f"no {gen.NATIVE_YAML} in {path.resolve()}: run opgen in a project, or pass --root DIR")
    return path.resolve()


def _fail(error: OpgenError) -> NoReturn:
    click.echo(f"opgen: error:\n{error}" if "\n" in str(error) else f"opgen: error: {error}", err=True)
    sys.exit(2)


def _render(project: Path) -> dict[str, str]:
    """Every generated file, or exit 2 with the problems (nothing is written either way)."""
    try:
        return gen.generate(project)
    except OpgenError as e:
        _fail(e)


def _model(project: Path) -> gen.Model:
    try:
        return gen.load_model(project)
    except OpgenError as e:
        _fail(e)


root_option = click.option("--root", type=click.Path(file_okay=False), default=None,
                           help="Project directory (default: the current directory).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
def list_ops(root: str | None) -> None:
    """List the operators: name, variants, dispatch keys, differentiable or not."""
    model = _model(_root(root))
    rows = [("operator", "variants", "kernels", "autograd")]
    for f in model.functions:
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


RUNTIME_KEYS = ("Autograd", "BackendSelect", "CUDA", "CPU", "Meta")
_ALIAS_SERVES = {"CompositeImplicitAutograd": RUNTIME_KEYS, "CompositeExplicitAutograd": ("CUDA", "CPU", "Meta")}


def static_table(f: NativeFunction, model: gen.Model) -> list[tuple[str, str, str]]:
    """What serves each runtime dispatch key of an op, by the runtime's precedence rules:
    a kernel for the key, then an alias kernel, else (Autograd, BackendSelect) fall through."""
    rows = []
    name = kernel_name(f)
    root_dispatch = f.root.dispatch
    for key in RUNTIME_KEYS:
        if key in f.dispatch:
            rows.append((key, f.dispatch[key], "kernel"))
        elif f.pointwise is not None and key in ("CPU", "CUDA"):
            module = "_cpu_kernels" if key == "CPU" else "_cuda_kernels"
            rows.append((key, f"generated.{module}.{name}", "generated pointwise kernel"))
        elif key == "Autograd" and "CompositeImplicitAutograd" not in root_dispatch:
            d = model.derivative_of(f)
            how = f"records {d.node_name}" if d is not None and f.kind != SchemaKind.out else "no derivative"
            rows.append((key, f"generated._autograd.{name}", how))
        else:
            alias = next((a for a, keys in _ALIAS_SERVES.items() if a in root_dispatch and key in keys), None)
            if alias is not None:
                rows.append((key, root_dispatch[alias], alias))
            else:
                rows.append((key, "-", "fallthrough" if key in ("Autograd", "BackendSelect") else "missing"))
    return rows


@main.command()
@root_option
@click.argument("op")
def show(root: str | None, op: str) -> None:
    """Show one operator: schema, dispatch table and derivative formulas (OP like add or add.Tensor)."""
    model = _model(_root(root))
    matches = [f for f in model.functions if f.name == op or f.func.name.name == op]
    if not matches:
        click.echo(f"opgen: error: no operator '{op}'", err=True)
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
                click.echo(f"    {', '.join(formula.inputs)}: {formula.source}")
        click.echo("")
