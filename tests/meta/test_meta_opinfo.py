"""Every OpInfo entry opgen has, on device 'meta' in both libraries (torch is the oracle; the module skips
without it): the first float32 and int64 sample of each entry, as empty meta tensors of the sample's sizes,
strides and dtype, gives outputs of the same shapes, dtypes and devices as PyTorch's meta outputs, and the
same strides wherever PyTorch's meta strides are its CPU strides (tests/meta/meta_samples.py). No value is
computed on the opgen side. An entry listed below fails for the reason given and xfails (strictly: one that
starts passing must leave the list).
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal needs it (the `oracle` extra installs it)

from tests import opinfo_coverage as C
from tests.meta import meta_samples as M

_PRESENT = [o for o in C.eligible(C.load_op_db()) if C.resolve(o) is not None]

_LAYOUT = ("opgen's CPU kernel returns this result row-major (NumPy's LAPACK wrappers, its convolution "
           "loops), PyTorch's column-major or permuted; the Meta kernel describes opgen's own kernel")
_COMPLEX = "opgen has no complex dtypes"

DIFFERENCES = {
    **dict.fromkeys(("cholesky", "lu", "ormqr", "qr", "triangular_solve", "linalg.cholesky", "linalg.cholesky_ex",
                     "linalg.eigh", "linalg.householder_product", "linalg.qr", "linalg.lu_factor",
                     "linalg.lu_factor_ex", "linalg.inv", "linalg.inv_ex", "linalg.solve_triangular",
                     "linalg.tensorinv", "unravel_index", "nn.functional.conv3d",
                     "nn.functional.conv_transpose3d", "lu_solve", "linalg.lu_solve", "linalg.ldl_factor",
                     "linalg.ldl_factor_ex", "linalg.ldl_solve"), _LAYOUT),
    **dict.fromkeys(("cdouble", "cfloat", "chalf", "linalg.eig", "linalg.eigvals"), _COMPLEX),
}


@pytest.mark.parametrize("info", _PRESENT, ids=C.key_of)
def test_meta_opinfo(info) -> None:
    result = M.check_meta(info)
    reason = DIFFERENCES.get(result.key)
    if result.failures and reason is not None:
        pytest.xfail(reason)
    assert not result.failures, f"{result.key}: " + "; ".join(result.failures)
    if reason is not None:
        pytest.fail(f"{result.key} agrees now: remove it from DIFFERENCES ({reason})")


def test_differences_name_real_entries() -> None:
    keys = {C.key_of(o) for o in _PRESENT}
    assert set(DIFFERENCES) <= keys, sorted(set(DIFFERENCES) - keys)


def test_most_entries_checked() -> None:
    """The comparison runs: nearly every entry has a sample that both libraries take on meta tensors."""
    checked = sum(1 for o in _PRESENT[:80] if M.check_meta(o, dtypes=("float32",)).checked)
    assert checked >= 60, f"only {checked} of the first 80 entries had a sample compared"


def test_harness_catches_a_wrong_meta_kernel(monkeypatch) -> None:
    """A Meta kernel that answers with the wrong shape or dtype is reported."""
    import generated as G
    info = next(o for o in _PRESENT if C.key_of(o) == "exp")
    monkeypatch.setattr(G, "exp", lambda x, **kw: G.sum(x))
    assert M.check_meta(info).failures
    monkeypatch.setattr(G, "exp", lambda x, **kw: x.to(G.float64))
    assert any("dtype" in f for f in M.check_meta(info).failures)
