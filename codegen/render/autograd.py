"""generated/_autograd.py: the backward node of every derivatives.yaml entry and the Autograd kernel of
every op (templates/autograd.py.j2); what each saves and records is decided in codegen/gen_autograd.py."""

from __future__ import annotations

import jinja2

from codegen.gen_autograd import AutogradFile, autograd_file
from codegen.render.inputs import Inputs


def contexts(inputs: Inputs) -> AutogradFile:
    return autograd_file(inputs.model, inputs.root)


def render(env: jinja2.Environment, ctx: AutogradFile) -> dict[str, str]:
    return {"_autograd.py": env.get_template("autograd.py.j2").render(nodes=ctx.nodes, kernels=ctx.kernels)}
