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
At run time the forward program runs with grad mode off, and its differentiable outputs get one backward
node (Note [The compiled graph's node]), whose edges are the function's tensor inputs and the free values
that require grad; its `apply` runs the backward program (fused like the forward) and returns one gradient
per edge. The compiled backward is not itself differentiable (no double backward through a compiled
function).

Note [The compiled graph's node]
The node is a plain autograd Node, made directly rather than through a custom `autograd.Function` (whose
`apply` builds a ctx, checks dirty and non-differentiable marks, wraps saved tensors: about 55 us of Python
per call on the MLP 32-64-10 loss, a sixth of its training step). What a Function would do that applies
here is done inline: grad mode is off while the forward program runs; an output that is an input itself is
returned as a detached alias (the input keeps its own history); only the outputs in `diff_outputs` get the
node as grad_fn (the others are new tensors that do not require grad); a missing output gradient becomes
zeros of that output's shape in `apply`; anomaly mode records the forward's trace. The backward program's
gradients are new arrays except where it returns an array it read (a saved value, an incoming gradient, a
constant); `apply` says which by `fresh_gradients` at each run, so that the engine stores a leaf's first
gradient without a copy only where nothing else holds it (as for the generated nodes). No node is made when
grad mode is off or no input or free value requires grad (the outputs then carry no history).
"""

from __future__ import annotations

from typing import Any

import runtime.autograd.anomaly_mode as anomaly_mode
from runtime.autograd.grad_mode import no_grad
from runtime.autograd.node import Node, edge_to, record_output
from runtime.compile.capture import Joint
from runtime.compile.graph import Value, leaves, same_kind
from runtime.compile.passes import mutates
from runtime.compile.program import Program
from runtime.dispatcher import AUTOGRAD_BIT, tls
from runtime.tensor import Tensor


def flat_tensors(x: Any) -> list[Tensor]:
    return leaves(x, Tensor)


def _flat_values(structure: Any) -> list[Value]:
    return leaves(structure, Value)


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
        graph = self.backward.graph  # (as optimised: folded constants are externals too)
        self.backward_externals = [v.external for v in [*graph.externals(), *graph.output_values()]
                                   if v.external is not None]
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
        """The forward program with grad mode off; its differentiable outputs get one backward node, a
        `CompiledFunctionBackward`, whose edges are those of `inputs` and the free targets (Note [The
        compiled graph's node])."""
        enabled = tls.mask & AUTOGRAD_BIT
        output, saved = self.forward.run_without_grad(inputs)
        outs = flat_tensors(output)
        tensors = inputs + self.free_targets
        if enabled and any(t._requires_grad for t in tensors):
            own = {id(t) for t in tensors}
            for i, t in enumerate(outs):
                # an input returned as it is: a new tensor on its storage (the input keeps its own history)
                if id(t) in own or t._requires_grad:
                    outs[i] = t.detach()
            node = CompiledFunctionBackward(self, len(inputs), saved, outs)
            node.next_edges = tuple(edge_to(t) for t in tensors)
            for i in self.diff_outputs:
                record_output(outs[i], node, i)
            if anomaly_mode.enabled:
                node.__dict__["_forward_trace"] = anomaly_mode.forward_trace()  # (read by anomaly mode's report)
        for k, src in self.passthrough:
            outs[k] = src if isinstance(src, Tensor) else inputs[src]
        return _rebuild(self.output, outs, [0])


class CompiledFunctionBackward(Node):
    """The backward node of one run of a compiled forward (Note [The compiled graph's node])."""

    materialize_grads = False  # apply fills a missing gradient with zeros of the output's shape

    def __init__(self, program: TrainingProgram, n_inputs: int, saved: list[Tensor], outs: list[Tensor]) -> None:
        Node.__init__(self)
        self.program, self.n_inputs, self.saved = program, n_inputs, saved
        self.like = [outs[i] for i in program.diff_outputs]
        self.num_inputs = len(outs)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        program = self.program
        outs = []
        for i, like in zip(program.diff_outputs, self.like, strict=True):
            g = grads[i]
            outs.append(g if g is not None else like.new_zeros(like.shape))  # type: ignore[attr-defined]
        with no_grad():
            result = program.backward.run(list(self.saved) + outs)
        # Node's class-wide flag, set per run on this node (Note [The compiled graph's node])
        self.__dict__["fresh_gradients"] = _fresh(result, [*self.saved, *outs, *program.backward_externals])
        answer: list[Tensor | None] = [None] * len(self.next_edges)
        for k, position in program.input_targets:
            answer[position] = result[k]
        at = len(program.input_targets)
        for j in range(len(program.free_targets)):
            answer[self.n_inputs + j] = result[at + j]
        return [g if e is not None else None for g, e in zip(answer, self.next_edges, strict=True)]


def _fresh(result: list[Tensor | None], held: list[Tensor | None]) -> bool:
    """No gradient in `result` is the array (or the base of the array) of a tensor the backward program
    read (`held`: saved values, incoming gradients, constants): the engine may then keep one as a leaf's
    first `.grad` without a copy (Note [Stealing the first gradient] in engine.py, which also refuses
    views, shared outputs and incoming gradients)."""
    arrays = set()
    for t in held:
        if t is not None:
            data = t._data
            arrays.add(id(data))
            if data.base is not None:
                arrays.add(id(data.base))
    return not any(g is not None and id(g._data) in arrays for g in result)
