"""generated/__init__.py (the package: its public names from the runtime and the generated modules) and
py.typed (PEP 561: the package ships its types, generated/__init__.pyi)."""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen.render.inputs import Inputs


@dataclass(frozen=True)
class PackageFiles:
    """The package files depend on no op: nothing to carry."""


def contexts(inputs: Inputs) -> PackageFiles:
    return PackageFiles()


def render(env: jinja2.Environment, ctx: PackageFiles) -> dict[str, str]:
    return {"__init__.py": env.get_template("init.py.j2").render(), "py.typed": ""}
