"""Memory layouts (PyTorch's `torch.layout`): every opgen tensor is strided, so `strided` is the one layout,
what `Tensor.layout` answers and what the factories' `layout=` arguments accept. And memory formats
(PyTorch's `torch.memory_format`): the order of a strided tensor's dims in memory that `clone` and
`contiguous` are asked for (`preserve_format`, the default of clone, keeps the input's)."""

from __future__ import annotations


class _Named:
    """A named constant that prints as `opgen.<name>` and pickles as that module attribute (unpickling gives
    the same object)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"opgen.{self.name}"

    def __reduce__(self) -> str:
        return self.name


class layout(_Named):
    """A tensor memory layout; `opgen.strided` is the only one opgen has (no sparse or mkldnn tensors)."""

    __slots__ = ()


strided = layout("strided")


class memory_format(_Named):
    """An order of a tensor's dims in memory: `contiguous_format` (row-major), `channels_last` (N, H, W, C
    for a 4-d tensor), `channels_last_3d` (5-d) or `preserve_format` (the input's own)."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def format_strides(op: str, fmt: object, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The element strides of a dense tensor of `shape` in memory format `fmt`; None for preserve_format
    (the input decides). A channels-last format needs a tensor of its rank (PyTorch's RuntimeError)."""
    name = format_name(op, fmt)
    if name == "preserve_format":
        return None
    if name == "contiguous_format":
        order = list(range(len(shape)))
    else:
        rank = 4 if name == "channels_last" else 5
        if len(shape) != rank:
            raise RuntimeError(f"{op}: required rank {rank} tensor to use {name} format")
        order = [0, *range(2, rank), 1]  # slowest first: batch, the spatial dims, channels innermost
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


_FORMAT_NAMES = frozenset({"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"})


def format_name(op: str, fmt: object) -> str:
    """The name of a memory format given as an opgen memory format, its name (the generated bindings'
    defaults spell `contiguous_format` so) or None (preserve_format)."""
    if fmt is None:
        return "preserve_format"
    name = fmt.name if isinstance(fmt, memory_format) else fmt
    if name not in _FORMAT_NAMES:
        raise TypeError(f"{op}(): memory_format must be an opgen memory format (opgen.contiguous_format, "
                        f"opgen.channels_last ...), not {fmt!r}")
    return str(name)
