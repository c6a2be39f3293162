"""The type aliases torch.nn's signatures use (torch.nn.common_types): an int or an n-tuple of ints, etc."""

from __future__ import annotations

from typing import TypeAlias, TypeVar

from runtime.tensor import Tensor

T = TypeVar("T")

_scalar_or_tuple_any_t: TypeAlias = T | tuple[T, ...]
_scalar_or_tuple_1_t: TypeAlias = T | tuple[T]
_scalar_or_tuple_2_t: TypeAlias = T | tuple[T, T]
_scalar_or_tuple_3_t: TypeAlias = T | tuple[T, T, T]
_scalar_or_tuple_4_t: TypeAlias = T | tuple[T, T, T, T]
_scalar_or_tuple_5_t: TypeAlias = T | tuple[T, T, T, T, T]
_scalar_or_tuple_6_t: TypeAlias = T | tuple[T, T, T, T, T, T]

_size_any_t: TypeAlias = int | tuple[int, ...]
_size_1_t: TypeAlias = int | tuple[int]
_size_2_t: TypeAlias = int | tuple[int, int]
_size_3_t: TypeAlias = int | tuple[int, int, int]
_size_4_t: TypeAlias = int | tuple[int, int, int, int]
_size_5_t: TypeAlias = int | tuple[int, int, int, int, int]
_size_6_t: TypeAlias = int | tuple[int, int, int, int, int, int]

_size_any_opt_t: TypeAlias = int | None | tuple[int | None, ...]
_size_2_opt_t: TypeAlias = int | None | tuple[int | None, int | None]
_size_3_opt_t: TypeAlias = int | None | tuple[int | None, int | None, int | None]

_ratio_2_t: TypeAlias = float | tuple[float, float]
_ratio_3_t: TypeAlias = float | tuple[float, float, float]
_ratio_any_t: TypeAlias = float | tuple[float, ...]

_tensor_list_t: TypeAlias = Tensor | tuple[Tensor, ...]
_maybe_indices_t: TypeAlias = Tensor | tuple[Tensor, Tensor]

__all__: list[str] = []
