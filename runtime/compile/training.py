"""Compiled training: a function whose outputs require grad runs as two compiled programs, the forward and
the backward captured from autograd's derivative formulas, joined to the autograd graph by one node.

Note [Capturing the backward]
`capture_joint` (capture.py) runs the function under the Tracer key as inference capture does, except that
an operator whose autograd kernel is its CompositeImplicitAutograd decomposition is decomposed while
tracing (its parts are recorded, and they are what autograd saves for backward). Then, still tracing, it
asks autograd for the gradients of the outputs that require grad (gradients of ones, new inputs of the
graph) with respect to the inputs and free values (parameters) that require grad: the engine runs the
derivative formulas, whose operator calls are recorded after the forward's. The recorded list splits at
that point into the forward graph and the backward graph; a value the backward reads that the forward
made (or an input) is saved: the forward program returns it beside the function's outputs and the
backward program takes it as an input, with the outputs' gradients. A tensor that autograd saved as a
detached copy is found by its array. The gradients are asked with create_graph, so that every formula
takes its path made of operators (some compute on the arrays when the result needs no history). A
backward that reads a tensor no recorded operator made ends the capture (the graph would hold one call's
value), except a Python number the API wrapped as a 0-d tensor (a constant of the formula).
At run time the forward program runs with grad mode off inside a custom autograd Function's forward, whose
inputs are the function's tensor inputs and the free values that require grad; its backward runs the
backward program (fused like the forward) and returns one gradient per input. The compiled backward is not
itself differentiable (no double backward through a compiled function).
"""

from __future__ import annotations

from typing import Any

from runtime.autograd.custom_function import Function
from runtime.autograd.grad_mode import no_grad
from runtime.compile.capture import Joint
from runtime.compile.graph import Value, same_kind
from runtime.compile.passes import mutates
from runtime.compile.program import Program
from runtime.tensor import Tensor


def flat_tensors(x: Any) -> list[Tensor]:
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, list | tuple):
        return [t for a in x for t in flat_tensors(a)]
    if isinstance(x, dict):
        return [t for a in x.values() for t in flat_tensors(a)]
    return []


def _flat_values(structure: Any) -> list[Value]:
    if isinstance(structure, Value):
        return [structure]
    if isinstance(structure, list | tuple):
        return [v for a in structure for v in _flat_values(a)]
    if isinstance(structure, dict):
        return [v for a in structure.values() for v in _flat_values(a)]
    return []


def _rebuild(structure: Any, flat: list[Any], at: list[int]) -> Any:
    """`structure` (Values and constants in lists, tuples and dicts) with each Value replaced by the next of
    `flat`."""
    if isinstance(structure, Value):
        at[0] += 1
        return flat[at[0] - 1]
    if isinstance(structure, list | tuple):
        return same_kind(structure, [_rebuild(a, flat, at) for a in structure])
    if isinstance(structure, dict):
        return {k: _rebuild(a, flat, at) for k, a in structure.items()}
    return structure


class TrainingProgram:
    """The compiled forward and backward of one input signature."""

    def __init__(self, joint: Joint, fuse: bool) -> None:
        self.output = joint.forward.output[0]
        self.forward = Program(joint.forward, joint.results, fuse)
        self.backward = Program(joint.backward, joint.results, fuse)
        self.graph = self.forward.graph
        self.diff_outputs = joint.diff_outputs
        position = {v.id: k for k, v in enumerate(joint.forward.inputs)}
        self.input_targets = [(k, position[v.id]) for k, v in enumerate(joint.targets) if v.id in position]
        self.free_targets = [v.external for v in joint.targets if v.id not in position]
        self.fused = self.forward.fused + self.backward.fused
        # outputs that are an input or a free value themselves are returned as that tensor, as eager returns
        # it (not a new tensor with the compiled graph's grad_fn)
        self.passthrough: list[tuple[int, int | Tensor]] = []
        for k, v in enumerate(_flat_values(self.output)):
            while v.producer is not None and mutates(v.producer) and v.producer.args and \
                    isinstance(v.producer.args[0], Value):  # an in-place op returns the tensor it wrote
                v = v.producer.args[0]
            if v.producer is None:
                self.passthrough.append((k, v.external if v.external is not None else position[v.id]))

    def guards_hold(self) -> bool:
        """The free values that required grad at capture still do (their gradients are what it computes)."""
        return all(t.requires_grad for t in self.free_targets)

    def kernel_source(self) -> str:
        return "\n".join(s for s in (self.forward.kernel_source(), self.backward.kernel_source()) if s)

    def run(self, inputs: list[Tensor]) -> Any:
        flat = list(_CompiledGraph.apply(self, len(inputs), *inputs, *self.free_targets))
        for k, src in self.passthrough:
            flat[k] = src if isinstance(src, Tensor) else inputs[src]
        return _rebuild(self.output, flat, [0])


class _CompiledGraph(Function):
    @staticmethod
    def forward(ctx: Any, program: TrainingProgram, n_inputs: int, *tensors: Tensor) -> tuple[Tensor, ...]:
        output, saved = program.forward.run(list(tensors[:n_inputs]))
        ctx.program, ctx.n_inputs, ctx.n_args = program, n_inputs, len(tensors)
        ctx.saved = saved
        outs = flat_tensors(output)
        ctx.like = [outs[i] for i in program.diff_outputs]
        keep = set(program.diff_outputs)
        ctx.mark_non_differentiable(*(t for i, t in enumerate(outs) if i not in keep))
        return tuple(outs)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        program: TrainingProgram = ctx.program
        outs = []
        for i, like in zip(program.diff_outputs, ctx.like, strict=True):
            g = grads[i]
            outs.append(g if g is not None else like.new_zeros(like.shape))
        with no_grad():
            result = program.backward.run(list(ctx.saved) + outs)
        answer: list[Tensor | None] = [None] * (2 + ctx.n_args)
        k = 0
        for k, position in program.input_targets:
            answer[2 + position] = result[k]
        for j, _ in enumerate(program.free_targets):
            answer[2 + ctx.n_inputs + j] = result[len(program.input_targets) + j]
        return tuple(answer)
