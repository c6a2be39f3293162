"""generated/_registrations.py: every kernel of every operator registered with the dispatcher, the generated
CPU kernels as functions and the others by name (templates/registrations.py.j2)."""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from codegen.api_python import kernel_name
from codegen.literals import python_str
from codegen.native import NativeFunction
from codegen.render.inputs import Inputs
from runtime.vocabulary import POINTWISE_KEYS

# How generated/_registrations.py names the generated kernel modules.
GENERATED_MODULES = {"_cpu": "generated._cpu_kernels", "_cuda": "generated._cuda_kernels",
                     "_meta": "generated._meta_kernels", "_autograd": "generated._autograd"}
# The kernel modules generated/_registrations.py imports with the package: the generated CPU kernels, which
# nearly every program calls. Every other kernel is registered by name and its module imported on the first
# call of one of its kernels (Note [Kernels loaded on first call] in runtime/first_call.py): a CPU-only program
# never loads the CUDA backend, inference never loads the Autograd kernels and nodes, and each family of
# hand-written kernels (runtime/kernels/*.py) loads when one of its ops is first called.
IMPORTED_NOW = frozenset({"_cpu"})


@dataclass(frozen=True)
class Registration:
    """One base registration: `kernel` (a Python expression) serves operator `op` at dispatch key `key`."""

    op: str
    key: str
    kernel: str


@dataclass(frozen=True)
class RegistrationsFile:
    registrations: tuple[Registration, ...]  # in file order
    imported_now: tuple[tuple[str, str], ...]        # (generated module, the name it is imported as)


def registrations(f: NativeFunction) -> list[tuple[str, str]]:
    """(dispatch key, kernel expression) of every kernel the generated package registers for `f`."""
    kname = kernel_name(f)
    out = [(key, f"_{key.lower()}.{kname}") for key in POINTWISE_KEYS] if f.pointwise is not None else []
    out += f.dispatch.items()
    if f.has_autograd_kernel:
        out.append(("Autograd", f"_autograd.{kname}"))
    return out


def kernel_path(expression: str) -> str:
    """The dotted path of a kernel expression of `registrations` (`_cpu.add_Tensor` ->
    `generated._cpu_kernels.add_Tensor`), as the runtime names the function."""
    module, _, name = expression.partition(".")
    return f"{GENERATED_MODULES[module]}.{name}" if module in GENERATED_MODULES else expression


def contexts(inputs: Inputs) -> RegistrationsFile:
    """Every kernel, in file order; those outside IMPORTED_NOW by name."""
    entries: list[Registration] = []
    for f in inputs.model.functions:
        for key, kernel in registrations(f):
            if kernel.partition(".")[0] not in IMPORTED_NOW:
                module, _, function = kernel_path(kernel).rpartition(".")
                where = ", ".join(python_str(part, '"') for part in (module, function))
                kernel = f"_on_first_call({where})"
            entries.append(Registration(f.name, key, kernel))
    return RegistrationsFile(
        tuple(entries), tuple((GENERATED_MODULES[a].rpartition(".")[2], a) for a in sorted(IMPORTED_NOW)))


def render(env: jinja2.Environment, ctx: RegistrationsFile) -> dict[str, str]:
    return {"_registrations.py": env.get_template("registrations.py.j2").render(
        registrations=ctx.registrations, imported_now=ctx.imported_now)}
