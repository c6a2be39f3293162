"""A meta tensor beside a CUDA tensor (Note [Meta tensors] in runtime/meta_array.py), as beside a CPU one
(tests/meta/test_meta_composites.py): a device-mismatch RuntimeError naming both devices, never a CUDA
result computed from a meta tensor nor a CUDA tensor left silently unwritten; CUDA index tensors of a meta
tensor run its Meta kernel, as CPU ones do."""

from __future__ import annotations

import pytest

import generated as G

pytestmark = pytest.mark.cuda

_MIXED = {
    "add": lambda m, c: c + m,
    "matmul": lambda m, c: m @ c,
    "cat": lambda m, c: G.cat([c, m]),
    "linear": lambda m, c: G.nn.functional.linear(c, m),
    "index (meta index of a CUDA tensor)": lambda m, c: c[G.zeros(1, dtype=G.int64, device="meta")],
    "index_put_ (meta values into a CUDA tensor)":
        lambda m, c: c.index_put_((G.zeros(1, dtype=G.int64, device="cuda"),), m[0]),
}


@pytest.mark.parametrize("name", list(_MIXED))
def test_meta_beside_cuda_is_a_device_mismatch(name: str) -> None:
    meta, cuda = G.empty(3, 3, device="meta"), G.ones(3, 3, device="cuda")
    with pytest.raises(RuntimeError, match="same device") as info:
        _MIXED[name](meta, cuda)
    assert "cuda" in str(info.value) and "meta" in str(info.value)
    assert cuda.cpu().tolist() == [[1.0] * 3] * 3


def test_cuda_index_tensors_of_a_meta_tensor() -> None:
    meta = G.empty(3, 4, device="meta")
    out = meta[G.tensor([0, 2], device="cuda")]
    assert out.is_meta and tuple(out.shape) == (2, 4)
