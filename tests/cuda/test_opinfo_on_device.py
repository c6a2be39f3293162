"""PyTorch's OpInfo database on the CUDA device (emulated without a GPU: OPGEN_EMULATE_CUDA=1).

Every eligible OpInfo entry that opgen has runs with its samples' tensors made on the device
(tests/opinfo_values.py converts them; the samples and the expected results are PyTorch's CPU ones), through
the harness of tests/ops/test_opinfo.py (tests/opinfo_coverage.py: the function form, the method, in-place
and `out=` variants the OpInfo declares, gradients in float64 and second derivatives where declared), and
is compared in values (the OpInfo's tolerances for CUDA), dtypes, shapes and the device of every result.

An entry whose op has no kernel for the CUDA key (and no composite that reaches CUDA kernels) is refused
with opgen's DispatchError naming the op and the key; `test_opinfo_on_device` accepts that refusal only
when the op named really has no CUDA registration, and counts it (`python3 -m tests.opinfo_coverage
--device cuda` lists them). The default run takes the first sample of each dtype and one gradient sample;
`test_opinfo_on_device_exhaustive` (marked slow, not cuda, so that `-m cuda` leaves it out; run it with
`OPGEN_EMULATE_CUDA=1 python3 -m pytest tests/cuda/test_opinfo_on_device.py -m slow`) takes every sample of
every dtype.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch.testing._internal needs it (the `oracle` extra installs it)

from tests import opinfo_coverage as C
from tests import opinfo_device as D

_ENTRIES = C.eligible(C.load_op_db())
_PRESENT = [o for o in _ENTRIES if C.resolve(o) is not None]


def _device_available() -> bool:
    from runtime import cuda
    return bool(cuda.is_available())


def _verdict(result: C.Result) -> None:
    unexpected, reasons = D.verdict(result)
    if unexpected:
        pytest.fail("\n".join(f"{result.key} [{c}] on cuda: {f}" for c, f in unexpected.items()), pytrace=False)
    if reasons:
        pytest.xfail("; ".join(sorted(set(reasons.values()))))


@pytest.mark.cuda
@pytest.mark.parametrize("info", _PRESENT, ids=C.key_of)
def test_opinfo_on_device(info) -> None:
    _verdict(C.check_entry(info, dtypes=D.DEVICE_DTYPES, max_samples=1, grad_samples=1, device="cuda"))


# `slow` only, not `cuda`: `pytest -m cuda` (which replaces the default `-m 'not slow'`) leaves it out; it needs
# the device all the same
@pytest.mark.slow
@pytest.mark.skipif(not _device_available(), reason="needs a CUDA device (OPGEN_EMULATE_CUDA=1 without a GPU)")
@pytest.mark.parametrize("info", _PRESENT, ids=C.key_of)
def test_opinfo_on_device_exhaustive(info) -> None:
    _verdict(C.check_entry(info, dtypes=C.ALL_DTYPES, max_samples=None, grad_samples=None, device="cuda"))


@pytest.mark.cuda
def test_device_tables_name_real_entries_and_ops() -> None:
    import generated  # noqa: F401  (declares the operators)
    from runtime.dispatcher import dispatcher
    from runtime.vocabulary import DispatchKey
    keys = {C.key_of(o) for o in _ENTRIES}
    for entry in D.DEVICE_DIFFERENCES:
        key, _, category = entry.rpartition(":") if ":" in entry else (entry, "", "")
        assert key in keys, f"{entry}: no such OpInfo entry"
        assert not category or category in C.CATEGORIES, f"{entry}: unknown category"
    for op in D.NO_DEVICE_KERNEL:  # each names an operator that has no kernel serving the CUDA key
        _, how = dispatcher.find(op).resolve(DispatchKey.CUDA)
        assert how == "missing", f"{op} has a CUDA kernel ({how}): remove it from NO_DEVICE_KERNEL"


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_of_uint8_are_uint8_on_device(name: str) -> None:
    """Found by the uint8 samples of the exhaustive run: the CUDA kernels of all/any returned bool for a uint8
    input, where PyTorch (and opgen's CPU kernels) return uint8."""
    info = next(o for o in _ENTRIES if C.key_of(o) == name)
    result = C.check_entry(info, dtypes=("uint8",), max_samples=None, grad_samples=0, device="cuda")
    assert result.checked and not result.failed, result.failed


@pytest.mark.cuda
def test_device_tolerance_reads_precision_overrides() -> None:
    """A precisionOverride (dtype -> absolute tolerance) for CUDA loosens atol there, not on the CPU
    (nn.functional.logsigmoid has one for float16; reading it as a toleranceOverride crashed the harness)."""
    import torch
    from torch.testing._internal.common_device_type import precisionOverride
    from torch.testing._internal.opinfo.core import DecorateInfo

    class Info:
        decorators = (DecorateInfo(precisionOverride({torch.float16: 5e-2}), device_type="cuda"),)
    assert C.tolerance(Info, "float16", "cuda").atol == 5e-2
    assert C.tolerance(Info, "float16", "cpu").atol == C.DEFAULT_TOL["float16"].atol


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["add", "sub", "nn.functional.cosine_embedding_loss"])
def test_int_scalars_outside_the_dtype_wrap_on_device(name: str) -> None:
    """Found by the uint8 samples of the exhaustive run: a Python int Scalar outside the kernel's integer type
    (`add(a, b, alpha=-3)`, `target == -1` inside cosine_embedding_loss) raised OverflowError when packed as
    the kernel argument; PyTorch converts it as C does (wrapping)."""
    info = next(o for o in _ENTRIES if C.key_of(o) == name)
    result = C.check_entry(info, dtypes=("uint8",), max_samples=None, grad_samples=0, device="cuda")
    assert result.checked and not result.failed, result.failed
