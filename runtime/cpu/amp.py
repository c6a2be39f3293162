"""`G.cpu.amp`: the older spelling of `G.amp` for the CPU (autocast defaults to device_type "cpu", bfloat16;
Note [Autocast in opgen], runtime/amp/autocast_mode.py)."""

from __future__ import annotations

from typing import Any

from runtime import amp as _amp
from runtime.amp import autocast_mode, grad_scaler


class autocast(_amp.autocast):
    """`G.amp.autocast("cpu", ...)`."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """`G.amp.GradScaler("cpu", ...)`."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


__all__ = ["GradScaler", "autocast", "autocast_mode", "grad_scaler"]
