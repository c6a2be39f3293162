"""Capturing a whole training step: `loss.backward()`, `optimizer.step()` and `.grad` inside a compiled
function (Note [Capturing a training step]).

Note [Capturing a training step]
While a capture runs, `Tensor.backward`, the `grad` property, `Optimizer.step` (the base class's, with every
subclass that defines its own `step` breaking the capture) and `LRScheduler.step` are replaced:
- `loss.backward(gradient)` asks autograd, still tracing, for the gradients of `loss` with respect to the
  leaves that require grad among the tensors the capture has seen (`inputs=` when given), with create_graph
  so that every derivative formula takes its operator path (Note [Capturing the backward] in training.py);
  the formulas' operator calls are recorded as graph nodes. Each gradient is accumulated as eager autograd
  does: the leaf's `.grad` becomes it, or `.grad + it` (a recorded `add`) when the leaf had one.
- `.grad` is program state: the first time the capture reads or writes a leaf's `.grad`, its value at entry
  is noted. One that is a tensor becomes an input of the graph (read from the leaf at every run); one that
  is None is a guard. When the capture ends, each such leaf's `.grad` is an output: a value of the graph or
  None, assigned to the leaf after every run (so `opt.zero_grad()` is captured as what it does).
- `optimizer.step()` (no closure, no step hooks) becomes one node, `optimizer_step`, that reads the
  parameters' gradients (graph values) and writes the parameters and the optimizer's state in place: at
  every run it gives those parameters their gradients and runs the optimizer's update, which reads the
  hyper-parameters (`lr`, betas, ...) and the step counters from `param_groups` and `state` then, so an
  lr scheduler stepped between calls is honoured and nothing of the optimizer is a constant. For SGD and
  Adam/AdamW the update is a fused C++ loop per parameter (Note [Fused optimizer updates] in
  fused_update.py), for the others the optimizer's own `_update`.
- An lr scheduler stepped inside the function, a closure optimizer (LBFGS), step hooks and
  `autograd.backward(...)` called directly end the capture with the reason.
Capture runs the function for real, so its effects are logged on the way (`Undo`): the arrays of
external tensors an operator or the optimizer writes, the optimizer's state dicts, the `.grad` of every
leaf touched, and the random generator's state. When the capture breaks, everything is put back before
the function runs eagerly, so the step is taken once. When it succeeds, the compiled program is checked
against the capture: the effects are undone, the program runs once on the same inputs (the generator
restored, so random ops draw the same numbers), and its outputs, gradients and written tensors must agree
with what eager execution left; otherwise eager's results are put back and the function stays eager.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from runtime.autograd.grad_mode import no_grad
from runtime.compile.fused_update import available as fused_available
from runtime.compile.fused_update import rule_of
from runtime.compile.fused_update import run as run_fused
from runtime.compile.graph import Value
from runtime.compile.tracing import GraphBreak, suspended
from runtime.tensor import Tensor

# Registered by runtime.optim (which sits above runtime.compile): the optimizer base class whose `step` is
# captured, and the lr scheduler base classes whose `step` ends a capture.
_OPTIMIZER_BASES: list[type] = []
_SCHEDULER_BASES: list[type] = []


def register_optimizer_base(cls: type) -> None:
    """`cls.step(closure=None)` is captured as one `optimizer_step` node (Note [Capturing a training step])."""
    if cls not in _OPTIMIZER_BASES:
        _OPTIMIZER_BASES.append(cls)


def register_scheduler_base(cls: type) -> None:
    """`cls.step()` and its subclasses' inside a compiled function end the capture."""
    if cls not in _SCHEDULER_BASES:
        _SCHEDULER_BASES.append(cls)


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


class OptimizerStep:
    """The graph operator of one `optimizer.step()`: args (every parameter of the optimizer, its gradient or
    None), lists of values; the parameters and the optimizer's state are written in place."""

    schema = "optimizer_step(Tensor(a!)[] params, Tensor?[] grads) -> ()"

    def __init__(self, optimizer: Any, step: Callable[..., Any], fuse: bool = True) -> None:

        self.optimizer, self._step = optimizer, step
        self.name = f"optimizer_step[{type(optimizer).__name__}]"
        rule = rule_of(optimizer) if fuse else None
        self.rule = rule if rule is not None and fused_available() else None

    def call(self, params: list[Tensor], grads: list[Tensor]) -> list[Tensor]:

        for p, g in zip(params, grads, strict=True):
            p._grad = g
        opt = self.optimizer
        with no_grad():
            if self.rule is None or opt._step_pre_hooks or opt._step_post_hooks \
                    or not run_fused(opt, self.rule):  # Note [Fused optimizer updates]
                self._step(opt, None)
        return []


class Undo:
    """What a capture changed outside itself, to put back (Note [Capturing a training step])."""

    def __init__(self) -> None:
        from runtime.random import get_rng_state

        self.rng = get_rng_state()
        self.arrays: dict[int, tuple[Tensor, np.ndarray]] = {}
        self.grads: dict[int, tuple[Tensor, Tensor | None]] = {}  # leaf -> its .grad at entry
        self.states: dict[int, tuple[Any, dict[Any, dict[str, Any]]]] = {}  # optimizer -> its state at entry
        self.generators: dict[int, tuple[Any, Any]] = {}  # a Generator the function drew from -> its state at entry

    def save_generator(self, g: Any) -> None:
        """A generator passed to a random op (`generator=`): its state is put back like the default one's."""
        if id(g) not in self.generators and g.device.type == "cpu":
            self.generators[id(g)] = (g, g.get_state())

    def save_tensor(self, t: Tensor) -> None:
        if id(t) not in self.arrays and t._device.type in ("cpu", "cuda"):  # (NumPy or CuPy arrays)
            self.arrays[id(t)] = (t, t._data.copy())

    def save_optimizer(self, opt: Any) -> None:
        if id(opt) in self.states:
            return
        for group in opt.param_groups:
            for p in group["params"]:
                self.save_tensor(p)
        saved = {}
        for p, state in opt.state.items():
            saved[p] = dict(state)
            for v in state.values():
                if isinstance(v, Tensor):
                    self.save_tensor(v)
        self.states[id(opt)] = (opt, saved)

    def snapshot(self) -> Any:
        """The current contents of everything logged (to restore eager's results after a failed check)."""
        arrays = [(t, t._data.copy()) for t, _ in self.arrays.values()]
        grads = [(t, t._grad) for t, _ in self.grads.values()]
        states = [(opt, {p: dict(s) for p, s in opt.state.items()}) for opt, _ in self.states.values()]
        from runtime.random import get_rng_state

        return arrays, grads, states, (get_rng_state(), [(g, g.get_state()) for g, _ in self.generators.values()])

    def restore(self, snap: Any = None) -> None:
        from runtime.random import set_rng_state

        if snap is None:
            arrays = list(self.arrays.values())
            grads = list(self.grads.values())
            states = list(self.states.values())
            rng, generators = self.rng, list(self.generators.values())
        else:
            arrays, grads, states, (rng, generators) = snap
        for t, a in arrays:
            if t._data.shape == a.shape:
                t._data[...] = a
                t._bump_version()
        for t, g in grads:
            t._grad = g
        for opt, saved in states:
            for p in list(opt.state):
                if p not in saved:
                    del opt.state[p]
            for p, s in saved.items():
                current = opt.state[p]
                current.clear()
                current.update(s)
        set_rng_state(rng)
        for g, state in generators:
            g.set_state(state)


class StepEffects:
    """The training-step side of one capture: the backward calls, `.grad` state and optimizer steps seen."""

    def __init__(self, trace: Any) -> None:
        self.trace = trace
        self.undo = Undo()
        self.touched: dict[int, Tensor] = {}  # leaves whose .grad the capture read or wrote, by id
        self.grad_inputs: list[Tensor] = []  # leaves whose .grad at entry is an input of the graph
        self.backward_ranges: list[tuple[int, int, set[int]]] = []  # (first, end, free values before) per backward
        self.used = False  # a backward, an optimizer step or a .grad was seen
        self.optimizers: list[tuple[Any, list[int]]] = []  # each optimizer stepped, with its parameters' ids

    # -- .grad ------------------------------------------------------------------------------------------
    def touch(self, t: Tensor) -> None:
        if id(t) in self.touched:
            return
        self.used = True
        self.touched[id(t)] = t
        self.undo.grads[id(t)] = (t, t._grad)
        g = t._grad
        if g is not None and id(g) not in self.trace.values:
            self.trace.add_input(g)
            self.grad_inputs.append(t)

    def entry_guards(self) -> list[tuple[Tensor, Any]]:
        """(leaf, None or the signature of its .grad) at entry, for every leaf touched."""
        return [(t, grad_signature(g)) for t, g in self.undo.grads.values()]

    def final_grads(self) -> list[tuple[Tensor, Value | None]]:

        out: list[tuple[Tensor, Value | None]] = []
        for t in self.touched.values():
            g = t._grad
            if g is None:
                out.append((t, None))
                continue
            v = self.trace.values.get(id(g)) or self.trace._alias(g)
            if v is None:
                raise GraphBreak("a .grad was set to a tensor that no recorded operator made")
            out.append((t, v))
        return out

    # -- the patched methods ------------------------------------------------------------------------------
    def backward(self, loss: Tensor, gradient: Tensor | None, inputs: Any) -> None:
        from runtime import opcall
        from runtime.autograd.function import grad as autograd_grad

        self.used = True
        trace = self.trace
        if not loss.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if gradient is None:
            if loss.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            # recorded, then a constant
            gradient = opcall.api.ones(tuple(loss.shape), dtype=loss.dtype, device=loss.device)
        if inputs is not None:
            targets = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        else:
            seen: set[int] = set()
            targets = []
            for t in trace.keep:
                if t.requires_grad and t.is_leaf and id(t) not in seen:
                    seen.add(id(t))
                    targets.append(t)
        if not targets:
            return
        start, free_before = len(trace.graph.nodes), {v.id for v in trace.graph.externals()}
        try:
            grads = autograd_grad([loss], targets, [gradient], retain_graph=True, create_graph=True,
                                  allow_unused=True)
        except RuntimeError as e:
            raise GraphBreak(f"the backward could not be captured: {e}") from e
        self.backward_ranges.append((start, len(trace.graph.nodes), free_before))
        with no_grad():
            for t, g in zip(targets, grads, strict=True):
                if g is None:
                    continue
                with suspended():
                    g = g.detach()  # same array: the tracer knows it as the gradient's value
                self.touch(t)
                t._grad = g if t._grad is None else opcall.api.add(t._grad, g)

    def optimizer_step(self, opt: Any, closure: Any, original: Callable[..., Any]) -> Any:

        name = type(opt).__name__
        if closure is not None:
            raise GraphBreak(f"{name}.step(closure) re-evaluates the function inside the step")
        if getattr(opt, "_step_pre_hooks", None) or getattr(opt, "_step_post_hooks", None):
            raise GraphBreak(f"{name}.step() has step hooks (Python run around the update)")
        self.used = True
        params = [p for group in opt.param_groups for p in group["params"]]
        self.optimizers.append((opt, [id(p) for p in params]))
        for p in params:
            self.touch(p)
        self.undo.save_optimizer(opt)
        # every parameter's gradient as the step sees it, None included (the update skips those)
        args = [[self.trace.value_of(p) for p in params],
                [None if p._grad is None else self.trace.value_of(p._grad) for p in params]]
        with suspended():
            original(opt, None)
        node = self.trace.record(OptimizerStep(opt, original), args, [])
        return node

    def check_backward_reads(self) -> None:
        """A backward that read a tensor no recorded operator made ends the capture (the graph would hold one
        call's value); a Python number a formula wrapped as a 0-d tensor is a constant."""

        nodes = self.trace.graph.nodes
        for start, end, free_before in self.backward_ranges:
            for n in nodes[start:end]:
                for v in n.inputs():
                    if v.external is not None and v.id not in free_before and not v.external._wrapped:
                        raise GraphBreak(f"the backward ({n.name}) read a {v.describe()} tensor that no recorded "
                                         "operator made (a derivative formula outside the dispatcher?)")


def grad_signature(g: Tensor | None) -> Any:
    if g is None:
        return None
    data = g._data
    return (data.shape, data.strides, g._dtype)


@contextmanager
def patched(state: Any) -> Iterator[None]:
    """The replacements of Note [Capturing a training step] for the duration of a capture; `state.trace` is
    the capture in progress (None while it is suspended), whose `.step` is its StepEffects."""
    from runtime.autograd import function as autograd_function

    saved: list[tuple[Any, str, Any]] = []

    def replace(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)))
        setattr(owner, name, value)

    def effects() -> StepEffects | None:
        trace = state.trace
        return None if trace is None else trace.step

    original_backward = Tensor.__dict__["backward"]

    def backward(self: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        fx = effects()
        if fx is None:
            return original_backward(self, gradient, retain_graph, create_graph, inputs)
        if create_graph:
            raise GraphBreak("backward(create_graph=True) inside the function (a differentiable backward)")
        fx.backward(self, gradient, inputs)
        return None

    original_grad = Tensor.__dict__["grad"]

    def get_grad(self: Tensor) -> Tensor | None:
        fx = effects()
        if fx is not None:
            fx.touch(self)
        return self._grad

    def set_grad(self: Tensor, value: Tensor | None) -> None:
        fx = effects()
        if fx is not None:
            fx.touch(self)
        original_grad.fset(self, value)

    original_run_backward = autograd_function.run_backward

    def run_backward(*args: Any, **kwargs: Any) -> Any:
        if effects() is not None and kwargs.get("accumulate"):
            raise GraphBreak("autograd.backward() called directly (Tensor.backward is what a compiled function "
                             "captures)")
        return original_run_backward(*args, **kwargs)

    replace(Tensor, "backward", backward)
    replace(Tensor, "grad", property(get_grad, set_grad, doc=original_grad.__doc__))
    replace(autograd_function, "run_backward", run_backward)
    for base in _OPTIMIZER_BASES:
        original_step = base.__dict__["step"]

        def step(self: Any, closure: Any = None, original_step: Any = original_step) -> Any:
            fx = effects()
            if fx is None:
                return original_step(self, closure)
            fx.optimizer_step(self, closure, original_step)
            return None

        replace(base, "step", step)
        for sub in _subclasses(base):
            if "step" in sub.__dict__:
                replace(sub, "step", _breaker(state, sub, f"{sub.__name__}.step() is its own algorithm (a closure "
                                                          "optimizer), which a graph does not capture"))
    for base in _SCHEDULER_BASES:
        for cls in (base, *_subclasses(base)):
            if "step" in cls.__dict__:
                replace(cls, "step", _breaker(state, cls, f"an lr scheduler ({cls.__name__}) stepped inside the "
                                                          "function: step it outside the compiled function"))
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


def _breaker(state: Any, cls: type, reason: str) -> Any:

    original = cls.__dict__["step"]

    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        if state.trace is not None:
            raise GraphBreak(reason)
        return original(self, *args, **kwargs)
    return step
