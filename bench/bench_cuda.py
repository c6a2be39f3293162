"""CUDA benchmarks of opgen against CuPy, in one run. Prints "no GPU" and exits 0 without a device.

  add        float32 add of 2^28 elements, as a fraction of device-to-device copy bandwidth (goal >= 0.9,
             and >= CuPy's own fraction)
  add (T)    the same with one transposed operand (goal >= 0.5 of contiguous)
  sum        full sum of 2^28 float32 (goal >= 0.85 of copy bandwidth)
  launch     1-element add, opgen's time over CuPy's (goal <= 1.2)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, installed or not


def _time_gpu(cupy: object, fn: Callable[[], object], repeat: int = 20) -> float:
    """Median seconds per call, timed with CUDA events."""
    fn()
    times = []
    for _ in range(repeat):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()  # type: ignore[attr-defined]
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)  # type: ignore[attr-defined]
    return sorted(times)[len(times) // 2]


def _time_host(cupy: object, fn: Callable[[], object], repeat: int = 2000) -> float:
    """Seconds per call from the host (launch overhead), after a warm-up."""
    for _ in range(50):
        fn()
    cupy.cuda.runtime.deviceSynchronize()  # type: ignore[attr-defined]
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    cupy.cuda.runtime.deviceSynchronize()  # type: ignore[attr-defined]
    return (time.perf_counter() - start) / repeat


def main() -> int:
    from runtime.cuda import is_available

    if not is_available():
        print("no GPU: CUDA benchmarks skipped (needs CuPy and a CUDA device)")
        return 0
    import cupy

    import generated as G

    n = 1 << 28
    nbytes = 4 * n
    a_cp = cupy.random.random(n, dtype=cupy.float32)
    b_cp = cupy.random.random(n, dtype=cupy.float32)
    c_cp = cupy.empty_like(a_cp)
    copy_s = _time_gpu(cupy, lambda: c_cp.__setitem__(Ellipsis, a_cp))
    copy_bw = 2 * nbytes / copy_s
    from runtime.tensor import Tensor

    a, b = Tensor._wrap(a_cp), Tensor._wrap(b_cp)
    add_s = _time_gpu(cupy, lambda: G.add(a, b))
    cupy_add_s = _time_gpu(cupy, lambda: cupy.add(a_cp, b_cp))
    side = 1 << 14
    a2, b2 = Tensor._wrap(a_cp.reshape(side, side)), Tensor._wrap(b_cp.reshape(side, side).T)
    add_t_s = _time_gpu(cupy, lambda: G.add(a2, b2))
    sum_s = _time_gpu(cupy, lambda: G.sum(a))
    one_a, one_b = Tensor._wrap(a_cp[:1]), Tensor._wrap(b_cp[:1])
    launch_s = _time_host(cupy, lambda: G.add(one_a, one_b))
    cupy_launch_s = _time_host(cupy, lambda: cupy.add(a_cp[:1], b_cp[:1]))
    add_frac = 3 * nbytes / add_s / copy_bw
    cupy_frac = 3 * nbytes / cupy_add_s / copy_bw
    print(f"device-to-device copy: {copy_bw / 1e9:.0f} GB/s")
    print(f"add 2^28 float32:      {add_frac:.2f} of copy bandwidth (goal >= 0.9; CuPy {cupy_frac:.2f})")
    print(f"add, one transposed:   {add_s / add_t_s:.2f} of contiguous (goal >= 0.5)")
    print(f"sum 2^28 float32:      {nbytes / sum_s / copy_bw:.2f} of copy bandwidth (goal >= 0.85)")
    ratio = launch_s / cupy_launch_s
    print(f"1-element add launch:  {launch_s * 1e6:.1f} us, {ratio:.2f}x CuPy (goal <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
