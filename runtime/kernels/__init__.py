"""Hand-written kernels (CPU and CUDA through the array module) and the helpers of the generated ones."""

import warnings as _warnings

# Note [Floating-point warnings]
# PyTorch's kernels never warn: `tensor([1.]) / 0` is inf, `log(tensor([0.]))` is -inf, silently. NumPy
# reports each such result with a RuntimeWarning ("divide by zero encountered in divide", "overflow
# encountered in exp", "invalid value encountered in log", "... in cast"). Wrapping each kernel in
# `np.errstate` costs 2-3 us a call (a context variable set and reset, plus the object: more than the whole
# kernel on a small tensor), so the warnings are filtered instead, once, here: NumPy attributes them to the
# Python frame that called the ufunc, so a filter on the kernel modules' names silences exactly the
# warnings raised inside opgen's CPU kernels (the generated ones, and runtime.kernels.*) and leaves the
# user's own NumPy code warning as before, at no cost per call. A filter the user adds later ("error",
# "always") comes first and wins, as does a `warnings.catch_warnings()` block around the first import,
# which drops filters added inside it; the few kernels that must never warn whatever the filters keep their
# own `np.errstate`.
_warnings.filterwarnings(
    "ignore", message=r"(divide by zero|overflow|invalid value|underflow) encountered in ",
    category=RuntimeWarning, module=r"(generated\._cpu_kernels|runtime\.kernels\.\w+)\Z")
