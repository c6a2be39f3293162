"""The dispatcher: a per-operator table from dispatch key sets to kernels.

Note [Dispatch key sets as bitmasks]
A dispatch key is a bit; a key set is an int. Every tensor carries `_keys`: its backend bit (CPU or
CUDA), plus the Autograd bit exactly when it requires grad (so an op on tensors that need no grad
never enters autograd code). A call computes

    keys = (union of the tensor arguments' _keys | tls.include) & tls.mask

(`tls.mask` is the complement of the thread-local exclude set) and calls `op.table[keys]`. The table
holds one entry per possible key set, precomputed whenever a kernel is registered. The thread-local
part is precomputed too: `tls.remap[k]` is `(k | include) & mask` for every k, rebuilt whenever this
thread's include or mask changes, so the hot path is `op.table[remap[a._keys | b._keys]]`: an OR
and two list indexes (Note [Skipping the thread-local lookup] says where `remap` comes from).
An entry is the kernel of the highest key in the set, resolved as: a kernel registered for that key,
then an alias kernel (CompositeExplicitAutograd for backend keys, then CompositeImplicitAutograd for
backend keys and Autograd), then the key's fallback; a key with none of these falls through to the
next lower key (BackendSelect and Autograd do, so an op with no kernel there goes straight to its
backend). A set with no kernel at all gets a stub that raises a clear error.

Note [Skipping the thread-local lookup]
Reading a threading.local attribute costs about as much as the rest of a dispatch, and almost always
every thread is in the default state (no no_grad, no include/exclude). So `shared.remap` is the default
remap table while every thread is in the default state and None while any thread is not; generated
code dispatches with `(shared.remap or tls.remap)[keys]`. It is correct whatever the interleaving: a
thread whose own state is not the default counts itself in `shared.custom_threads` before it
dispatches again, so it never sees the default table; a thread that sees the default table is itself
in the default state, for which that table is right. A thread that ends with a non-default state
(`set_grad_enabled(False)` never undone) only leaves every thread on the thread-local path.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

from runtime.first_call import ModuleOnFirstCall
from runtime.vocabulary import ALIAS_KEYS, KEYS_BY_PRIORITY, DispatchKey, resolve

Kernel = Callable[..., Any]


NUM_KEYS = len(DispatchKey)
ALL_KEYS = (1 << NUM_KEYS) - 1
META_BIT = 1 << DispatchKey.Meta
CPU_BIT = 1 << DispatchKey.CPU
CUDA_BIT = 1 << DispatchKey.CUDA
BACKEND_SELECT_BIT = 1 << DispatchKey.BackendSelect
AUTOGRAD_BIT = 1 << DispatchKey.Autograd
BELOW_AUTOGRAD = AUTOGRAD_BIT - 1
BACKEND_BITS = META_BIT | CPU_BIT | CUDA_BIT


def _remap(include: int, mask: int) -> list[int]:
    return [(keys | include) & mask for keys in range(1 << NUM_KEYS)]


_DEFAULT_INCLUDE = BACKEND_SELECT_BIT
DEFAULT_REMAP = _remap(_DEFAULT_INCLUDE, ALL_KEYS)
# (include, mask) -> remap table, shared by all threads
_remaps: dict[tuple[int, int], list[int]] = {(_DEFAULT_INCLUDE, ALL_KEYS): DEFAULT_REMAP}


class _SharedState:
    """What every thread can read without a thread-local lookup (Note [Skipping the thread-local lookup])."""

    __slots__ = ("remap", "custom_threads", "lock")

    def __init__(self) -> None:
        self.remap: list[int] | None = DEFAULT_REMAP  # None while some thread is not in the default state
        self.custom_threads = 0
        self.lock = threading.Lock()


shared = _SharedState()


class _LocalState(threading.local):
    """Thread-local include set and exclude mask, and the key remapping they define
    (see Note [Dispatch key sets as bitmasks]). Assigning `include` or `mask` rebuilds `remap`."""

    remap: list[int] = DEFAULT_REMAP
    _include: int = _DEFAULT_INCLUDE
    _mask: int = ALL_KEYS
    _custom: bool = False  # counted in shared.custom_threads

    @property
    def include(self) -> int:
        return self._include

    @include.setter
    def include(self, value: int) -> None:
        self._include = value
        self._update()

    @property
    def mask(self) -> int:
        return self._mask

    @mask.setter
    def mask(self, value: int) -> None:
        self._mask = value
        self._update()

    def _update(self) -> None:
        key = (self._include, self._mask)
        remap = _remaps.get(key)
        if remap is None:
            remap = _remaps[key] = _remap(*key)  # at most 2**(2 * NUM_KEYS) entries, few in practice
        self.remap = remap
        custom = remap is not DEFAULT_REMAP
        if custom is not self._custom:
            # Note [Why the custom-thread count takes a lock]
            # Invariant: `shared.remap` is DEFAULT_REMAP only while no thread is in a custom state, since every
            # thread's generated calls read `shared.remap or tls.remap`. Writing None is always safe, but
            # going back to DEFAULT_REMAP is "if the count is 0, publish": a read then a write, which a
            # thread switch can split (this thread reads 0, another enters no_grad and publishes None and
            # runs ops, then this thread publishes DEFAULT_REMAP: the other thread's no_grad is ignored).
            # Python has no compare-and-swap to close that window, so the transition takes the lock. It
            # runs only when this thread's state flips between default and custom (a no_grad block and a
            # backward: four times a training step), measured at ~0.1-0.5 us each: under 0.5% of a step.
            with shared.lock:
                shared.custom_threads += 1 if custom else -1
                shared.remap = DEFAULT_REMAP if shared.custom_threads == 0 else None
            self._custom = custom


tls = _LocalState()


def current_remap() -> list[int]:
    """This thread's remap table (what generated code reads as `shared.remap or tls.remap`)."""
    return shared.remap or tls.remap


def dispatch_key(keys: int) -> int:
    """The table index of a call whose tensor arguments carry `keys`: this thread's include set and mask
    applied (Note [Skipping the thread-local lookup]). The one definition of the key-set step: the runtime's
    fast paths call it and the generated op functions carry its expression (codegen/runtime_reads.py)."""
    return (shared.remap or tls.remap)[keys]


class DispatchError(NotImplementedError):
    """No kernel for an operator and dispatch key (`operator` and `key` name them where known: the key's
    name, or None for an empty key set)."""

    def __init__(self, message: str, *, operator: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.operator = operator
        self.key = key


class EmptyTensorListError(DispatchError, ValueError):
    """A call whose only tensor argument is an empty Tensor[] (`cat([])`): PyTorch raises ValueError for
    some ops and RuntimeError for others; this is both."""


class BoxedFallback:
    """A fallback for a whole key: called as `fn(op, args)` with the op and its arguments as a list."""

    def __init__(self, fn: Callable[[Operator, list[Any]], Any]) -> None:
        self.fn = fn

    def bind(self, op: Operator) -> Kernel:
        fn = self.fn

        def boxed(*args: Any) -> Any:
            return fn(op, list(args))

        boxed.__qualname__ = f"boxed_fallback[{op.name}]"
        return boxed


class Operator:
    """One operator's registrations and its precomputed dispatch table."""

    __slots__ = ("name", "schema", "tensor_positions", "kernels", "stacks", "table", "mixed_devices",
                 "scalar_positions", "_dispatcher", "_stubs")

    def __init__(self, dispatcher: Dispatcher, name: str, schema: str, tensor_positions: tuple[int, ...],
                 mixed_devices: bool = False, scalar_positions: tuple[int, ...] = (), build: bool = True) -> None:
        self.name = name
        self.schema = schema
        self.tensor_positions = tensor_positions  # indices of Tensor / Tensor? / Tensor[] arguments
        self.kernels: dict[str, Kernel] = {}      # key name (runtime or alias key) -> kernel
        self.stacks: dict[str, list[list[Any]]] = {}  # key name -> registrations: Note [Registration stacks]
        self.table: list[Kernel] = []
        # `device_check: NoCheck` in the YAML: the op takes tensors of several devices (Note [Cross-device
        # copies] in runtime/kernels/copy.py; index ops take CPU index tensors for a CUDA `self`, as PyTorch's)
        self.mixed_devices = mixed_devices
        # the tensor arguments that may be 0-dim CPU tensors beside another device's (Note [CPU scalars
        # beside device tensors]); empty for ops that take no such scalars
        self.scalar_positions = scalar_positions
        self._dispatcher = dispatcher
        self._stubs: dict[int, Kernel] = {}  # choice index -> its error stub, made once (see _missing)
        if build:
            self.recompute()

    def __repr__(self) -> str:
        return f"Operator({self.name})"

    # -- calls ---------------------------------------------------------------------------------
    def key_set(self, args: Sequence[Any]) -> int:
        """The dispatch key set of a call with these arguments (slow path; generated code inlines it)."""
        keys = 0
        for i in self.tensor_positions:
            if i < len(args):
                keys |= keys_of(args[i])
        return dispatch_key(keys)

    def call(self, *args: Any) -> Any:
        """Call with all arguments positional in schema order (boxed; the generated API is faster)."""
        return self.table[self.key_set(args)](*args)

    def redispatch(self, keys: int, *args: Any) -> Any:
        """Call the kernel for an explicit key set (e.g. the caller's keys minus its own key)."""
        return self.table[keys & ALL_KEYS](*args)

    def redispatch_below(self, key: DispatchKey, *args: Any) -> Any:
        """Call again with `key` and every key above it removed."""
        return self.table[self.key_set(args) & ((1 << key) - 1)](*args)

    def redispatch_below_autograd(self, *args: Any) -> Any:
        return self.table[self.key_set(args) & BELOW_AUTOGRAD](*args)

    # -- table -----------------------------------------------------------------------------------
    def resolve(self, key: DispatchKey) -> tuple[Kernel | None, str]:
        """The kernel serving `key` and where it comes from: 'kernel', an alias key, 'fallback',
        'fallthrough' or 'missing' (the rule is `runtime.vocabulary.resolve`, which `opgen show` prints)."""
        fallback = self._dispatcher.fallbacks.get(key)
        name, how = resolve(key, self.kernels, fallback is not None)
        if name is not None:
            return self.kernels[name], how
        return (fallback.bind(self) if fallback is not None else None), how

    def base(self, key: str) -> Kernel | None:
        """The base registration at `key`: the one below those made with `register` (Note [Registration
        stacks])."""
        stack = self.stacks.get(key)
        return self.kernels.get(key) if stack is None else stack[0][0]

    def set_base(self, key: str, kernel: Kernel) -> None:
        """Make `kernel` the base registration at `key`, under those made with `register` (the caller holds
        the dispatcher's lock and recomputes the table)."""
        stack = self.stacks.get(key)
        if stack is None:
            self.kernels[key] = kernel
        else:
            stack[0][0] = kernel
            self.kernels[key] = stack[-1][0]

    def recompute(self) -> None:
        """Rebuild the table from the registrations (Note [Table plans])."""
        fallbacks, guards = self._dispatcher.fallbacks, self._dispatcher.guards
        names, pick, stubs = _plan(frozenset(self.kernels), frozenset(fallbacks), self.mixed_devices,
                                   bool(self.scalar_positions))
        kernels = self.kernels
        # choices[i] for i < NUM_KEYS: the kernel serving key i; then one error stub per key, then the stub
        # of an empty key set, then the device-mismatch error (Note [Table plans])
        choices: list[Kernel | None] = [None] * _N_CHOICES
        for key, name, how in names:
            if name is not None:
                guard = guards.get((key, how)) if guards else None
                choices[key] = kernels[name] if guard is None else guard(self, kernels[name])
            elif how == "fallback":
                choices[key] = fallbacks[_KEYS[key]].bind(self)
        made = self._stubs
        for i in stubs:
            stub = made.get(i)
            if stub is None:
                stub = made[i] = self._missing(_KEYS[i - NUM_KEYS] if i < _MISSING_NONE else None)
            choices[i] = stub
        choices[_MISMATCH] = self._moving_cpu_scalars if self.scalar_positions else self._device_mismatch
        self.table[:] = pick(choices)  # in place: generated modules hold the list itself

    def _moving_cpu_scalars(self, *args: Any) -> Any:
        """Note [CPU scalars beside device tensors]
        As in PyTorch, a pointwise op takes a 0-dim CPU tensor among CUDA tensors (`cuda_x * tensor(2.0)`):
        the scalar is an input like a Python number. Such a call's key set holds both backends; the table
        plan sends it here before any key's kernel (autograd included), and the call is made again with
        each such scalar copied to the device with `.to()`, so autograd records the copy and the scalar's
        gradient comes back to the CPU. Only inputs move (`scalar_positions`: the op's tensor arguments that
        it does not write): writing into a CPU scalar, or any CPU tensor with dimensions, stays the device
        mismatch it is in PyTorch."""
        device = next((args[i].device for i in self.tensor_positions  # a CUDA or a meta tensor's device
                       if i < len(args) and getattr(args[i], "_keys", 0) & (CUDA_BIT | META_BIT)), None)
        moved = list(args)
        for i in self.scalar_positions:
            v = moved[i] if i < len(moved) else None
            if getattr(v, "_keys", 0) & CPU_BIT and v.dim() == 0:
                moved[i] = v.to(device)
        keys = self.key_set(moved)
        if device is None or _several_devices(keys):
            return self._device_mismatch(*args)
        return self.table[keys](*moved)

    def _device_mismatch(self, *args: Any) -> Any:
        devices = []
        for i in self.tensor_positions:
            values = args[i] if isinstance(args[i], list | tuple) else [args[i]]
            for v in values:
                device = str(getattr(v, "device", ""))
                if getattr(v, "_keys", 0) and device not in devices:
                    devices.append(device)
        found = " and ".join(devices[:2])
        raise RuntimeError(f"{self.name}: expected all tensors to be on the same device, but found at least "
                           f"two devices, {found}")

    def _missing(self, key: DispatchKey | None) -> Kernel:
        # the message is built when raised, from the kernels registered then: so one stub per key serves
        # every recompute of the table (~2,600 stubs are made at import)
        def missing(*args: Any) -> Any:
            name = self.name
            if key is None and any(isinstance(args[i], list | tuple) and not args[i]
                                   for i in self.tensor_positions if i < len(args)):
                raise EmptyTensorListError(f"{name}(): expected a non-empty list of Tensors")
            asked = key.name if key is not None else "an empty key set (no tensor or device argument)"
            registered = ", ".join(self.kernels) or "none"
            raise DispatchError(f"no kernel for operator '{name}' and dispatch key {asked}; "
                                f"keys with a kernel: {registered}", operator=name,
                                key=key.name if key is not None else None)

        return missing

    def dump(self) -> str:
        """The dispatch table, one line per runtime key, and the registered kernels."""
        lines = [f"{self.name}: {self.schema}", "registered:"]
        for key, kernel in self.kernels.items():
            lines.append(f"  {key:<28} {_kernel_name(kernel)}")
        lines.append("computed table:")
        for key in KEYS_BY_PRIORITY:
            kernel, how = self.resolve(key)
            shown = _kernel_name(kernel) if kernel is not None else "-"
            lines.append(f"  {key.name:<28} {shown} [{how}]")
        return "\n".join(lines)


_KEYS_HIGH_FIRST = tuple((key, 1 << key) for key in KEYS_BY_PRIORITY)  # (enum iteration is slow)
_KEYS = tuple(DispatchKey)  # by value


_MISSING_NONE = 2 * NUM_KEYS  # choice index of the error stub for an empty key set
_MISMATCH = _MISSING_NONE + 1   # choice index of the device-mismatch error
_N_CHOICES = _MISMATCH + 1
_Plan = tuple[tuple[tuple[int, str | None, str], ...], Callable[[list[Any]], tuple[Any, ...]], tuple[int, ...]]
_plans: dict[tuple[frozenset[str], frozenset[DispatchKey], bool, bool], _Plan] = {}


def _plan(registered: frozenset[str], fallback_keys: frozenset[DispatchKey], mixed_devices: bool,
          cpu_scalars: bool = False) -> _Plan:
    """Note [Table plans]
    An operator's table depends on its kernels only through which key names have a kernel, which keys
    have a fallback and whether it takes several devices; the ~470 operators share a handful of such
    shapes. So the rule (`runtime.vocabulary.resolve` per key, then the highest key of each key set) runs
    once per shape, giving a plan: `(key, registered name or None, how)` per runtime key, and for each of
    the 2**NUM_KEYS key sets the index of its entry among an operator's choices (the kernel serving key i
    at i; the error stub of key i at NUM_KEYS + i; then the stub of an empty key set and the device-mismatch
    error), plus the stub indices the plan uses. `Operator.recompute` fills the choices from its own
    kernels and lists the table from the plan, so registering at import costs no rule evaluation per op.
    The plan is kept as an `operator.itemgetter` of those indices: the table is picked from the choices
    in one C call (~480 tables are built at import, once each: generated ops are declared `deferred`)."""
    cache_key = (registered, fallback_keys, mixed_devices, cpu_scalars)
    cached = _plans.get(cache_key)
    if cached is not None:
        return cached
    names = tuple((int(k), *resolve(k, registered, k in fallback_keys)) for k in _KEYS)
    plan: list[int] = []
    for keys in range(1 << NUM_KEYS):
        choice = _MISSING_NONE
        if cpu_scalars and _several_devices(keys):
            plan.append(_MISMATCH)  # before any key (Note [CPU scalars beside device tensors])
            continue
        for key, bit in _KEYS_HIGH_FIRST:
            if keys & bit:
                if bit & BACKEND_BITS and _several_devices(keys) and not mixed_devices:
                    choice = _MISMATCH
                    break
                if bit & BACKEND_BITS and keys & META_BIT:  # an op taking several devices, one of them meta
                    key = DispatchKey.Meta  # (CPU index tensors of a meta tensor): Note [Meta tensors]
                _, name, how = names[key]
                if name is not None or how == "fallback":
                    choice = key
                    break
                if how == "missing":
                    choice = NUM_KEYS + key
                    break
        plan.append(choice)
    stubs = tuple(sorted({i for i in plan if NUM_KEYS <= i <= _MISSING_NONE}))
    cached = _plans[cache_key] = (names, itemgetter(*plan), stubs)
    return cached


def _several_devices(keys: int) -> bool:
    backends = keys & BACKEND_BITS
    return backends & (backends - 1) != 0


def _kernel_name(kernel: Kernel) -> str:
    module = getattr(kernel, "__module__", None) or ""
    name = getattr(kernel, "__qualname__", None) or repr(kernel)
    return f"{module}.{name}" if module else name


class Dispatcher:
    """All operators and the per-key fallbacks."""

    def __init__(self) -> None:
        self.ops: dict[str, Operator] = {}
        self.fallbacks: dict[DispatchKey, BoxedFallback] = {}
        self._fallback_stacks: dict[DispatchKey, list[list[Any]]] = {}
        # (runtime key, alias name) -> guard: Note [Backend guards on alias kernels]
        self.guards: dict[tuple[int, str], Callable[[Operator, Kernel], Kernel]] = {}
        self._unbuilt: list[Operator] = []  # declared with deferred=True, table not built yet
        self._loaders: dict[str, ModuleOnFirstCall] = {}  # module -> its kernels' stand-ins (on_first_call)
        self._lock = threading.Lock()

    def declare(self, name: str, schema: str, tensor_positions: tuple[int, ...] = (),
                mixed_devices: bool = False, scalar_positions: tuple[int, ...] = (),
                deferred: bool = False) -> Operator:
        """Declare an operator (idempotent: re-declaring returns the existing one). `deferred`: its table is
        built by the next `register_all`, which is about to register its kernels (generated/_ops.py declares
        every op and generated/_registrations.py registers them next: each table is built once, not twice)."""
        with self._lock:
            op = self.ops.get(name)
            if op is None:
                op = self.ops[name] = Operator(self, name, schema, tuple(tensor_positions), mixed_devices,
                                               tuple(scalar_positions), build=not deferred)
                if deferred:
                    self._unbuilt.append(op)
            return op

    def find(self, name: str) -> Operator:
        try:
            return self.ops[name]
        except KeyError:
            raise KeyError(f"no operator named '{name}'") from None

    def register(self, name: str, key: str, kernel: Kernel) -> Callable[[], None]:
        """Register `kernel` for operator `name` at `key` on top of what is there; returns a function that
        removes exactly this registration (Note [Registration stacks])."""
        if key not in DispatchKey.__members__ and key not in ALIAS_KEYS:
            raise ValueError(f"unknown dispatch key '{key}'; known keys: "
                             f"{', '.join([*DispatchKey.__members__, *ALIAS_KEYS])}")
        op = self.find(name)
        return _push(self._lock, op.stacks, key, op.kernels, kernel, op.recompute)

    def register_all(self, entries: Sequence[tuple[str, str, Kernel]]) -> None:
        """Register many (op name, key, kernel) base entries, recomputing each op's table once. A base entry
        sits below the registrations made with `register` (Note [Registration stacks])."""
        touched: dict[str, Operator] = {}
        with self._lock:
            for name, key, kernel in entries:
                op = self.find(name)
                op.set_base(key, kernel)
                touched[name] = op
            for op in touched.values():
                op.recompute()
            for op in self._unbuilt:
                if op.name not in touched:
                    op.recompute()
            self._unbuilt.clear()

    def on_first_call(self, module: str, function: str) -> Kernel:
        """A stand-in for the kernel `function` of `module`, to register as a base entry: its first call
        imports the module and registers the module's kernels in place of all its stand-ins (Note [Kernels
        loaded on first call])."""
        loader = self._loaders.get(module)
        if loader is None:
            loader = self._loaders[module] = ModuleOnFirstCall(self, module)
        return loader.stub(function)

    def replace_base_kernels(self, replacement: Callable[[Kernel | None], Kernel | None]) -> None:
        """Under the lock, make `replacement(base)` the base registration of every (operator, key) whose base
        it maps to a kernel (not None), and rebuild those operators' tables: how the stand-ins of Note
        [Kernels loaded on first call] give way to the real kernels."""
        with self._lock:
            for op in self.ops.values():
                found = False
                for key in op.kernels.keys() | op.stacks.keys():
                    kernel = replacement(op.base(key))
                    if kernel is not None:
                        op.set_base(key, kernel)
                        found = True
                if found:
                    op.recompute()

    def guard_alias_kernels(self, key: str, alias: str, guard: Callable[[Operator, Kernel], Kernel],
                            ) -> Callable[[], None]:
        """Note [Backend guards on alias kernels]
        An alias kernel (CompositeExplicitAutograd, ...) is shared by the backends it serves, but a backend
        may need to restrict it: on `key`, every operator's table then holds `guard(op, kernel)` where it
        would hold the `alias` kernel (the CUDA backend refuses bfloat16 there: Note [Composite kernels and
        bfloat16] in runtime/cuda/composites.py). One guard per (key, alias); returns a function that
        removes it. The tables with such a kernel are rebuilt, now and on removal."""
        if alias not in ALIAS_KEYS:
            raise ValueError(f"unknown alias key '{alias}'; alias keys: {', '.join(ALIAS_KEYS)}")
        slot = (int(DispatchKey[key]), alias)
        with self._lock:
            if slot in self.guards:
                raise ValueError(f"a guard for {alias} kernels at {key} is already installed")
            self.guards[slot] = guard
            self._recompute_with(alias)

        def undo() -> None:
            with self._lock:
                if self.guards.get(slot) is guard:
                    del self.guards[slot]
                    self._recompute_with(alias)

        return undo

    def _recompute_with(self, key_name: str) -> None:
        """Rebuild the tables of the operators with a kernel registered under `key_name`."""
        for op in self.ops.values():
            if key_name in op.kernels:
                op.recompute()

    def register_fallback(self, key: str, fn: Callable[[Operator, list[Any]], Any]) -> Callable[[], None]:
        """A boxed fallback for every operator at `key` on top of the ones there; returns a function that
        removes exactly this one (Note [Registration stacks])."""
        return _push(self._lock, self._fallback_stacks, DispatchKey[key], self.fallbacks, BoxedFallback(fn),
                     self._recompute_all)

    def _recompute_all(self) -> None:
        for op in self.ops.values():
            op.recompute()


def _push(lock: threading.Lock, stacks: dict[Any, list[list[Any]]], slot: Any, live: dict[Any, Any], value: Any,
          recompute: Callable[[], None]) -> Callable[[], None]:
    """Push `value` on the registration stack of `slot`, so that it serves `live[slot]`; returns the handle
    that removes exactly this entry (Note [Registration stacks]). `recompute` rebuilds the tables affected."""
    entry = [value]
    with lock:
        stack = stacks.get(slot)
        if stack is None:
            stack = stacks[slot] = [[live.get(slot)]]  # the base registration, maybe None
        stack.append(entry)
        live[slot] = value
        recompute()

    def undo() -> None:
        with lock:
            if _remove_entry(stack, entry):
                top = stack[-1][0]
                if top is None:
                    live.pop(slot, None)
                else:
                    live[slot] = top
                recompute()

    return undo


def _remove_entry(stack: list[list[Any]], entry: list[Any]) -> bool:
    """Note [Registration stacks]
    Like PyTorch's per-(op, key) kernel lists, the registrations at one key form a stack: index 0 is the
    base (the generated registration, or None), each `register` pushes an entry, and the newest entry
    serves the key. Removing a handle removes its own entry (found by identity) wherever it is in the
    stack, so handles may be removed in any order and the table always shows the newest remaining one.
    Returns whether the entry was still there (removing twice is a no-op)."""
    for i in range(len(stack) - 1, 0, -1):
        if stack[i] is entry:
            del stack[i]
            return True
    return False


dispatcher = Dispatcher()


class _OpTables(dict[str, list[Any]]):
    """Operator name -> its dispatch table (the list itself, which registration updates in place), looked up
    on first use: `OP_TABLES["view"]` is one dict subscript. For the runtime's own calls that index a table
    themselves (factories, indexing, composites: Note [Factory fast path])."""

    def __missing__(self, name: str) -> list[Any]:
        table = self[name] = dispatcher.find(name).table
        return table


OP_TABLES = _OpTables()


def keys_of(value: Any) -> int:
    """Key set of one argument: a tensor, None, or a list/tuple of tensors."""
    if value is None:
        return 0
    keys = getattr(value, "_keys", None)
    if keys is not None:
        return keys
    if isinstance(value, list | tuple):
        out = 0
        for v in value:
            if v is not None:
                keys = getattr(v, "_keys", None)
                out |= keys if keys is not None else keys_of(v)
        return out
    return 0


def dump(op: str) -> str:
    """The dispatch table of an operator as text (`runtime.dispatcher.dump("add.Tensor")`)."""
    return dispatcher.find(op).dump()


@contextmanager
def include_keys(*keys: str) -> Iterator[None]:
    """Add keys to this thread's include set for the duration of the block."""
    bits = sum(1 << DispatchKey[k] for k in keys)
    saved = tls.include
    tls.include = saved | bits
    try:
        yield
    finally:
        tls.include = saved


@contextmanager
def exclude_keys(*keys: str) -> Iterator[None]:
    """Remove keys from every call's key set in this thread for the duration of the block."""
    bits = sum(1 << DispatchKey[k] for k in keys)
    saved = tls.mask
    tls.mask = saved & ~bits
    try:
        yield
    finally:
        tls.mask = saved
