"""Memory layouts (PyTorch's `torch.layout`): every opgen tensor is strided, so `strided` is the one layout,
what `Tensor.layout` answers and what the factories' `layout=` arguments accept."""

from __future__ import annotations


class layout:
    """A tensor memory layout; `opgen.strided` is the only one opgen has (no sparse or mkldnn tensors)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"opgen.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled as the module attribute: unpickling gives the same object


strided = layout("strided")
