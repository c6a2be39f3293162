"""`G.amp.autocast_mode`: autocast regions and the Autocast dispatch key's kernels (torch.amp.autocast_mode).

Note [Autocast in opgen]
Autocast is a dispatch key, `DispatchKey.Autocast`, above Autograd and Tracer as PyTorch's AutocastCPU and
AutocastCUDA are. While a region that can cast is open in a thread, the key is in that thread's include set,
and every operator of runtime/amp/policy.py (PyTorch's lists, in opgen's operator names) has a kernel there
(registered while a region casts: Note [Autocast kernels only while a region casts]); the others have none, so
their calls fall through the key at no cost. The kernel looks the operator up in the lists and, for each
device type with an open region, casts the call's *eligible* inputs (floating tensors of that device type,
never float64): `lower` operators (matmul, linear, conv, ...) to the region's dtype, `fp32` operators
(softmax, layer_norm, losses, exp/log/pow, sum/cumsum, norms, ...) to float32, `promote` operators (cat,
stack, addcmul, ...) to the widest floating dtype among them; then it calls the operator again below Autocast
with Autocast excluded, as PyTorch's autocast wrappers do, so the operators it is built from are not cast
again. A `whole` operator (one PyTorch runs as a single unlisted kernel, which opgen composes from listed
ones, as `mv` from matmul) is called with Autocast excluded, so it keeps its inputs' dtype. The casts are
ordinary `.to(dtype)` calls recorded by autograd, so gradients flow back to the parameters in the parameter's
dtype. An `.out` overload, an in-place form and a call given an explicit `dtype=` are not cast;
`binary_cross_entropy` on CUDA is refused, as in PyTorch (use binary_cross_entropy_with_logits). Other
operators pass through unchanged.

With `cache_enabled` (the default), the lower-precision copy of a float32 leaf that requires grad (a
parameter) is made once per outermost region and reused, as PyTorch's cast cache does; the cache is
emptied when the outermost region closes. `enabled=False` closes autocast for the nested block; nesting
restores the outer state on exit.

Where opgen has no lower-precision path autocast keeps its state but casts nothing: on the CPU the default
dtype bfloat16 (opgen's CPU has no bfloat16 tensors), on CUDA bfloat16 (its matmuls take none). The CPU
policy does apply with `autocast("cpu", dtype=float16)`, as it does in PyTorch. As PyTorch's, a region it
cannot honour warns and is disabled (`is_autocast_enabled` stays False) rather than raising: `autocast("cuda")`
on a machine without CUDA, and a dtype outside the device type's list (cpu: bfloat16, float16; cuda: float16,
bfloat16, float32).
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from typing import Any

from runtime import opcall
from runtime.amp.policy import CASTING_DTYPES, POLICY, CastPolicy
from runtime.device import Device
from runtime.dispatcher import CPU_BIT, CUDA_BIT, DispatchKey, Operator, dispatcher, exclude_keys, tls
from runtime.vocabulary import HALF_DTYPES

_DEFAULT_DTYPES = {"cuda": "float16", "cpu": "bfloat16"}
_SUPPORTED_DTYPES = {"cuda": (*HALF_DTYPES, "float32"), "cpu": ("bfloat16", "float16")}
AUTOCAST_BIT = 1 << DispatchKey.Autocast
_DEVICE_BITS = {"cuda": CUDA_BIT, "cpu": CPU_BIT}


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, Any] = {}
        self.cache_enabled = True
        self.depth = 0  # open autocast regions (enabled or not) in this thread
        # (id(source), dtype) -> (source, its cast copy): Note [Autocast in opgen]
        self.cache: dict[tuple[int, Any], tuple[Any, Any]] = {}
        # (device bit, policy per op name, target dtype) for each device type whose region casts now
        self.casting: tuple[tuple[int, dict[str, CastPolicy], Any], ...] = ()
        self.counted = False  # counted in _casting_threads (Note [Autocast kernels only while a region casts])


_state = _AutocastState()


def _dtype_named(name: str) -> Any:
    return getattr(opcall.api, name)


def is_autocast_available(device_type: str) -> bool:
    """Whether `autocast(device_type)` is accepted (cpu and cuda)."""
    return device_type in _DEFAULT_DTYPES


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for `device_type` (default "cuda") in the calling thread."""
    return _state.enabled.get(device_type, False)


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype autocast uses on `device_type`: the one set by set_autocast_dtype, else the device's default
    (RuntimeError for a device type autocast does not know)."""
    if device_type not in _DEFAULT_DTYPES:
        raise RuntimeError(f"unsupported autocast device_type '{device_type}'")
    return _state.dtype.get(device_type) or _dtype_named(_DEFAULT_DTYPES[device_type])


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for `device_type` in the calling thread."""
    _state.enabled[device_type] = bool(enabled)
    _sync()


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """The dtype autocast regions on `device_type` cast to, in the calling thread."""
    _state.dtype[device_type] = dtype
    _sync()


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions reuse the cast copies of parameters (Note [Autocast in opgen])."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn the cast cache of autocast regions on or off in the calling thread."""
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Forget the cast copies of parameters made in this thread's autocast regions."""
    _state.cache.clear()


# The per-device spellings PyTorch keeps beside the device_type forms.
def is_autocast_cpu_enabled() -> bool:
    """`is_autocast_enabled("cpu")`."""
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """`set_autocast_enabled("cpu", enabled)`."""
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> Any:
    """`get_autocast_dtype("cpu")`."""
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """`set_autocast_dtype("cpu", dtype)`."""
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> Any:
    """`get_autocast_dtype("cuda")`."""
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype: Any) -> None:
    """`set_autocast_dtype("cuda", dtype)`."""
    set_autocast_dtype("cuda", dtype)


def autocast_increment_nesting() -> int:
    """Count one more open autocast region in this thread; returns the new depth."""
    _state.depth += 1
    return _state.depth


def autocast_decrement_nesting() -> int:
    """Count one fewer open autocast region; at depth 0 the cast cache is emptied. Returns the new depth."""
    _state.depth = max(0, _state.depth - 1)
    if _state.depth == 0:
        _state.cache.clear()
    return _state.depth


_install_lock = threading.Lock()
_installed: list[Callable[[], None]] = []  # the handles of the registered Autocast kernels
_casting_threads = [0]  # threads with a casting region open: the kernels are registered while this is > 0
_kernels: list[tuple[str, Callable[..., Any]]] = []  # (op name, its Autocast kernel), made once
_LISTED = frozenset(name for table in POLICY.values() for name in table)


def _count_casting_thread(casting: bool) -> None:
    """Note [Autocast kernels only while a region casts]
    The Autocast kernels of the listed operators are registered when the first casting region opens in
    any thread and removed when the last one closes, so outside autocast every dispatch table is the one
    `opgen show` prints from the YAML (tests/codegen/test_show_matches_runtime.py). Registering or removing them
    rebuilds ~90 tables: ~0.7 ms each way, once per outermost region."""
    with _install_lock:
        if casting:
            _casting_threads[0] += 1
            if _casting_threads[0] == 1 and not _installed:
                if not _kernels:
                    _kernels.extend((op.name, _kernel_for(op)) for op in list(dispatcher.ops.values())
                                    if _info(op)[0] in _LISTED)
                _installed.extend(dispatcher.register(name, "Autocast", kernel) for name, kernel in _kernels)
        else:
            _casting_threads[0] -= 1
            if _casting_threads[0] == 0:
                for remove in _installed:
                    remove()
                _installed.clear()


def _kernel_for(op: Operator) -> Callable[..., Any]:
    def autocast_kernel(*args: Any) -> Any:
        return _autocast_call(op, list(args))

    autocast_kernel.__qualname__ = f"autocast[{op.name}]"
    return autocast_kernel


def _sync() -> None:
    """Put the Autocast key in this thread's include set exactly while some device type's region casts."""
    casting = []
    for device_type, on in _state.enabled.items():
        if not on:
            continue
        dtype = get_autocast_dtype(device_type)
        if dtype.name in CASTING_DTYPES[device_type]:
            casting.append((_DEVICE_BITS[device_type], POLICY[device_type], dtype))
    _state.casting = tuple(casting)
    if bool(casting) is not _state.counted:
        _count_casting_thread(bool(casting))
        _state.counted = bool(casting)
    include = tls.include
    wanted = include | AUTOCAST_BIT if casting else include & ~AUTOCAST_BIT
    if wanted != include:
        tls.include = wanted


# -- the Autocast fallback ---------------------------------------------------------------------------------
_op_info: dict[str, tuple[str | None, int | None]] = {}  # op name -> (base name or None if never cast, dtype arg)


def _info(op: Operator) -> tuple[str | None, int | None]:
    info = _op_info.get(op.name)
    if info is None:
        base, _, overload = op.name.partition(".")
        never = overload == "out" or overload.endswith("_out") or base.endswith("_")
        info = _op_info[op.name] = (None if never else base, _dtype_position(op.schema))
    return info


def _dtype_position(schema: str) -> int | None:
    """Index of the argument named `dtype` in `schema`'s argument list (`*` not counted), or None."""
    depth, names, current = 0, [], []
    for ch in schema[schema.index("(") + 1:]:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
            if depth < 0:  # the argument list's closing parenthesis
                ch = ","
        if ch == "," and depth <= 0:
            arg = "".join(current).strip()
            current = []
            if arg and arg != "*":
                names.append(arg.split("=")[0].split()[-1])
            if depth < 0:
                break
            continue
        current.append(ch)
    return names.index("dtype") if "dtype" in names else None


def _eligible(t: Any, bit: int) -> bool:
    return getattr(t, "_keys", 0) & bit and t.dtype.is_floating_point and t.dtype.name != "float64"


def _cast(t: Any, dtype: Any) -> Any:
    if t.dtype is dtype:
        return t
    G = opcall.api
    if (_state.cache_enabled and t._grad_fn is None and t.requires_grad and t.dtype is G.float32
            and dtype is not G.float32):
        key = (id(t), dtype)
        hit = _state.cache.get(key)
        if hit is not None and hit[0] is t:
            return hit[1]
        copy = t.to(dtype)
        _state.cache[key] = (t, copy)
        return copy
    return t.to(dtype)


def _widest(values: list[Any], bit: int, lower: Any) -> Any:
    G = opcall.api
    widest = lower
    for t in values:
        if getattr(t, "_keys", 0) & bit and t.dtype.is_floating_point:
            if widest is G.float64 or t.dtype is G.float64:
                widest = G.float64
            elif t.dtype is not widest:
                widest = G.float32
    return widest


def _flat(values: list[Any]) -> list[Any]:
    return [t for v in values for t in (v if isinstance(v, list | tuple) else (v,))]


def _cast_values(base: str, values: list[Any]) -> tuple[list[Any], bool]:
    """`values` (arguments: tensors, lists of tensors, anything else) with the casts the open regions'
    policies make for operator `base` (Note [Autocast in opgen]), and whether some region's policy lists the
    operator for a device type among its tensors (it then runs with autocast off beneath it, as PyTorch's
    autocast wrappers do)."""
    listed = False
    for bit, policy, lower in _state.casting:
        kind = policy.get(base)
        if kind is None:
            continue
        tensors = _flat(values)
        if not any(getattr(t, "_keys", 0) & bit for t in tensors):
            continue
        listed = True
        if kind is CastPolicy.whole:
            continue
        if kind is CastPolicy.refuse:
            raise RuntimeError(f"{base} is unsafe to autocast: its result may not be representable in "
                               f"{lower.name}; use the _with_logits form, which is safe to autocast, or "
                               f"run it outside the region on float32 inputs")
        if kind is CastPolicy.lower:
            target = lower
        elif kind is CastPolicy.fp32:
            target = opcall.api.float32
        else:
            target = _widest(tensors, bit, lower)
        if not any(_eligible(t, bit) and t.dtype is not target for t in tensors):
            continue
        values = [type(v)(_cast(t, target) if _eligible(t, bit) else t for t in v) if isinstance(v, list | tuple)
                  else _cast(v, target) if _eligible(v, bit) else v for v in values]
    return values, listed


def _autocast_call(op: Operator, args: list[Any]) -> Any:
    base, dtype_at = _info(op)
    if base is not None and (dtype_at is None or dtype_at >= len(args) or args[dtype_at] is None):
        positions = [i for i in op.tensor_positions if i < len(args)]
        cast, listed = _cast_values(base, [args[i] for i in positions])
        if listed:
            for i, v in zip(positions, cast, strict=True):
                args[i] = v
            with exclude_keys("Autocast"):
                return op.redispatch_below(DispatchKey.Autocast, *args)
    return op.redispatch_below(DispatchKey.Autocast, *args)


def autocast_function(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for a Python function that PyTorch autocasts as one operator but opgen composes from
    several (`F.conv_transpose2d` adds its bias after the convolution): inside a region that casts, its
    tensor arguments get the policy of `name` (runtime/amp/policy.py) and it runs with autocast off."""
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            if not _state.casting:
                return fn(*args, **kwargs)
            keys = list(kwargs)
            cast, listed = _cast_values(name, [*args, *kwargs.values()])
            if not listed:
                return fn(*args, **kwargs)
            with exclude_keys("Autocast"):
                return fn(*cast[:len(args)], **dict(zip(keys, cast[len(args):], strict=True)))
        return run
    return wrap


class autocast:
    """A region (or decorated function) run under autocast on `device_type` (Note [Autocast in opgen])."""

    def __init__(self, device_type: str | Device = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if isinstance(device_type, Device):
            device_type = device_type.type
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else get_autocast_dtype(device_type)
        enabled = bool(enabled)
        # as PyTorch's: a region it cannot honour warns and is disabled, rather than raising
        if enabled and device_type == "cuda" and not opcall.api.cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling", stacklevel=2)
            enabled = False
        supported = _SUPPORTED_DTYPES[device_type]
        if enabled and getattr(self.fast_dtype, "name", None) not in supported:
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{device_type.upper()} Autocast only supports dtypes of "
                          f"{', '.join(supported)} currently.", stacklevel=2)
            enabled = False
        self._enabled = enabled
        self._cache_enabled = cache_enabled
        self._saved: list[tuple[bool, Any, bool]] = []

    def __enter__(self) -> autocast:
        self._saved.append((is_autocast_enabled(self.device), _state.dtype.get(self.device),
                            _state.cache_enabled))
        autocast_increment_nesting()
        _state.enabled[self.device] = self._enabled
        _state.dtype[self.device] = self.fast_dtype
        if self._cache_enabled is not None:
            _state.cache_enabled = self._cache_enabled
        _sync()
        return self

    def __exit__(self, *exc: object) -> None:
        enabled, dtype, cache = self._saved.pop()
        autocast_decrement_nesting()
        _state.enabled[self.device] = enabled
        _state.dtype[self.device] = dtype
        _state.cache_enabled = cache
        _sync()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return run


def _cast_inputs(value: Any, device_type: str, dtype: Any) -> Any:
    if isinstance(value, list | tuple):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, device_type, dtype) for k, v in value.items()}
    if _eligible(value, _DEVICE_BITS[device_type]):
        return value.to(dtype)
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str = "cuda",
               cast_inputs: Any = None) -> Any:
    """Decorator for a custom Function's forward. With `cast_inputs`, inside an autocast region on
    `device_type` the floating tensors of that device type among the arguments are cast to `cast_inputs` and
    the forward runs with autocast off; without it, the forward runs in the region as it is and the region's
    state is kept on `ctx` for `custom_bwd`."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def run(*args: Any, **kwargs: Any) -> Any:
        on = is_autocast_enabled(device_type)
        ctx = args[0] if args else None
        if ctx is not None:
            try:
                ctx._fwd_used_autocast = on if cast_inputs is None else False
                ctx._dtype = get_autocast_dtype(device_type)
            except AttributeError:
                pass
        if cast_inputs is None or not on:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_inputs(args, device_type, cast_inputs),
                       **_cast_inputs(kwargs, device_type, cast_inputs))
    return run


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str = "cuda") -> Any:
    """Decorator for a custom Function's backward: runs it with the autocast state its `custom_fwd` forward
    ran with."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def run(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        used = getattr(ctx, "_fwd_used_autocast", None)
        if used is None:
            return bwd(ctx, *args, **kwargs)
        with autocast(device_type, dtype=getattr(ctx, "_dtype", None), enabled=used):
            return bwd(ctx, *args, **kwargs)
    return run


__all__ = ["autocast", "autocast_decrement_nesting", "autocast_function", "autocast_increment_nesting",
           "clear_autocast_cache", "custom_bwd", "custom_fwd", "get_autocast_cpu_dtype", "get_autocast_dtype",
           "get_autocast_gpu_dtype", "is_autocast_available", "is_autocast_cache_enabled", "is_autocast_cpu_enabled",
           "is_autocast_enabled", "set_autocast_cache_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
           "set_autocast_dtype", "set_autocast_enabled", "set_autocast_gpu_dtype"]
