"""`G.compile`: capture a function as a graph through the dispatcher, optimise it, fuse its pointwise runs
into C++ kernels, and run the result (the first slice of torch.compile's design on opgen).

    @G.compile
    def gelu_residual(x):
        return 0.5 * x * (1 + G.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x

The first call for each input signature (shapes, strides, dtypes, devices, requires_grad, the other
arguments' values, grad mode) captures and compiles; later calls with the same signature run the compiled
program. What a graph cannot hold ends capture and the function runs eagerly, with the reason said once
(`fullgraph=True` raises it instead): reading a tensor's data in Python (`.item()`, `.tolist()`, `bool(t)`),
returning something other than tensors and Python constants (in lists, tuples and dicts), turning autograd
on inside a call made under no_grad, tensors on a device other than the CPU and CUDA, and (for CPU graphs)
a machine without a C++ compiler. A compiled function called while another is being captured runs inline.
A graph on a CUDA device fuses into CUDA kernels compiled by NVRTC (runtime/compile/cuda_fusion.py; on the
emulated device, by the host engine). When an input or a tensor the
function reads (a parameter) requires grad and grad mode is on, the backward is captured too and compiled as
a second program (runtime/compile/training.py): `out.backward()` on a compiled function's output runs the
compiled backward. A function that itself calls `loss.backward()` and `optimizer.step()` compiles as one
training-step program (Note [Capturing a training step] in step_capture.py). `debug=True` (or
OPGEN_COMPILE_DEBUG=1) prints each graph and its fused kernels' source when it is compiled.

Note [Checking a compiled step]
A training-step program is checked once, by taking the step again from the state at entry and comparing
what it wrote with the eager step: outputs, `.grad`s and every tensor written, within the tolerance of
sums taken in another order. One case needs more: a parameter whose gradient is rounding noise (a conv or
linear bias before a batch norm in training mode, whose true gradient is zero) gets a noise that differs
between any two orders of summation (so does the key projection's bias in attention), and an optimizer
that normalises its step (Adam) turns either noise into a full step of lr in some direction. An element of
a parameter whose gradient is at most 1e-4 of the largest gradient agrees when it is within four times the
eager step's largest move of that parameter from the eager result (both steps are bounded by the
optimizer's step size, which that move measures); every other element must agree as outputs do.

Note [The cost of a compiled call]
A small compiled function or training step spends more of its time in Python around the program than in its
kernels, so a call does only what changes between calls: `_key` makes the input signature (per tensor
argument, its array's shape and byte strides, dtype, device and requires_grad; other arguments tagged by type;
the grad mode bit) and the flat tensor list the program takes in one pass over the arguments; the guards read
a plan made once per compiled function (guards.StatePlan, Note [Guards on Python state]); a step program's
variants try the one the last call ran first; a training program's forward records one plain autograd node,
whose fresh gradients become `.grad`s without a copy (Note [The compiled graph's node] in training.py); inside
the program each fused group is called through a function written for it, a kept buffer's address is taken
once (Note [The program as one function]), and the thread count is read without the environment (Note [Thread
count]). Nothing that decides which program runs is cached across calls: every value a guard stands for is
read again at each call, so a change is seen at the very next call (tests/compile/test_call_cost.py changes
each one). `python3 bench/bench_call_overhead.py` prints the cost of a 16-element compiled call beside
torch.compile's, the MLP and demo steps, and a breakdown.
"""

from __future__ import annotations

import functools
import os
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import opcall
from runtime.autograd.grad_mode import is_grad_enabled
from runtime.compile import tracing
from runtime.compile.capture import GraphBreak, capture_joint, capture_with_effects
from runtime.compile.cpp_build import find_compiler
from runtime.compile.graph import Graph, leaves
from runtime.compile.guards import StatePlan
from runtime.compile.passes import RANDOM_WORDS
from runtime.compile.program import Program, fusion_specs
from runtime.compile.remat import recomputable
from runtime.compile.step_capture import StepEffects
from runtime.compile.step_program import StepProgram, StepPrograms
from runtime.compile.training import TrainingProgram
from runtime.dispatcher import AUTOGRAD_BIT, tls
from runtime.tensor import Tensor

__all__ = ["CompiledFunction", "GraphBreak", "compile"]

_EAGER = object()


def _sig(x: Any) -> Any:
    if isinstance(x, Tensor):
        # the array's shape and (byte) strides: the tensor's layout (as `_key` writes it)
        data = x._data
        return (data.shape, data.strides, x._dtype, x._device, x._requires_grad)
    if isinstance(x, list | tuple):
        return (type(x).__name__, tuple(_sig(a) for a in x))
    if isinstance(x, dict):  # in its order: the program takes the tensors in the order they are flattened
        return ("dict", tuple((k, _sig(v)) for k, v in x.items()))
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return (type(x).__name__, x)


def _signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The input signature of a call (Note [The cost of a compiled call])."""
    return _key(args, kwargs)[0]


def _key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Tensor]]:
    """The input signature of a call and its tensors in `_flat_tensors` order, in one pass: a tensor
    argument's entry is its layout tuple; other arguments (and the keywords) get `_sig`'s tagged tuples."""
    parts: list[Any] = []
    tensors: list[Tensor] = []
    for x in args:
        if x.__class__ is Tensor:
            data = x._data
            parts.append((data.shape, data.strides, x._dtype, x._device, x._requires_grad))
            tensors.append(x)
        else:
            parts.append(_sig(x))
            if not isinstance(x, _SCALARS):
                tensors.extend(_flat_tensors(x))
    if kwargs:
        parts.append(_sig(kwargs))
        tensors.extend(_flat_tensors(kwargs))
    parts.append(tls.mask & AUTOGRAD_BIT)  # grad mode
    if len(tensors) > 1:  # which arguments share memory (the same tensor twice, a view of another argument)
        bases = [id(t if t._base is None else t._base) for t in tensors]
        if len(set(bases)) < len(bases):
            first: dict[int, int] = {}
            parts.append(tuple(first.setdefault(b, k) for k, b in enumerate(bases)))
    return tuple(parts), tensors


_SCALARS = (type(None), bool, int, float, str)


def _flat_tensors(x: Any) -> list[Tensor]:
    return leaves(x, Tensor)


# Signatures one compiled function compiles for (PyTorch's torch._dynamo.config.cache_size_limit); a
# function called with ever new shapes would otherwise compile at every call.
CACHE_SIZE_LIMIT = 8


class CompiledFunction:
    """`fn` compiled per input signature (see the module's docstring)."""

    def __init__(self, fn: Callable[..., Any], fullgraph: bool = False, dynamic: bool | None = None,
                 debug: bool = False) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.debug = debug or os.environ.get("OPGEN_COMPILE_DEBUG", "") not in ("", "0")
        self.cache: dict[Any, Any] = {}
        self.reasons: set[str] = set()
        self.state_plan = StatePlan(fn)
        functools.update_wrapper(self, fn)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """`@G.compile` on a method: `obj.method` binds `obj` as the first argument (the object is then part
        of the call's signature, and a module's state is guarded as an argument's)."""
        return self if obj is None else types.MethodType(self, obj)

    # -- what a user can look at ----------------------------------------------------------------
    @property
    def programs(self) -> list[Program | TrainingProgram | StepProgram]:
        out: list[Program | TrainingProgram | StepProgram] = []
        for p in self.cache.values():
            if isinstance(p, StepPrograms):
                out.extend(p.variants)
            elif isinstance(p, Program | TrainingProgram):
                out.append(p)
        return out

    @property
    def graphs(self) -> list[Graph]:
        return [p.graph for p in self.programs]

    # -- calling -----------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if tracing.state.trace is not None:  # called by a function being captured: its ops join that graph
            return self.fn(*args, **kwargs)
        signature, tensors = _key(args, kwargs)  # Note [The cost of a compiled call]
        key = (signature, self.state_plan.state(args, kwargs))  # Note [Guards on Python state]
        program = self.cache.get(key)
        if program is None:
            if len(self.cache) >= CACHE_SIZE_LIMIT:
                self._note(f"compiled for {CACHE_SIZE_LIMIT} input signatures (shapes, dtypes, modes): further "
                           "ones run eagerly (opgen's graphs specialise on shapes; dynamic=True does not change that)")
                return self.fn(*args, **kwargs)
            return self._compile(key, args, kwargs)
        if program is _EAGER:
            return self.fn(*args, **kwargs)
        if isinstance(program, StepPrograms):
            step = program.pick()
            if step is not None:
                return step.run(tensors)
            if len(program.variants) >= StepPrograms.LIMIT:
                self._note(f"the .grad or requires_grad state at entry changed {StepPrograms.LIMIT} times: the "
                           "function runs eagerly for the states not compiled")
                return self.fn(*args, **kwargs)
            return self._compile(key, args, kwargs)
        if isinstance(program, TrainingProgram) and not program.guards_hold():
            return self._compile(key, args, kwargs)
        return program.run(tensors)

    def _eager(self, key: Any, reason: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.fullgraph:
            raise GraphBreak(f"G.compile(fullgraph=True): {self._name()} cannot be captured whole: {reason}")
        if reason not in self.reasons:
            self.reasons.add(reason)
            warnings.warn(f"G.compile: {self._name()} runs eagerly: {reason}", RuntimeWarning, stacklevel=3)
        self.cache[key] = _EAGER
        return self.fn(*args, **kwargs)

    def _name(self) -> str:
        return getattr(self.fn, "__qualname__", repr(self.fn))

    def _compile(self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        tensors = _flat_tensors((args, kwargs))
        if any(t.device.type not in ("cpu", "cuda") for t in tensors):
            return self._eager(key, "an input is on a device other than the CPU and CUDA: only CPU and CUDA graphs "
                               "are compiled", args, kwargs)
        if is_grad_enabled() and any(t.requires_grad for t in tensors):
            return self._compile_training(key, args, kwargs, tensors)
        try:
            graph, result, results, effects = capture_with_effects(self.fn, args, kwargs,
                                                                   _pointwise_ops() if _can_fuse(tensors) else None)
        except GraphBreak as e:  # what the function changed was put back: it runs once, eagerly
            return self._eager(key, str(e), args, kwargs)
        if effects.used:
            return self._compile_step(key, tensors, graph, result, results, effects)
        if is_grad_enabled() and any(v.external is not None and v.external.requires_grad for v in graph.externals()):
            effects.undo.restore()  # the function runs again, captured with its backward
            return self._compile_training(key, args, kwargs, tensors)
        if any(t.grad_fn is not None for t in _flat_tensors(result)):  # (what a training capture does not cover)
            effects.undo.restore()
            return self._eager(key, "autograd is turned on inside the function (enable_grad() under no_grad, "
                               "requires_grad_() on a tensor it made): the graph runs without autograd", args, kwargs)
        fuse = _can_fuse(tensors)
        if not fuse:
            self._note("no C++ compiler (g++ or clang++ on PATH, or $CXX): the graph runs without fused kernels")
        program = Program(graph, results, fuse)
        eager_state = effects.undo.snapshot()
        effects.undo.restore()  # the check runs from the state at entry: a tensor written in place is written once
        if not (self._agrees(program, tensors, result) and self._same_effects(eager_state, effects.undo.arrays)):
            effects.undo.restore(eager_state)
            self.cache[key] = _EAGER
            self._note("the compiled graph did not reproduce the eager result (an operation outside the dispatcher?)")
            return result
        self.cache[key] = program
        if self.debug:
            print(f"G.compile: {self._name()}\n{program.graph}\nas Python:\n{program.source}", file=sys.stderr)
            if program.fused:
                print(f"fused kernels:\n{program.kernel_source()}", file=sys.stderr)
        return result

    def _compile_training(self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any], tensors: list[Tensor]) -> Any:
        """Capture forward and backward (Note [Capturing the backward] in training.py)."""
        fuse = _can_fuse(tensors)
        # recomputing saved values pays where the copies fuse into the backward's kernels: CPU graphs
        cpu = all(t.device.type == "cpu" for t in tensors)
        try:
            joint = capture_joint(self.fn, args, kwargs, recomputable(fusion_specs()) if fuse and cpu else None)
        except GraphBreak as e:
            return self._eager(key, str(e), args, kwargs)
        if not fuse:
            self._note("no C++ compiler (g++ or clang++ on PATH, or $CXX): the graph runs without fused kernels")
        program = TrainingProgram(joint, fuse)
        # the check runs from the state at entry: a tensor written in place (running statistics) is written once
        eager_state = joint.undo.snapshot()
        joint.undo.restore()
        if not (self._agrees_training(program, tensors, joint) and self._same_effects(eager_state, joint.undo.arrays)):
            joint.undo.restore(eager_state)
            self.cache[key] = _EAGER
            self._note("the compiled forward and backward did not reproduce eager autograd (an operation outside "
                       "the dispatcher?)")
            return joint.result
        self.cache[key] = program
        if self.debug:
            print(f"G.compile: {self._name()} forward\n{program.forward.graph}\nbackward\n{program.backward.graph}",
                  file=sys.stderr)
            if program.fused:
                print(f"fused kernels:\n{program.kernel_source()}", file=sys.stderr)
        return joint.result

    def _compile_step(self, key: Any, tensors: list[Tensor], graph: Graph, result: Any, results: dict[int, Any],
                      effects: StepEffects) -> Any:
        """A function that ran a backward or an optimizer step (Note [Capturing a training step]): the capture
        took the step eagerly; the program is checked by taking it again from the same state."""
        holder = self.cache.get(key)
        if not isinstance(holder, StepPrograms):
            holder = self.cache[key] = StepPrograms()
        fuse = _can_fuse(tensors)
        if not fuse:
            self._note("no C++ compiler (g++ or clang++ on PATH, or $CXX): the graph runs without fused kernels")
        eager_state = effects.undo.snapshot()
        try:
            program = StepProgram(graph, results, effects, fuse, result)
            effects.undo.restore()
            got = program.run(tensors)
            agrees = self._same(_flat_tensors(got), _flat_tensors(result)) and \
                self._same_effects(eager_state, effects.undo.arrays)
        except GraphBreak as e:
            effects.undo.restore(eager_state)
            return self._give_up(key, str(e), result)
        if not agrees:
            effects.undo.restore(eager_state)
            self.cache[key] = _EAGER
            self._note("the compiled training step did not reproduce the eager step (an operation outside the "
                       "dispatcher?)")
            return result
        holder.variants.append(program)
        if self.debug:
            print(f"G.compile: {self._name()} (training step)\n{program.graph}\nas Python:\n{program.program.source}",
                  file=sys.stderr)
            if program.fused:
                print(f"fused kernels:\n{program.kernel_source()}", file=sys.stderr)
        return got

    def _give_up(self, key: Any, reason: str, result: Any) -> Any:
        """The call already ran (eagerly, while captured): its result stands; later calls run eagerly."""
        if self.fullgraph:
            raise GraphBreak(f"G.compile(fullgraph=True): {self._name()} cannot be captured whole: {reason}")
        self.cache[key] = _EAGER
        self._note(f"runs eagerly: {reason}")
        return result

    @classmethod
    def _same_effects(cls, eager_state: Any, entry: dict[int, Any]) -> bool:
        """The tensors and `.grad`s the compiled step wrote agree with what the eager step left (Note [Checking
        a compiled step]); `entry`: the logged tensors' arrays at entry, by id."""
        arrays, grads, _, _ = eager_state
        noise = {id(t): np.abs(g.numpy(force=True)) for t, g in grads if g is not None and g.dtype.is_floating_point}
        top = max((float(g.max(initial=0.0)) for g in noise.values()), default=0.0)
        for t, a in arrays:
            if cls._same([Tensor._wrap(t._data, t.dtype)], [Tensor._wrap(a, t.dtype)]):
                continue
            g = noise.get(id(t))
            if g is None or g.shape != a.shape or id(t) not in entry:
                return False
            a, now, before = (Tensor._wrap(x, t.dtype).numpy(force=True) for x in (a, t._data, entry[id(t)][1]))
            moved = float(np.abs(a - before).max())  # the eager step's largest move
            off = np.abs(now - a) > 1e-4 * np.abs(a) + 1e-5 * (1.0 + float(np.abs(a).max(initial=0.0)))
            if np.any(off & (g > 1e-4 * top)) or np.any(off & (np.abs(now - a) > 4 * moved)):
                return False
        for t, g in grads:
            if (t._grad is None) != (g is None) or (g is not None and not cls._same([t._grad], [g])):
                return False
        return True

    @classmethod
    def _agrees_training(cls, program: TrainingProgram, tensors: list[Tensor], joint: Any) -> bool:
        from runtime.autograd.function import grad as autograd_grad

        got = program.run(tensors)
        if not cls._same(_flat_tensors(got), _flat_tensors(joint.result)):
            return False
        flat = _flat_tensors(got)
        targets = [tensors[i] for _, i in program.input_targets] + list(program.free_targets)
        grads = autograd_grad([flat[i] for i in program.diff_outputs], targets, joint.grad_outputs,
                              allow_unused=True)
        pairs = [(g, w) for g, w in zip(grads, joint.grads, strict=True)]
        if any((g is None) != (w is None) for g, w in pairs):
            return False
        return cls._same([g for g, _ in pairs if g is not None], [w for _, w in pairs if w is not None])

    def _note(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.add(reason)
            warnings.warn(f"G.compile: {self._name()}: {reason}", RuntimeWarning, stacklevel=4)

    @staticmethod
    def _agrees(program: Program, tensors: list[Tensor], eager: Any) -> bool:
        """One run of the program on the capture's inputs must give the eager result (a check that the graph
        holds every operation the function made)."""
        return CompiledFunction._same(_flat_tensors(program.run(tensors)), _flat_tensors(eager))

    @staticmethod
    def _same(got: list[Tensor], want: list[Tensor]) -> bool:
        if len(got) != len(want):
            return False
        for g, w in zip(got, want, strict=True):
            if tuple(g.shape) != tuple(w.shape) or g.dtype is not w.dtype:
                return False
            # a sum taken in another order may round a half type's result to the next value: two of its ulps
            rtol = {"float16": 2e-3, "bfloat16": 1.6e-2}.get(g.dtype.name, 1e-4)
            if g.dtype.np is None:  # bfloat16 (CUDA only) has no NumPy dtype: compared as float32
                g, w = g.float(), w.float()
            a, b = g.numpy(force=True), w.numpy(force=True)
            if a.dtype.kind == "f":
                # rounding of sums taken in another order (gradients of matmuls) scales with the values' size
                finite = np.abs(b[np.isfinite(b)])
                scale = float(finite.max()) if finite.size else 0.0
                if not np.allclose(a, b, rtol=rtol, atol=max(rtol / 10, 1e-5) * (1.0 + scale), equal_nan=True):
                    return False
            elif not np.array_equal(a, b):
                return False
        return True


def _pointwise_ops() -> Callable[[str], bool]:
    """The operators of the pointwise kernel specs, less the random ones (Note [Pointwise composites])."""
    specs = fusion_specs()
    return lambda name: name in specs and not any(word in name for word in RANDOM_WORDS)


def _can_fuse(tensors: list[Tensor]) -> bool:
    """CUDA graphs fuse whenever CUDA runs (NVRTC comes with CuPy; the emulated device has its compiler); CPU
    graphs need the system C++ compiler."""
    return any(t.device.type == "cuda" for t in tensors) or find_compiler() is not None


def compile(fn: Callable[..., Any] | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: Any = None, mode: str | None = None, options: dict[str, Any] | None = None,
            disable: bool = False, debug: bool = False) -> Any:
    """PyTorch's `torch.compile` signature: `G.compile(fn)` or `@G.compile(fullgraph=True)`."""
    def wrap(f: Callable[..., Any]) -> Any:
        if disable:
            return f
        if isinstance(f, CompiledFunction):
            return f
        # an nn.Module gives a Module again (nn sits beside this package in the layers: it is reached through
        # the API the generated package installed, at call time)
        nn = opcall.api.nn
        if isinstance(f, nn.OptimizedModule):
            f = f._orig_mod
        compiled = CompiledFunction(f, fullgraph=fullgraph, dynamic=dynamic, debug=debug)
        return nn.OptimizedModule(f, compiled) if isinstance(f, nn.Module) else compiled

    return wrap if fn is None else wrap(fn)
