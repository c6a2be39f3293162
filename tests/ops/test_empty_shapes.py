"""Ops on tensors with a zero-size dimension: the shapes and values PyTorch gives (worked out by hand
here; compared with torch too when it is installed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import generated as G

MATMUL_SHAPES = [  # (a, b, result)
    ((2, 0, 0), (2, 0, 0), (2, 0, 0)),
    ((2, 3, 0), (0, 4), (2, 3, 4)),
    ((0, 2, 3), (3, 4), (0, 2, 4)),
    ((2, 0, 3), (2, 3, 0), (2, 0, 0)),
    ((3, 1, 0, 2), (5, 2, 0), (3, 5, 0, 0)),
    ((0, 3), (2, 3, 4), (2, 0, 4)),
    ((2, 3, 0), (0,), (2, 3)),
    ((0,), (2, 0, 5), (2, 5)),
]


@pytest.mark.parametrize(("a", "b", "expected"), MATMUL_SHAPES, ids=str)
def test_matmul_with_an_empty_dimension(a: tuple, b: tuple, expected: tuple) -> None:
    """An empty inner dimension sums nothing (zeros); an empty batch or row gives no elements; the
    gradients have the operands' shapes."""
    x, y = G.ones(*a, requires_grad=True), G.ones(*b, requires_grad=True)
    z = x @ y
    assert tuple(z.shape) == expected
    assert np.array_equal(z.detach().numpy(), np.zeros(expected, np.float32))
    z.sum().backward()
    assert tuple(x.grad.shape) == a and tuple(y.grad.shape) == b


@pytest.mark.parametrize(("a", "b", "expected"), MATMUL_SHAPES, ids=str)
def test_matmul_with_an_empty_dimension_matches_torch(a: tuple, b: tuple, expected: tuple) -> None:
    torch = pytest.importorskip("torch")
    assert tuple((torch.ones(*a) @ torch.ones(*b)).shape) == expected


@pytest.mark.parametrize(("shape", "chunks", "dim"), [((0, 2), 3, 0), ((0, 2), 1, 0), ((2, 0), 4, 1),
                                                      ((2, 0, 3), 2, -2)])
def test_chunk_of_an_empty_dimension_gives_chunks_pieces(shape: tuple, chunks: int, dim: int) -> None:
    x = G.zeros(*shape)
    pieces = x.chunk(chunks, dim)
    assert len(pieces) == chunks
    assert all(tuple(p.shape) == shape for p in pieces)
    torch = pytest.importorskip("torch")
    assert [tuple(p.shape) for p in torch.zeros(*shape).chunk(chunks, dim)] == [tuple(p.shape) for p in pieces]


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("ord", ["fro", "nuc", 2, 1, -1, math.inf, -math.inf, -2])
def test_matrix_norm_of_an_empty_matrix(shape: tuple, ord: object) -> None:
    """The maximum of no non-negative numbers is 0; a minimum over an empty dimension has no value."""
    x = G.zeros(*shape)
    # -1 takes the min over the columns' sums (dim 1), -inf over the rows' sums (dim 0), -2 over no values
    empty_min = (ord == -2 or (ord == -1 and shape[-1] == 0) or (ord == -math.inf and shape[-2] == 0))
    if empty_min:
        with pytest.raises(IndexError, match="amin"):
            G.linalg.matrix_norm(x, ord)
    else:
        out = G.linalg.matrix_norm(x, ord)
        assert out.tolist() == ([0.0] * shape[0] if len(shape) == 3 else 0.0)
        assert tuple(G.linalg.matrix_norm(x, ord, keepdim=True).shape) == (*shape[:-2], 1, 1)
    torch = pytest.importorskip("torch")
    try:
        theirs = torch.linalg.matrix_norm(torch.zeros(*shape), ord)
    except IndexError:
        assert empty_min
    else:
        assert not empty_min and theirs.tolist() == out.tolist()
