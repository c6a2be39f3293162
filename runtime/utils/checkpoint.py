"""`G.utils.checkpoint`: activation checkpointing (torch.utils.checkpoint).

Note [Activation checkpointing]
`checkpoint(fn, *args)` gives fn's outputs but keeps none of the tensors fn's operations save for backward;
backward recomputes them. The non-reentrant form (`use_reentrant=False`, PyTorch's recommendation) runs fn
with grad on under saved-tensor hooks whose pack hook keeps only a running index; the first unpack runs fn
again on detached copies of the inputs (same requires_grad) under hooks that collect what it saves, with the
random state and the autocast state of the first run, and each later unpack hands back the tensor of its index
(the recomputation saves the same tensors in the same order, fn being deterministic given its inputs and its
random state). The graph is the first run's, so gradients reach fn's parameters and inputs as without
checkpointing, whether or not the inputs require grad. The reentrant form (`use_reentrant=True`) is an
autograd.Function: forward runs fn under no_grad, backward runs it again with grad on and back-propagates
through that second graph; as PyTorch's, it needs an input that requires grad for fn's parameters to get one.
The CPU random state is preserved (`preserve_rng_state`); opgen's CUDA generators cannot be read back, so a
checkpointed function that draws random numbers on CUDA (dropout) draws new ones when recomputed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from runtime import opcall
from runtime.amp import autocast, get_autocast_dtype, is_autocast_enabled
from runtime.autograd.function import Function
from runtime.autograd.graph import saved_tensors_hooks


def _is_tensor(value: Any) -> bool:
    return isinstance(value, opcall.api.Tensor)


class _RandomState:
    """The CPU random state at the first run, put back for the recomputation without disturbing the stream
    the program goes on with (opgen's CUDA generators cannot be read back: Note [Activation checkpointing])."""

    def __init__(self, preserve: bool) -> None:
        self.state = opcall.api.get_rng_state() if preserve else None

    @contextmanager
    def restored(self) -> Iterator[None]:
        if self.state is None:
            yield
            return
        G = opcall.api
        with G.random.fork_rng(devices=[]):
            G.set_rng_state(self.state)
            yield


def _autocast_state() -> list[tuple[str, Any]]:
    return [(d, get_autocast_dtype(d)) for d in ("cpu", "cuda") if is_autocast_enabled(d)]


@contextmanager
def _in_autocast(state: list[tuple[str, Any]]) -> Iterator[None]:
    with ExitStack() as stack:
        for device_type, dtype in state:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                stack.enter_context(autocast(device_type, dtype=dtype))
        yield


def _detached(args: Sequence[Any]) -> list[Any]:
    return [a.detach().requires_grad_(a.requires_grad) if _is_tensor(a) else a for a in args]


def _non_reentrant(function: Callable[..., Any], preserve_rng_state: bool, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Any:
    G = opcall.api
    rng = _RandomState(preserve_rng_state)
    amp_state = _autocast_state()
    count = [0]
    recomputed: list[Any] = []
    done = [False]

    def pack(tensor: Any) -> int:
        count[0] += 1
        return count[0] - 1

    def recompute() -> None:
        def keep(tensor: Any) -> Any:
            recomputed.append(tensor)
            return tensor

        inputs = _detached(args)
        with rng.restored(), G.enable_grad(), _in_autocast(amp_state), saved_tensors_hooks(keep, lambda t: t):
            function(*inputs, **kwargs)
        done[0] = True

    def unpack(index: int) -> Any:
        if not done[0]:
            recompute()
        if index >= len(recomputed):
            raise RuntimeError("torch.utils.checkpoint: the recomputation saved fewer tensors than the first run "
                               "(the checkpointed function must compute the same operations when run again)")
        return recomputed[index]

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


class _ReentrantCheckpoint(Function):
    @staticmethod
    def forward(ctx: Any, function: Callable[..., Any], preserve_rng_state: bool, *args: Any) -> Any:
        G = opcall.api
        ctx.function = function
        ctx.rng = _RandomState(preserve_rng_state)
        ctx.amp_state = _autocast_state()
        ctx.tensor_at = [i for i, a in enumerate(args) if _is_tensor(a)]
        ctx.others = list(args)
        for i in ctx.tensor_at:
            ctx.others[i] = None
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_at))
        with G.no_grad():
            return function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        G = opcall.api
        inputs = list(ctx.others)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors, strict=True):
            inputs[i] = t
        inputs = _detached(inputs)
        with ctx.rng.restored(), G.enable_grad(), _in_autocast(ctx.amp_state):
            outputs = ctx.function(*inputs)
        if _is_tensor(outputs):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                 if _is_tensor(o) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        G.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *(a.grad if _is_tensor(a) else None for a in inputs))


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] | None = None, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)`, keeping none of the tensors it saves for backward: backward recomputes
    them (Note [Activation checkpointing]). Pass `use_reentrant` explicitly, as PyTorch asks; without it the
    reentrant form runs, with a warning."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly; "
                      "use_reentrant=False is recommended", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not None or kwargs:
            raise ValueError("Passing `context_fn` or keyword arguments is only supported when use_reentrant=False.")
        if not any(_is_tensor(a) and a.requires_grad for a in args) and opcall.api.is_grad_enabled():
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        return _ReentrantCheckpoint.apply(function, preserve_rng_state, *args)
    if context_fn is not None:
        raise NotImplementedError("torch.utils.checkpoint: context_fn is not supported by opgen")
    return _non_reentrant(function, preserve_rng_state, args, kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run the modules of `functions` (a Sequential or a list) in `segments` chunks, checkpointing every
    chunk but the last."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly; use_reentrant=False is recommended", stacklevel=2)
        use_reentrant = True
    modules = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments <= 0:
        raise ValueError(f"checkpoint_sequential: segments must be positive, got {segments}")
    size = len(modules) // segments

    def run(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for module in modules[start:end + 1]:
                x = module(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(modules) - 1)(input)


__all__ = ["checkpoint", "checkpoint_sequential"]
