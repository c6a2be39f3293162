"""Random numbers: `Generator`, `manual_seed`, and the kernels of the in-place samplers (uniform_, normal_,
random_, cauchy_, exponential_, geometric_, log_normal_).

Note [One generator per device]
As in PyTorch, each device has its own default generator, and a `Generator(device)` is tied to one
device: results on CPU depend only on the CPU generator's seed, results on cuda:1 only on cuda:1's.
`manual_seed(s)` seeds the CPU generator and every CUDA default generator (those made later too).
A CPU generator is NumPy's PCG64; a CUDA one is CuPy's RandomState on that device. The streams are
reproducible within opgen, not bit-identical to PyTorch's (different algorithms).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.device import CPU, Device, as_device
from runtime.kernels.copy import store
from runtime.memory_overlap import check_write
from runtime.tensor import Tensor

DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed
_SEED_MASK = (1 << 64) - 1


class Generator:
    """A random-number generator for one device (`G.Generator("cpu")`, `G.Generator("cuda:0")`)."""

    def __init__(self, device: Any = "cpu") -> None:
        self.device: Device = as_device(device)
        self._seed = DEFAULT_SEED
        self._engine: Any = None

    def manual_seed(self, seed: int) -> Generator:
        """Seed the generator; returns it."""
        seed = int(seed)
        if not -(1 << 63) <= seed <= _SEED_MASK:
            raise RuntimeError(f"Overflow when unpacking long long: seed {seed} is out of range")
        self._seed = seed & _SEED_MASK
        self._engine = None
        return self

    def seed(self) -> int:
        """Seed from the OS's entropy; returns the seed."""
        self.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self._seed

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._seed

    def get_state(self) -> Any:
        """The generator's state (CPU generators only), for set_state()."""
        engine = self.engine()
        if self.device.type == "cpu":
            return dict(engine.bit_generator.state)
        raise NotImplementedError("get_state() of a CUDA generator is not supported by opgen")

    def set_state(self, state: Any) -> Generator:
        """Restore a state from get_state(); returns the generator."""
        if self.device.type != "cpu":
            raise NotImplementedError("set_state() of a CUDA generator is not supported by opgen")
        self.engine().bit_generator.state = state
        return self

    def engine(self) -> Any:
        """The NumPy Generator (CPU) or CuPy RandomState (CUDA) behind this generator, made on first use."""
        if self._engine is None:
            if self.device.type == "cpu":
                self._engine = np.random.Generator(np.random.PCG64(self._seed))
            else:
                from runtime.cuda import require_cupy
                cp = require_cupy()
                with cp.cuda.Device(self.device.index or 0):
                    self._engine = cp.random.RandomState(self._seed)
        return self._engine

    def __repr__(self) -> str:
        return f"<opgen.Generator device={self.device}>"


_default_seed = DEFAULT_SEED
_defaults: dict[Device, Generator] = {}
_type_seeds: dict[str, int] = {}  # seeds given by G.cuda.manual_seed_all for generators made later


def default_generator(device: Device = CPU) -> Generator:
    """The default generator of a device (Note [One generator per device])."""
    g = _defaults.get(device)
    if g is None:
        g = _defaults[device] = Generator(device).manual_seed(_type_seeds.get(device.type, _default_seed))
    return g


def manual_seed(seed: int) -> Generator:
    """Seed the default generator of every device; returns the CPU one (as torch.manual_seed)."""
    global _default_seed
    _default_seed = int(seed) & _SEED_MASK
    _type_seeds.clear()
    for g in list(_defaults.values()):
        g.manual_seed(seed)
    return default_generator(CPU).manual_seed(seed)


def seed() -> int:
    """Seed every default generator from the OS's entropy; returns the seed."""
    s = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the default CPU generator."""
    return default_generator(CPU).initial_seed()


def get_rng_state() -> Any:
    """The state of the default CPU generator (an opaque value for set_rng_state)."""
    return default_generator(CPU).get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore the default CPU generator to a state returned by get_rng_state."""
    default_generator(CPU).set_state(new_state)


# -- G.cuda's seeding functions (installed on G.cuda by runtime/api.py) ----------------------------------
# CUDA generators are made on first use, as PyTorch's are; a seed given before one exists is kept for it, so
# seeding works (and costs nothing) on a machine without a GPU.
def cuda_manual_seed_all(seed: int) -> None:
    """Seed the default generator of every CUDA device, present or made later."""
    seed = int(seed) & _SEED_MASK
    _type_seeds["cuda"] = seed
    for device, g in list(_defaults.items()):
        if device.type == "cuda":
            g.manual_seed(seed)


def cuda_manual_seed(seed: int) -> None:
    """Seed the default generator of the current CUDA device (cuda:0 if none was made current)."""
    seed = int(seed) & _SEED_MASK
    device = Device("cuda", 0)
    g = _defaults.get(device)
    if g is None:
        _defaults[device] = Generator(device).manual_seed(seed)
    else:
        g.manual_seed(seed)


def cuda_seed_all() -> None:
    cuda_manual_seed_all(int.from_bytes(os.urandom(8), "little") >> 1)


def cuda_seed() -> None:
    cuda_manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)


def cuda_initial_seed() -> int:
    return default_generator(Device("cuda", 0)).initial_seed()


class fork_rng:
    """Context manager: the default CPU generator's state is restored on exit, so random draws inside the
    block leave the stream outside unchanged. CUDA generators are not forked (their CuPy state cannot be
    read back): `devices` other than an empty list are refused where a CUDA generator exists."""

    def __init__(self, devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
                 _devices_kw: str = "devices", device_type: str = "cuda") -> None:
        self.enabled = enabled
        if devices and any(d.type == "cuda" for d in _defaults):
            raise NotImplementedError("fork_rng of CUDA generators is not supported by opgen (pass devices=[])")

    def __enter__(self) -> None:
        if self.enabled:
            self._cpu = default_generator(CPU).get_state()

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            default_generator(CPU).set_state(self._cpu)


def _engine(self: Tensor, generator: Generator | None) -> Any:
    device = self._device if self._device.index is not None or self._device.type == "cpu" else \
        Device("cuda", 0)
    g = default_generator(device) if generator is None else generator
    if g.device.type != device.type or (device.type == "cuda" and (g.device.index or 0) != device.index):
        raise RuntimeError(f"Expected a '{device}' device type for generator but found '{g.device}'")
    return g.engine()


def _float_np(dt: dtypes.DType, op: str) -> Any:
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{op}\" not implemented for '{dt.name}'")
    return np.float64 if dt is dtypes.float64 else np.float32


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, generator: Generator | None = None) -> Tensor:
    ct = _float_np(self._dtype, "uniform_")
    check_write(self)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    engine = _engine(self, generator)
    shape = self._data.shape
    if self._device.type == "cpu":
        values = engine.random(shape, dtype=ct)
    else:
        values = engine.random_sample(shape, dtype=ct)
    store(self, values * (to - from_) + from_)  # bfloat16: rounded by the cast kernel
    return self


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    ct = _float_np(self._dtype, "normal_")
    check_write(self)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    engine = _engine(self, generator)
    values = engine.standard_normal(self._data.shape, dtype=ct)  # NumPy Generator and CuPy RandomState alike
    store(self, values * std + mean)
    return self


def _dtype_range(dt: dtypes.DType) -> tuple[int, int]:
    if dt is dtypes.bool_:
        return 0, 2
    if dt.is_floating_point:
        digits = {dtypes.float16: 11, dtypes.float32: 24, dtypes.float64: 53}.get(dt, 8)
        return 0, (1 << digits) + 1
    info = np.iinfo(dt.np)
    return int(info.min), int(info.max) + 1


def random_(self: Tensor, from_: int = 0, to: int | None = None, generator: Generator | None = None) -> Tensor:
    """Integers uniform in [from, to); `to=None` means the dtype's largest value + 1."""
    check_write(self)
    lo, hi = _dtype_range(self._dtype)
    if to is None:
        to = hi
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    if from_ < lo or to > hi:
        raise RuntimeError(f"random_ expects 'from' and 'to' within the range of {self._dtype.name} "
                           f"[{lo}, {hi}), got from={from_} to={to}")
    engine = _engine(self, generator)
    shape = self._data.shape
    if self._device.type == "cpu":
        values = engine.integers(from_, to, size=shape, dtype=np.int64)
    else:
        values = engine.randint(from_, to, size=shape, dtype=np.int64)
    store(self, values if self._dtype.np is None else values.astype(self._data.dtype))
    return self


# -- the other in-place samplers: Cauchy, exponential, geometric, log-normal, Bernoulli ------------------
# Drawn in float64 on the CPU (float32 where the tensor is float32 or float16 on CUDA, as uniform_), from the
# tensor's device generator, then stored in the tensor's dtype; PyTorch's argument checks and dtype rules.
def _continuous(self: Tensor, op: str, what: str) -> Any:
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {self._dtype.name}")
    return _float_np(self._dtype, op)


def _draw(self: Tensor, generator: Generator | None, method: str, *args: Any, **kwargs: Any) -> Any:
    """An array of the tensor's shape from `method` of its generator's engine (NumPy's Generator and CuPy's
    RandomState share these method names)."""
    return getattr(_engine(self, generator), method)(*args, size=self._data.shape, **kwargs)


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, generator: Generator | None = None) -> Tensor:
    ct = _continuous(self, "cauchy_", "Cauchy")
    check_write(self)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    values = _draw(self, generator, "standard_cauchy").astype(ct, copy=False)  # NumPy's takes no dtype
    store(self, values * sigma + median)
    return self


def exponential_(self: Tensor, lambd: float = 1.0, generator: Generator | None = None) -> Tensor:
    ct = _continuous(self, "exponential_", "Exponential")
    check_write(self)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    values = _draw(self, generator, "standard_exponential", dtype=ct)
    store(self, values / lambd)
    return self


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, generator: Generator | None = None) -> Tensor:
    if not self._dtype.is_floating_point:
        raise NotImplementedError(f"\"log_normal_\" not implemented for '{self._dtype.name}'")
    ct = _float_np(self._dtype, "log_normal_")
    check_write(self)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    normal = _draw(self, generator, "standard_normal", dtype=ct)
    store(self, _xp(self).exp(normal * std + mean))
    return self


def geometric_(self: Tensor, p: float, generator: Generator | None = None) -> Tensor:
    if self._dtype is dtypes.bool_:
        raise NotImplementedError("\"geometric_\" not implemented for 'Bool'")
    check_write(self)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    values = _draw(self, generator, "geometric", p)  # trials until the first success: 1, 2, ...
    store(self, values if self._dtype.np is None else values.astype(self._data.dtype))
    return self


def _xp(self: Tensor) -> Any:
    if self._device.type == "cpu":
        return np
    from runtime.cuda import require_cupy
    return require_cupy()
