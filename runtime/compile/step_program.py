"""A compiled training step: one program holding the forward, the backward, the `.grad` updates and the
optimizer's update (Note [Capturing a training step] in step_capture.py)."""

from __future__ import annotations

from typing import Any

from runtime.autograd.node import Node
from runtime.autograd.saved import ERR_BACKWARD_TWICE
from runtime.compile.graph import Graph, leaves
from runtime.compile.program import Program
from runtime.compile.step_capture import StepEffects
from runtime.tensor import Tensor


class _SpentBackward(Node):
    """The grad_fn of a compiled step's outputs that required grad when it ran eagerly (the loss): the step's
    backward has run, so a second backward through them fails as it does after an eager `loss.backward()`
    (Note [Outputs of a compiled step])."""

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise RuntimeError(ERR_BACKWARD_TWICE)

    def name(self) -> str:
        return "CompiledStepBackward"


# Note [Outputs of a compiled step]
# The step program runs with grad mode off, but the tensors the eager step returns that required grad (the
# loss, the logits) carry a grad_fn whose graph its `backward()` has freed. So the program's outputs at the
# same positions are marked as eager's were: requires_grad, and a grad_fn that raises the error of a
# second backward (eager's, since the graph's saved values are gone). The step's own backward is in the
# program; nothing is recorded per call.


def _flat(x: Any) -> list[Tensor]:
    return leaves(x, Tensor)


class StepProgram:
    """The graph of a function that ran `backward()`, `optimizer.step()` or touched `.grad`: inputs are the
    function's tensors and the `.grad` at entry of the leaves in `grad_inputs`; outputs the function's result
    and the `.grad` of every leaf touched, assigned after each run."""

    def __init__(self, graph: Graph, results: dict[int, Any], effects: StepEffects, fuse: bool,
                 result: Any = None) -> None:
        # the outputs that required grad when the step ran eagerly (Note [Outputs of a compiled step])
        self.spent = [k for k, t in enumerate(_flat(result)) if t.requires_grad and t.grad_fn is not None]
        self.grad_fn = _SpentBackward()
        self.grad_inputs = list(effects.grad_inputs)
        self.entry = effects.entry_guards()
        self.grad_owners = [t for t, _ in effects.outputs]
        leaves = {id(t): t for t in self.grad_owners}
        for v in graph.externals():
            if v.external.requires_grad and v.external.is_leaf:
                leaves.setdefault(id(v.external), v.external)
        self.requires = [(t, t.requires_grad) for t in leaves.values()]
        self.optimizers = list(effects.optimizers)  # each one's parameters are a guard (add_param_group)
        graph.output = (graph.output, [v for _, v in effects.outputs])
        self.program = Program(graph, results, fuse)
        self.graph = self.program.graph
        self.fused = self.program.fused

    def guards_hold(self) -> bool:
        """Each touched leaf's `.grad` at entry is None or not as at capture (and of its shape, strides and
        dtype: step_capture.grad_signature, compared here in place), each optimizer stepped holds the
        parameters it held, and the leaves that required grad still do (and no other)."""
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
        for opt, params in self.optimizers:
            if [id(p) for group in opt.param_groups for p in group["params"]] != params:
                return False
        for t, r in self.requires:
            if t._requires_grad != r:
                return False
        return True

    def kernel_source(self) -> str:
        return self.program.kernel_source()

    def run(self, inputs: list[Tensor]) -> Any:
        inputs = inputs + [t._grad for t in self.grad_inputs]
        output, grads = self.program.run_without_grad(inputs)
        for t, g in zip(self.grad_owners, grads, strict=True):
            t._grad = g
        if self.spent:
            flat = _flat(output)
            for k in self.spent:
                t = flat[k]
                if t._grad_fn is None and not t._requires_grad:
                    t._requires_grad, t._grad_fn = True, self.grad_fn
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
