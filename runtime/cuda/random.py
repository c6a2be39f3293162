"""Counter-based random numbers on CUDA: Philox-4x32-10 (Note [Philox streams] in opgen_random.cuh).

A stream is a `PhiloxState(seed)`: the seed is Philox's key, and `offset` counts the launches made so far
(each launch takes a fresh 2^64-element counter range, so launches never overlap). Element i of a launch
depends only on (seed, offset, i): the same seed gives the same tensors on every device and grid, and
`philox4x32` below reproduces them on the host.

Functions for the runtime (runtime/random.py owns `Generator` and `G.manual_seed`; a CUDA Generator should
hold a `PhiloxState(seed)` as its engine and drop it on `manual_seed`, so re-seeding restarts the stream):

  PhiloxState(seed)                    .seed, .offset, .advance() -> (seed, offset) of the next launch,
                                       .get_state() / .set_state((seed, offset))
  uniform_(t, from_, to, state)        floating t, any strides: values in [from_, to)
  normal_(t, mean, std, state)         floating t, any strides
  random_(t, from_, to, state)         integers in [from_, to) for any dtype but bool (bool: [0, 2))
  rand(size, dtype, device, state)     new contiguous tensors, as torch.rand / randn / randint
  randn(size, dtype, device, state)
  randint(low, high, size, dtype, device, state)
`state=None` uses this module's per-device default stream, re-seeded by `manual_seed(seed)`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime.cuda import fixed as F

DEFAULT_SEED = 67280421310721
_MASK64 = (1 << 64) - 1
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
GROUP_32 = 4  # values per Philox call for 32-bit draws (float, half, bfloat16)
GROUP_64 = 2  # values per Philox call for 64-bit draws (double, randint)


class PhiloxState:
    """One Philox stream: a 64-bit seed and the offset of the next launch."""

    def __init__(self, seed: int = DEFAULT_SEED, offset: int = 0) -> None:
        self.seed = int(seed) & _MASK64
        self.offset = int(offset) & _MASK64
        self._lock = threading.Lock()

    def advance(self) -> tuple[int, int]:
        """(seed, offset) for one launch; the stream moves past it."""
        with self._lock:
            offset = self.offset
            self.offset = (offset + 1) & _MASK64
        return self.seed, offset

    def get_state(self) -> tuple[int, int]:
        return self.seed, self.offset

    def set_state(self, state: tuple[int, int]) -> None:
        seed, offset = state
        self.seed, self.offset = int(seed) & _MASK64, int(offset) & _MASK64

    def __repr__(self) -> str:
        return f"PhiloxState(seed={self.seed}, offset={self.offset})"


_DEFAULTS: dict[int, PhiloxState] = {}
_default_seed = DEFAULT_SEED


def default_state(device: int = 0) -> PhiloxState:
    state = _DEFAULTS.get(device)
    if state is None:
        state = _DEFAULTS[device] = PhiloxState(_default_seed)
    return state


def manual_seed(seed: int) -> None:
    """Restart every default stream of this module from `seed` (streams made later too)."""
    global _default_seed
    _default_seed = int(seed) & _MASK64
    for state in _DEFAULTS.values():
        state.set_state((_default_seed, 0))


# ---- the host twin of the device code (tests, and anyone who needs one element) ------------------------
def philox4x32(group: int, offset: int, seed: int) -> tuple[int, int, int, int]:
    """Philox-4x32-10 of counter (group, offset) and key seed: the device's `opgen::philox4x32`."""
    c = [group & 0xFFFFFFFF, (group >> 32) & 0xFFFFFFFF, offset & 0xFFFFFFFF, (offset >> 32) & 0xFFFFFFFF]
    k = [seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF]
    for _ in range(10):
        p0, p1 = PHILOX_M[0] * c[0], PHILOX_M[1] * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ k[1], p0 & 0xFFFFFFFF]
        k = [(k[0] + PHILOX_W[0]) & 0xFFFFFFFF, (k[1] + PHILOX_W[1]) & 0xFFFFFFFF]
    return c[0], c[1], c[2], c[3]


def philox_words(n_groups: int, offset: int, seed: int) -> np.ndarray:
    """(n_groups, 4) uint32: the Philox outputs of groups 0..n_groups-1, vectorised with NumPy."""
    g = np.arange(n_groups, dtype=np.uint64)
    c0, c1 = (g & 0xFFFFFFFF).astype(np.uint64), (g >> np.uint64(32)).astype(np.uint64)
    c2 = np.full(n_groups, offset & 0xFFFFFFFF, np.uint64)
    c3 = np.full(n_groups, (offset >> 32) & 0xFFFFFFFF, np.uint64)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    low = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0, p1 = np.uint64(PHILOX_M[0]) * c0, np.uint64(PHILOX_M[1]) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & low,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & low)
        k0, k1 = (k0 + PHILOX_W[0]) & 0xFFFFFFFF, (k1 + PHILOX_W[1]) & 0xFFFFFFFF
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def host_uniform(n: int, offset: int, seed: int, double: bool = False) -> np.ndarray:
    """The device's uniform [0, 1) draws for n elements (float32, or float64 when `double`)."""
    per = GROUP_64 if double else GROUP_32
    words = philox_words(-(-n // per), offset, seed)
    if double:
        bits = (words[:, 1::2].astype(np.uint64) << np.uint64(32)) | words[:, 0::2].astype(np.uint64)
        return ((bits >> np.uint64(11)).astype(np.float64) * 2.0**-53).reshape(-1)[:n]
    return ((words & 0xFFFFFF).astype(np.float32) * np.float32(2.0**-24)).reshape(-1)[:n]


# ---- launches --------------------------------------------------------------------------------------
def _state(state: PhiloxState | None, device: int) -> PhiloxState:
    return default_state(device) if state is None else state


def _fill(t: Any, kernel: str, per_group: int, params: tuple[Any, ...], state: PhiloxState | None) -> Any:
    """Run `kernel` into `t` (through a contiguous temporary when `t` is strided)."""
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime.cuda import copy as C
    from runtime.cuda import launch as L
    from runtime.cuda.compile import load_function

    a = t._data
    n = int(a.size)
    if n == 0:
        return t
    device = F.device_of(t)
    seed, offset = _state(state, device).advance()
    with cupy.cuda.Device(device):
        dense = L.is_contiguous(tuple(a.shape), F.element_strides(a)) and all(s >= 0 for s in a.strides)
        target = a if dense else F.empty(tuple(a.shape), t.dtype, device)
        fn = load_function(F.source_path("cuda/random.cu"), f"{kernel}__{t.dtype.name}", device)
        groups = -(-n // per_group)
        F.launch_1d(fn, groups, (np.uint64(n), target, np.uint64(seed), np.uint64(offset), *params), device)
        if not dense:
            C.copy_array(a, t.dtype, target, t.dtype)
    return t


def _float_kind(t: Any, op: str) -> tuple[type, int]:
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{op}_cuda\" not implemented for '{t.dtype.name}'")
    return (np.float64, GROUP_64) if t.dtype.name == "float64" else (np.float32, GROUP_32)


def uniform_(t: Any, from_: float = 0.0, to: float = 1.0, state: PhiloxState | None = None) -> Any:
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    conv, per = _float_kind(t, "uniform")
    return _fill(t, "uniform", per, (conv(from_), conv(to)), state)


def normal_(t: Any, mean: float = 0.0, std: float = 1.0, state: PhiloxState | None = None) -> Any:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    conv, per = _float_kind(t, "normal")
    return _fill(t, "normal", per, (conv(mean), conv(std)), state)


def random_(t: Any, from_: int = 0, to: int | None = None, state: PhiloxState | None = None) -> Any:
    """Integers in [from_, to) (to=None: up to the dtype's largest value + 1, as torch.random_)."""
    if t.dtype.name == "bool":
        from runtime.cuda import copy as C

        tmp = random_(C.to_dtype(t, _int8()), 0, 2, state)
        C.copy_(t, tmp)
        return t
    if to is None:
        if t.dtype.is_floating_point:
            digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[t.dtype.name]
            to = (1 << digits) + 1
        else:
            to = int(np.iinfo(t.dtype.np).max) + 1
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    return _fill(t, "randint", GROUP_64, (np.int64(from_), np.uint64((to - from_) & _MASK64)), state)


def _int8() -> Any:
    from runtime import dtypes

    return dtypes.int8


def _new(size: Sequence[int], dtype: Any, device: int) -> Any:
    from runtime.cuda.device import require_cupy

    cupy = require_cupy()

    from runtime.tensor import Tensor

    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    with cupy.cuda.Device(device):
        return Tensor._wrap(F.empty(shape, dtype, device), dtype)


def _dtype(dtype: Any, default: Any) -> Any:
    from runtime import dtypes

    return dtypes.as_dtype(dtype) if dtype is not None else default


def rand(size: Sequence[int], dtype: Any = None, device: int = 0, state: PhiloxState | None = None) -> Any:
    from runtime import dtypes

    return uniform_(_new(size, _dtype(dtype, dtypes.get_default_dtype()), device), 0.0, 1.0, state)


def randn(size: Sequence[int], dtype: Any = None, device: int = 0, state: PhiloxState | None = None) -> Any:
    from runtime import dtypes

    return normal_(_new(size, _dtype(dtype, dtypes.get_default_dtype()), device), 0.0, 1.0, state)


def randint(low: int, high: int, size: Sequence[int], dtype: Any = None, device: int = 0,
            state: PhiloxState | None = None) -> Any:
    from runtime import dtypes

    return random_(_new(size, _dtype(dtype, dtypes.int64), device), low, high, state)

