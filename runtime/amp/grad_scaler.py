"""`G.amp.grad_scaler`: GradScaler (torch.amp.grad_scaler).

Note [GradScaler in opgen]
GradScaler does real loss scaling: `scale(loss)` multiplies by the scale, `unscale_(optimizer)` divides the
gradients and records whether any is inf/NaN, `step` skips the optimizer step when one was, and `update`
backs the scale off after an overflow and grows it after `growth_interval` clean steps. With
`enabled=False` every method passes its input through, as PyTorch's does; a scaler for "cuda" on a machine
without a CUDA device disables itself with a warning, as PyTorch's does.
"""

from __future__ import annotations

import warnings
from typing import Any

from runtime import opcall

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Dynamic loss scaling (Note [GradScaler in opgen]): scale, unscale_, step (skipped on inf/NaN), update."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._device = device
        if enabled and device == "cuda" and not opcall.api.cuda.is_available():
            warnings.warn("GradScaler is enabled, but CUDA is not available. Disabling.", stacklevel=2)
            enabled = False  # as PyTorch: a CUDA scaler on a machine without CUDA passes everything through
        self._enabled = bool(enabled)
        self._init_scale = float(init_scale)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    # -- scaling -----------------------------------------------------------------------------------------
    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor, or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if not hasattr(outputs, "dtype"):
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return outputs * self._scale

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of `optimizer`'s parameters by the scale, once per step; note inf/NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        G = opcall.api
        inv = 1.0 / self._scale
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None and p.grad.dtype is G.float16:
                    # as PyTorch's: float16 master weights would lose the small unscaled gradients
                    raise ValueError("Attempting to unscale FP16 gradients.")
        with G.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    g.mul_(inv)
                    if not found and not bool(G.isfinite(g).all()):
                        found = True
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """`optimizer.step()` unless this step's gradients held inf/NaN (unscaling them first if needed)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale: float | Any = None) -> None:
        """Back the scale off if any optimizer saw inf/NaN this step, else grow it every growth_interval
        steps; or set it to `new_scale`."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        else:
            if not self._per_optimizer:
                raise RuntimeError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer.clear()

    # -- queries and state -------------------------------------------------------------------------------
    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def is_enabled(self) -> bool:
        return self._enabled

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


__all__ = ["GradScaler"]
