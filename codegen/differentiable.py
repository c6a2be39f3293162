"""Which operators need a derivatives.yaml entry, checked when the YAML is loaded.

Note [A differentiable op needs a derivative]
An op whose output can carry a gradient must say how: a derivatives.yaml entry with formulas, or one
that marks its outputs not differentiable (`output_differentiability: [False]`, as PyTorch's argmax or
new_zeros are). Otherwise its Autograd kernel would record a node that fails only at `backward()`, far
from the YAML that is wrong, so generating stops with the op's file:line and the entry to add.
An op needs one when autograd could reach it and its output could be floating:
  - its Autograd kernel is generated (not CompositeImplicitAutograd, which records the ops it calls,
    nor a hand-written Autograd kernel), and it is the functional or in-place form written in YAML
    (out= forms are never differentiated; derived in-place forms share their root's entry);
  - it takes a Tensor argument (factories such as empty_strided start no graph);
  - it returns a Tensor;
  - its output can be floating: not a pointwise op with `promote: bool` (comparisons, isnan) or whose
    `dtypes` has no floating dtype (bitwise ops). Ops whose output dtype the YAML does not say (argmax,
    nonzero) must be marked.
"""

from __future__ import annotations

from codegen.derivatives import Derivative
from codegen.errors import Diagnostic
from codegen.model import SchemaKind
from codegen.native import NativeFunction
from runtime.vocabulary import PromoteKind, is_floating


def needs_derivative(f: NativeFunction) -> bool:
    """Whether `f` must have a derivatives.yaml entry (Note [A differentiable op needs a derivative])."""
    if f.derived_from is not None or f.kind == SchemaKind.out or not f.has_autograd_kernel:
        return False
    if not f.func.differentiable_arguments():
        return False
    if not any(r.type.is_tensor_like() for r in f.func.returns):
        return False
    spec = f.pointwise
    return not (spec is not None and (spec.promote == PromoteKind.bool or not any(map(is_floating, spec.dtypes))))


def problems(functions: list[NativeFunction], derivatives: list[Derivative],
             derivatives_file: str) -> list[Diagnostic]:
    """A diagnostic at each op that needs a derivative and has none, saying what to add."""
    have = {id(d.function) for d in derivatives}
    return [Diagnostic(f.loc, _message(f, derivatives_file))
            for f in functions if needs_derivative(f) and id(f) not in have]


def _message(f: NativeFunction, derivatives_file: str) -> str:
    inputs = ", ".join(a.name for a in f.func.differentiable_arguments())
    flags = ", ".join("False" for _ in f.func.returns)
    formulas = "\n".join(f"        {a.name}: <the gradient for {a.name}: an expression over grad and the arguments>"
                         for a in f.func.differentiable_arguments())
    return (f"'{f.name}' is differentiable (it takes {inputs} and may return a floating tensor) but has no "
            f"derivative: add a {derivatives_file} entry or mark it `output_differentiability: [{flags}]`:\n"
            f"      - name: {f.func}\n{formulas}\n"
            f"  or, when no output carries a gradient (indices, masks, counts, random draws):\n"
            f"      - name: {f.func}\n"
            f"        output_differentiability: [{flags}]")
