"""opgen against PyTorch's OpInfo database (torch is the oracle; the module skips without it).

One test per eligible OpInfo entry that opgen has (tests/opinfo_coverage.py resolves the names, converts
the samples and compares): the first samples of every dtype both sides support (float32, float64, int64,
bool), the method, in-place and `out=` variants the OpInfo declares, gradients in float64 and second
derivatives where the OpInfo declares them. A failure of a category listed in `KNOWN_GAPS` xfails with its
reason; any other failure fails. `test_opinfo_exhaustive` (marked slow: `pytest -m slow`) runs every
reference input of every dtype and the error inputs.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal needs it (the `oracle` extra installs it)

from tests import opinfo_coverage as C

_ENTRIES = C.eligible(C.load_op_db())
_PRESENT = [o for o in _ENTRIES if C.resolve(o) is not None]

# The entries this branch has (tests.opinfo_coverage counts them): a change that loses entries fails.
FLOOR_EXIST = 650


def _verdict(result: C.Result) -> None:
    unexpected = {c: f for c, f in result.failed.items()
                  if f"{result.key}:{c}" not in C.KNOWN_GAPS and result.key not in C.EXPECTED_DIFFERENCES
                  and f"{result.key}:{c}" not in C.EXPECTED_DIFFERENCES}
    if unexpected:
        pytest.fail("\n".join(f"{result.key} [{c}] {f}" for c, f in unexpected.items()), pytrace=False)
    if result.failed:
        reasons = {C.KNOWN_GAPS.get(f"{result.key}:{c}") or C.EXPECTED_DIFFERENCES.get(f"{result.key}:{c}")
                   or C.EXPECTED_DIFFERENCES.get(result.key) for c in result.failed}
        pytest.xfail("; ".join(sorted(r for r in reasons if r)))


@pytest.mark.parametrize("info", _PRESENT, ids=C.key_of)
def test_opinfo(info) -> None:
    _verdict(C.check_entry(info, max_samples=1, grad_samples=1))


@pytest.mark.slow
@pytest.mark.parametrize("info", _PRESENT, ids=C.key_of)
def test_opinfo_exhaustive(info) -> None:
    """The held-out run (`python3 -m tests.opinfo_coverage --exhaustive`): reference inputs of every dtype,
    out= and second derivatives on every sample, error inputs."""
    _verdict(C.check_entry(info, dtypes=C.ALL_DTYPES, max_samples=None, grad_samples=None, exhaustive=True))


def test_known_gaps_name_real_entries() -> None:
    keys = {C.key_of(o) for o in _ENTRIES}
    for table in (C.KNOWN_GAPS, C.EXPECTED_DIFFERENCES):
        for gap in table:
            key, _, category = gap.rpartition(":") if ":" in gap else (gap, "", "")
            assert key in keys, f"{gap}: no such OpInfo entry"
            assert not category or category in C.CATEGORIES, f"{gap}: unknown category"


def test_coverage_floor() -> None:
    assert len(_PRESENT) >= FLOOR_EXIST, f"{len(_PRESENT)} of {len(_ENTRIES)} OpInfo entries exist in opgen"


def test_checker_catches_a_wrong_op(monkeypatch) -> None:
    """The comparison can fail: an op made to answer wrongly is reported in the forward category."""
    import generated as G
    info = next(o for o in _ENTRIES if C.key_of(o) == "exp")
    monkeypatch.setattr(G, "exp", lambda x, **kw: G.sin(x))
    result = C.check_entry(info, max_samples=1, grad_samples=0, variants=False)
    assert result.status == "differ" and "forward" in result.failed
