"""`nn.utils.rnn`: variable-length sequences packed for the recurrent layers, and padded back (torch's).

A PackedSequence holds the time steps of a batch of sequences sorted by decreasing length, step after step:
`data` is (sum of lengths, *) and `batch_sizes[t]` (an int64 CPU tensor) is how many sequences are longer
than t, so step t is the next batch_sizes[t] rows. `sorted_indices` maps the sorted order to the caller's
batch order (None when the batch came sorted) and `unsorted_indices` is its inverse; RNN, LSTM and GRU take a
PackedSequence, run each sequence for its own length, and give their outputs and final states back in the
caller's order. Packing and padding are built from slices, concatenations and stacks, so gradients flow
through them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api


class PackedSequence(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = self.sorted_indices.to(device) if self.sorted_indices is not None else None
        unsorted = self.unsorted_indices.to(device) if self.unsorted_indices is not None else None
        return PackedSequence(data, self.batch_sizes, sorted_indices, unsorted)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda")

    def double(self) -> PackedSequence:
        return self.to(dtype=_G().float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_G().float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_G().float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    if permutation is None:
        return None
    G = _G()
    out = G.empty_like(permutation)
    out[permutation] = G.arange(permutation.numel(), device=permutation.device)
    return out


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths: list[int]) -> list[int]:
    """batch_sizes[t] = how many of the (decreasing) lengths exceed t."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])] if lengths else []


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (B, T, * with batch_first) of sequences with the given lengths."""
    G = _G()
    lens = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lens) != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size="
                           f"{input.shape[batch_dim]})")
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:], strict=False)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-np.asarray(lens), kind="stable")
        sorted_indices = G.tensor(order.tolist(), dtype=G.int64, device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(batch_dim, sorted_indices)
    steps = input.shape[0 if not batch_first else 1]
    if lens[0] > steps:
        raise RuntimeError(f"Expected the longest length ({lens[0]}) to be at most the padded length ({steps})")
    if batch_first:
        input = input.transpose(0, 1)
    sizes = _batch_sizes(lens)
    data = G.cat([input[t, :bs] for t, bs in enumerate(sizes)], 0)
    return PackedSequence(data, G.tensor(sizes, dtype=G.int64), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The padded batch (T, B, *) (or B, T, *) of a PackedSequence and the lengths (int64), in the caller's
    batch order."""
    G = _G()
    data = sequence.data
    sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch = sizes[0] if sizes else 0
    feature = tuple(data.shape[1:])
    rows, offset = [], 0
    for bs in sizes:
        piece = data[offset:offset + bs]
        offset += bs
        if bs < batch:
            fill = G.full((batch - bs, *feature), padding_value, dtype=data.dtype, device=data.device)
            piece = G.cat([piece, fill], 0)
        rows.append(piece)
    for _ in range(steps - len(sizes)):
        rows.append(G.full((batch, *feature), padding_value, dtype=data.dtype, device=data.device))
    padded = G.stack(rows, 0)
    lengths = G.tensor([sum(1 for s in sizes if s > b) for b in range(batch)], dtype=G.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.to("cpu")]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences: Tensor | Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes (L_i, *) into (max L, B, *) (or B, max L, *), padding each at `padding_side`."""
    G = _G()
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            fill = G.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = G.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return G.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences, _lengths_list(lengths), strict=True)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shapes (L_i, *) (decreasing lengths unless enforce_sorted=False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def packed_steps(packed: PackedSequence) -> Iterable[tuple[int, int, int]]:
    """(t, offset, batch size) of each time step of a PackedSequence's data."""
    offset = 0
    for t, bs in enumerate(int(b) for b in packed.batch_sizes.tolist()):
        yield t, offset, bs
        offset += bs


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]
