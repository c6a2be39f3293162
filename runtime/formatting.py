"""`repr` of a tensor, laid out as PyTorch prints it: `tensor([[1., 2.]], grad_fn=<MulBackward0>)`.

The layout follows PyTorch's printing rules: every value right-aligned to the widest one shown; floats in
fixed point with `precision` digits, as integers (`3.`) when every value is whole, or in scientific notation
when the nonzero finite magnitudes span more than a factor 1000, exceed 1e8 or go below 1e-4; a tensor of more
than `threshold` elements is summarised to `edgeitems` entries at each end of every dimension, with `...`
between; lines wrap at `linewidth`. `set_printoptions` changes these rules for the process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from runtime import dtypes

# dtypes that PyTorch leaves out of the repr (they are what a literal would give)
_IMPLIED = {"float32", "int64", "bool"}


@dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_PROFILES = {"default": PrintOptions(), "short": PrintOptions(precision=2, edgeitems=2),
             "full": PrintOptions(threshold=math.inf)}
OPTIONS = PrintOptions()


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as `torch.set_printoptions`: a `profile` (`default`, `short`, `full`) first, then
    the options given. `sci_mode=None` goes back to choosing scientific notation automatically."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: unknown profile {profile!r} (expected one of "
                             f"{', '.join(_PROFILES)})")
        for f in fields(PrintOptions):
            setattr(OPTIONS, f.name, getattr(_PROFILES[profile], f.name))
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


class _Formatter:
    """Formats one value as text of a common width, the style chosen from every value shown."""

    def __init__(self, shown: np.ndarray) -> None:
        self.kind = shown.dtype.kind
        self.style = "plain"
        values = shown.reshape(-1)
        if self.kind != "f":
            self.width = max((len(self._text(v)) for v in values.tolist()), default=1)
            return
        # floats: the style and width come from the nonzero finite values only (zeros, inf and NaN are
        # printed unpadded when wider); with none, every value prints as a whole number
        values = values.astype(np.float64)
        finite = values[np.isfinite(values) & (values != 0)]
        self.style, self.width = "int", 1
        if not finite.size:
            return
        lo, hi = np.abs(finite).min(), np.abs(finite).max()
        whole = bool(np.all(finite == np.ceil(finite)))
        self.style = "int" if whole else "fixed"
        if hi / lo > 1000.0 or hi > 1.0e8 or (not whole and lo < 1.0e-4):
            self.style = "sci"
        if OPTIONS.sci_mode is not None:
            self.style = "sci" if OPTIONS.sci_mode else ("int" if whole else "fixed")
        self.width = max(len(self._text(v)) for v in finite.tolist())

    def _text(self, v: Any) -> str:
        if self.kind == "b":
            return "True" if v else "False"
        if self.kind != "f":
            return str(v)
        if self.style == "sci":
            return f"{v:.{OPTIONS.precision}e}"
        if self.style == "int":
            return f"{v:.0f}" + ("." if math.isfinite(v) else "")
        return f"{v:.{OPTIONS.precision}f}"

    def __call__(self, v: Any) -> str:
        return self._text(v).rjust(self.width)


def _summarised(array: np.ndarray, edge: int) -> np.ndarray:
    """The elements that get printed: the `edge` first and last of each dimension longer than 2 * edge."""
    for d in range(array.ndim):
        if array.shape[d] > 2 * edge:
            array = np.concatenate([array.take(range(edge), d), array.take(range(-edge, 0), d)], axis=d)
    return array


def _layout(array: np.ndarray, indent: int, summarise: bool, fmt: _Formatter) -> str:
    edge = OPTIONS.edgeitems
    cut = summarise and array.ndim > 0 and array.shape[0] > 2 * edge
    if array.ndim == 0:
        return fmt(array.item())
    if array.ndim == 1:
        items = array.tolist()
        texts = ([fmt(v) for v in items[:edge]] + [" ..."] + [fmt(v) for v in items[-edge:]] if cut
                 else [fmt(v) for v in items])
        per_line = max(1, math.floor((OPTIONS.linewidth - indent) / (fmt.width + 2)))
        lines = [", ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(array.shape[0])
    picked = [*rows[:edge], None, *rows[-edge:]] if cut else list(rows)
    parts = ["..." if i is None else _layout(array[i], indent + 1, summarise, fmt) for i in picked]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def format_values(array: np.ndarray, indent: int) -> str:
    """The nested-list text of the values, as PyTorch lays them out after a prefix of `indent` characters."""
    summarise = array.size > OPTIONS.threshold
    shown = _summarised(array, OPTIONS.edgeitems) if summarise else array
    return _layout(array, indent, summarise, _Formatter(shown))


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append `, suffix` items, each on a new line where it would pass the line width."""
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(out) + ")"


def tensor_repr(t: Any) -> str:
    if t.device.type == "meta":  # no values to show (Note [Meta tensors] in runtime/meta_array.py)
        return _meta_repr(t)
    # bfloat16 has no NumPy type: its values, exactly, in float32 (Note [bfloat16 on the CUDA backend])
    array = (t.detach().float() if t.dtype is dtypes.bfloat16 else t).numpy(force=True)
    prefix = "tensor("
    values = format_values(array, len(prefix))
    extras = []
    if array.size == 0 and array.ndim != 1:
        extras.append(f"size={tuple(array.shape)}")
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if t.dtype.name not in _IMPLIED and not (t.dtype is dtypes.get_default_dtype() and array.size):
        extras.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return _with_suffixes(prefix + values, extras, len(prefix))


def _meta_repr(t: Any) -> str:
    extras = ["device='meta'", f"size={tuple(t.shape)}"]
    if t.dtype is not dtypes.get_default_dtype():
        extras.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(..., " + ", ".join(extras) + ")"
