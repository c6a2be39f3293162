"""The Meta kernels describe opgen's own kernels: every OpInfo entry opgen has, run on the CPU and on meta
tensors of the same sizes, strides and dtypes (the first three float32 and int64 samples), gives outputs of
the same shapes, dtypes and strides (tests/meta/meta_samples.py `check_meta_vs_cpu`). This is what graph
capture relies on: a graph traced on meta tensors records the geometry the eager call produces.

The entries below return or read values by nature (a Python number or bool, a copy to another device, a
size or a check taken from a tensor argument's values); PyTorch's meta tensors refuse them too. Their meta
calls must raise, strictly: an entry that stops raising leaves the list.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal needs it

from tests import opinfo_coverage as C
from tests.meta import meta_samples as M

_PRESENT = [o for o in C.eligible(C.load_op_db()) if C.resolve(o) is not None]

READS_VALUES = {
    "item": "returns the value",
    "allclose": "returns a bool of the values",
    "equal": "returns a bool of the values",
    "to": "its samples copy to the CPU",
    "narrow": "a sample gives `start` as a tensor, whose value is read",
    "tensor_split": "the split points given as a tensor are read",
    "histogram": "the bin edges come from the values' range",
    "histogramdd": "the bin edges come from the values' range",
    "nn.functional.gaussian_nll_loss": "refuses a negative variance, a check of values",
    "linalg.lstsq": "the rank and the driver's choice read values",
    "linalg.lstsq.grad_oriented": "the rank and the driver's choice read values",
    **dict.fromkeys(("cdouble", "cfloat", "chalf", "linalg.eig", "linalg.eigvals"), "opgen has no complex dtypes"),
}


@pytest.mark.parametrize("info", _PRESENT, ids=C.key_of)
def test_meta_matches_cpu(info) -> None:
    result = M.check_meta_vs_cpu(info)
    reason = READS_VALUES.get(result.key)
    if reason is None:
        assert not result.failures, f"{result.key}: " + "; ".join(result.failures)
        return
    if result.checked:
        assert result.failures, f"{result.key} runs on meta now: remove it from READS_VALUES ({reason})"
        assert all(": raised " in f for f in result.failures), result.failures


def test_reads_values_names_real_entries() -> None:
    keys = {C.key_of(o) for o in _PRESENT}
    assert set(READS_VALUES) <= keys, sorted(set(READS_VALUES) - keys)


def test_harness_catches_a_meta_kernel_unlike_the_cpu(monkeypatch) -> None:
    """A function whose meta result is laid out otherwise than its CPU result is reported."""
    import generated as G
    info = next(o for o in _PRESENT if C.key_of(o) == "exp")
    exp = G.exp
    monkeypatch.setattr(G, "exp", lambda x, **kw: exp(x).unsqueeze(0) if x.is_meta else exp(x))
    assert any("shape" in f for f in M.check_meta_vs_cpu(info).failures)
    transposed = G.empty(4, 3, device="meta").t()  # (3, 4) laid out column-major
    monkeypatch.setattr(G, "exp", lambda x, **kw: transposed if x.is_meta else G.ones(3, 4))
    assert any("strides" in f for f in M.check_meta_vs_cpu(info).failures)
    monkeypatch.setattr(G, "exp", lambda x, **kw: exp(x).double() if x.is_meta else exp(x))
    assert any("dtype" in f for f in M.check_meta_vs_cpu(info).failures)
