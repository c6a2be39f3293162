"""What the OpInfo harness allows on a device (the CUDA device, emulated without a GPU) beyond the CPU's lists.

tests/cuda/test_opinfo_on_device.py runs the OpInfo entries with their tensors on the device and PyTorch's CPU
as the oracle. A failure there is allowed only when
- the CPU run allows it too (`KNOWN_GAPS`, `EXPECTED_DIFFERENCES` of tests/opinfo_coverage.py: the oracle is
  the same, so a deliberate CPU difference is one on the device as well), or
- it is listed in `DEVICE_DIFFERENCES` (entry key or `key:category` -> reason), or
- it is opgen's `DispatchError` for the device's key naming an operator of `NO_DEVICE_KERNEL` (operator ->
  why it has no CUDA kernel): a clear refusal of an op the backend does not have on purpose.
"""

from __future__ import annotations

from tests import opinfo_coverage as C

# The default run's dtypes on the device (one sample each): what the CPU run compares. float16 joins in the
# exhaustive run (C.ALL_DTYPES).
DEVICE_DTYPES = C.FAST_DTYPES

# entry key or `key:category` -> why the device's answer differs from PyTorch's CPU (deliberate)
DEVICE_DIFFERENCES: dict[str, str] = {
}

# opgen operator -> why it has no CUDA kernel (its OpInfo entries are refused on the device with DispatchError)
NO_DEVICE_KERNEL: dict[str, str] = {
}


def allowed(key: str, category: str) -> str | None:
    """The reason a failure of entry `key` in `category` on the device is allowed, or None."""
    for table in (C.KNOWN_GAPS, C.EXPECTED_DIFFERENCES, DEVICE_DIFFERENCES):
        reason = table.get(f"{key}:{category}") or table.get(key)
        if reason:
            return reason
    return None


def refusal_reason(result: C.Result, category: str) -> str | None:
    """Why the device refused `category` of `result` (its op is listed in NO_DEVICE_KERNEL), or None."""
    op = result.refused.get(category)
    if op is None:
        return None
    reason = NO_DEVICE_KERNEL.get(op) or NO_DEVICE_KERNEL.get(op.split(".")[0])
    return f"{op} has no CUDA kernel: {reason}" if reason else None


def verdict(result: C.Result) -> tuple[dict[str, str], dict[str, str]]:
    """(the failures not allowed, category -> the reason of each allowed one)."""
    unexpected: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for category, failure in result.failed.items():
        reason = refusal_reason(result, category) or allowed(result.key, category)
        if reason is None:
            op = result.refused.get(category)
            unexpected[category] = failure + (f" (refused: {op} has no CUDA kernel and is not in "
                                              "tests/opinfo_device.py NO_DEVICE_KERNEL)" if op else "")
        else:
            reasons[category] = reason
    return unexpected, reasons
