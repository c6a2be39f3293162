"""A compiled training step: one program holding the forward, the backward, the `.grad` updates and the
optimizer's update (Note [Capturing a training step] in step_capture.py)."""

from __future__ import annotations

from typing import Any

from runtime.compile.graph import Graph
from runtime.compile.program import Program
from runtime.compile.step_capture import StepEffects
from runtime.dispatcher import AUTOGRAD_BIT, tls
from runtime.tensor import Tensor


class StepProgram:
    """The graph of a function that ran `backward()`, `optimizer.step()` or touched `.grad`: inputs are the
    function's tensors and the `.grad` at entry of the leaves in `grad_inputs`; outputs the function's result
    and the `.grad` of every leaf touched, assigned after each run."""

    def __init__(self, graph: Graph, results: dict[int, Any], effects: StepEffects, fuse: bool) -> None:
        self.grad_inputs = list(effects.grad_inputs)
        self.entry = effects.entry_guards()
        self.grad_owners = [t for t, _ in effects.outputs]
        leaves = {id(t): t for t in self.grad_owners}
        for v in graph.externals():
            if v.external.requires_grad and v.external.is_leaf:
                leaves.setdefault(id(v.external), v.external)
        self.requires = [(t, t.requires_grad) for t in leaves.values()]
        graph.output = (graph.output, [v for _, v in effects.outputs])
        self.program = Program(graph, results, fuse)
        self.graph = self.program.graph
        self.fused = self.program.fused

    def guards_hold(self) -> bool:
        """Each touched leaf's `.grad` at entry is None or not as at capture (and of its shape, strides and
        dtype: step_capture.grad_signature, compared here in place), and the leaves that required grad
        still do (and no other)."""
        for t, sig in self.entry:
            g = t._grad
            if sig is None:
                if g is not None:
                    return False
            elif g is None:
                return False
            else:
                data = g._data
                if data.shape != sig[0] or data.strides != sig[1] or g._dtype != sig[2]:
                    return False
        for t, r in self.requires:
            if t._requires_grad != r:
                return False
        return True

    def kernel_source(self) -> str:
        return self.program.kernel_source()

    def run(self, inputs: list[Tensor]) -> Any:
        inputs = inputs + [t._grad for t in self.grad_inputs]
        enabled = tls.mask & AUTOGRAD_BIT  # (grad mode off while it runs: no_grad's effect, inline)
        if enabled:
            tls.mask &= ~AUTOGRAD_BIT
        try:
            output, grads = self.program.run(inputs)
        finally:
            if enabled:
                tls.mask |= AUTOGRAD_BIT
        for t, g in zip(self.grad_owners, grads, strict=True):
            t._grad = g
        return output


class StepPrograms:
    """The step programs of one input signature, each for another state of the `.grad`s at entry (the first
    call of a loop starts without gradients, the later ones with them)."""

    LIMIT = 8

    def __init__(self) -> None:
        self.variants: list[StepProgram] = []
        self.last = 0  # the variant the last call ran: a steady loop's state, tried first

    def pick(self) -> StepProgram | None:
        variants = self.variants
        if self.last < len(variants) and variants[self.last].guards_hold():
            return variants[self.last]
        for k, p in enumerate(variants):
            if k != self.last and p.guards_hold():
                self.last = k
                return p
        return None
