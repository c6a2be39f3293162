"""G.compile against eager execution, NumPy and PyTorch (eager and torch.compile), one thread each, measured in
the same run:

    OPENBLAS_NUM_THREADS=1 python3 bench/bench_compile.py

- the tanh-GELU with a residual scale, 0.5*x*(1+tanh(0.7978845608*(x+0.044715*x^3)))*1.5 + x, at 10^6 float32;
- the first call (capture and C++ compile, cold kernel cache) and the first call in a new process with the
  kernel cache warm;
- a transformer block (layer norm, one-head attention with softmax, tanh-GELU MLP 256-1024-256, residuals)
  forward and backward at batch 8, sequence 128, width 256: the compiled function returns the block's output,
  and `out.backward(grad)` runs its compiled backward; beside it the block's matrix products alone (forward
  and backward GEMMs) in PyTorch, the floor of any implementation whose GEMMs run at PyTorch's speed;
- the MLP 32-64-10 training step (batch 32, cross entropy, SGD momentum 0.9): the loss is the compiled
  function, `loss.backward()` runs the compiled backward, `optimizer.step()` runs eagerly;
  plus the first compile of that training step, and the same step written whole in the compiled function
  (`opt.zero_grad()`, the loss, `loss.backward()`, `opt.step()` inside: one compiled program);
- the demo's training loop (demo/train.py: its data, its default model, the CNN where conv ops exist, Adam,
  batch 64 in train mode): per batch the step, then the loss read with `.item()` and the predictions with
  argmax as the demo does; opgen eager, the step compiled whole, and PyTorch eager with the same weights.
Goals (issue 25): GELU compiled <= 0.8x torch.compile's time and <= 0.3x opgen eager's; transformer block and
MLP step <= 0.6x PyTorch eager; the demo loop <= 0.85x; a cached compile in a new process within 0.5 s.
Run with OPENBLAS_NUM_THREADS=1 (PyTorch is set to one thread here).

    python3 bench/bench_compile.py --threads

prints the thread calibration that the runtime makes once per machine (runtime/compile/thread_split.py, Note
[Threads of fused kernels]: the crossover from which a fused kernel splits over threads) and measures real
fused kernels (the GELU-residual, a scaled softmax over rows of 256) at 2^12..2^20 elements on one thread
and on two, in one run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
N = 1_000_000


def gelu(x, tanh):  # type: ignore[no-untyped-def]
    return 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x


def best(fn, rounds: int = 15) -> float:  # type: ignore[no-untyped-def]
    fn()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def medians(fns, rounds: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """The median seconds of each of `fns` (name -> function), timed in turns: one call of each per round,
    so that a change of the machine's load during the run reaches every row alike (the machine this runs on
    is shared; rows timed one after another drifted by 20% against each other)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: float(np.median(ts)) for name, ts in times.items()}


GELU_FIRST_CALL = (
    "import time, generated as G\n"
    "x = G.randn(1000)\n"
    "f = G.compile(lambda x: 0.5 * x * (1 + G.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x)\n"
    "t = time.perf_counter(); f(x); print(time.perf_counter() - t)\n")

# the MLP 32-64-10 training step written whole (zero_grad, loss, backward, SGD momentum step) compiled: its
# first call captures, builds (or loads) the kernels and checks the program by taking the step again; one
# eager step first loads the kernel modules that any first step loads (Note [Kernels loaded on first call])
STEP_FIRST_CALL = (
    "import time, generated as G\n"
    "F = G.nn.functional\n"
    "ps = [G.randn(64, 32).requires_grad_(), G.zeros(64).requires_grad_(), G.randn(10, 64).requires_grad_(),\n"
    "      G.zeros(10).requires_grad_()]\n"
    "opt = G.optim.SGD(ps, lr=0.01, momentum=0.9)\n"
    "def step(x, y):\n"
    "    opt.zero_grad()\n"
    "    loss = F.cross_entropy(F.linear(F.relu(F.linear(x, ps[0], ps[1])), ps[2], ps[3]), y)\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    return loss\n"
    "f = G.compile(step)\n"
    "x, y = G.randn(32, 32), G.randint(0, 10, (32,))\n"
    "step(x, y)\n"
    "t = time.perf_counter(); f(x, y); f(x, y); print(time.perf_counter() - t)\n")


def first_call_seconds(cache: str, code: str = GELU_FIRST_CALL) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": cache, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    import generated as G

    x_np = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x = G.from_numpy(x_np)
    compiled = G.compile(lambda t: gelu(t, G.tanh))
    compiled(x)
    rows = {
        "NumPy": best(lambda: gelu(x_np, np.tanh)),
        "opgen eager": best(lambda: gelu(x, G.tanh)),
        "opgen G.compile": best(lambda: compiled(x)),
    }
    try:
        import torch

        torch.set_num_threads(1)
        xt = torch.from_numpy(x_np)
        rows["PyTorch eager"] = best(lambda: gelu(xt, torch.tanh))
        tc = torch.compile(lambda t: gelu(t, torch.tanh))
        tc(xt)
        rows["torch.compile"] = best(lambda: tc(xt))
    except Exception as e:
        print(f"(PyTorch rows left out: {type(e).__name__}: {e})")
    print(f"GELU-residual at {N:,} float32, one thread (median of 15):")
    for name, seconds in rows.items():
        print(f"  {name:<18} {seconds * 1e3:8.2f} ms")
    print(f"  compiled / opgen eager     {rows['opgen G.compile'] / rows['opgen eager']:.2f}  (goal <= 0.3)")
    if "torch.compile" in rows:
        print(f"  compiled / torch.compile   {rows['opgen G.compile'] / rows['torch.compile']:.2f}  (goal <= 0.8)")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_call_seconds(cache)
        warm = first_call_seconds(cache)
    print(f"first call, cold kernel cache: {cold:.2f} s; first call in a new process, cache warm: {warm:.2f} s "
          "(goal <= 0.5 s)")


def block(lib, params, x):  # type: ignore[no-untyped-def]
    """One pre-norm transformer block on (batch, seq, width) with `lib` G or torch."""
    F = lib.nn.functional
    ln1w, ln1b, wqkv, bqkv, wo, bo, ln2w, ln2b, w1, b1, w2, b2 = params
    d = x.shape[-1]
    h = F.layer_norm(x, (d,), ln1w, ln1b)
    q, k, v = F.linear(h, wqkv, bqkv).chunk(3, dim=-1)
    att = F.softmax(q @ k.transpose(-2, -1) * (1.0 / d ** 0.5), dim=-1)
    x = x + F.linear(att @ v, wo, bo)
    h = F.linear(F.layer_norm(x, (d,), ln2w, ln2b), w1, b1)
    return x + F.linear(F.gelu(h, approximate="tanh"), w2, b2)


def block_params(d: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    shapes = [(d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,)]
    return [(rng.standard_normal(s) * (0.05 if len(s) == 2 else 1)).astype(np.float32) for s in shapes]


def block_matmuls(torch, batch: int, seq: int, d: int):  # type: ignore[no-untyped-def]
    """The block's matrix products alone, forward and backward, in PyTorch: for each linear (x @ W.T) its
    product, the input's gradient (dy @ W) and the weight's (dy.T @ x); for each batched product of the
    attention, it and its two gradients. No implementation that runs these at PyTorch's speed can take
    less than this."""
    g = torch.Generator().manual_seed(4)
    rows = batch * seq

    def r(*shape):  # type: ignore[no-untyped-def]
        return torch.randn(*shape, generator=g)
    linears = [(r(rows, k), r(n, k), r(rows, n)) for k, n in ((d, 3 * d), (d, d), (d, 4 * d), (4 * d, d))]
    q, k, v, att, datt = r(batch, seq, d), r(batch, seq, d), r(batch, seq, d), r(batch, seq, seq), r(batch, seq, seq)
    dout = r(batch, seq, d)

    def run() -> None:
        for x, w, dy in linears:
            x @ w.T
            dy @ w
            dy.T @ x
        s = q @ k.transpose(-2, -1)
        datt @ k
        datt.transpose(-2, -1) @ q  # the gradients of q @ k.T
        att @ v
        dout @ v.transpose(-2, -1)
        att.transpose(-2, -1) @ dout  # the gradients of att @ v
        del s
    return run


def block_matmul_flops(batch: int, seq: int, d: int) -> int:
    """The floating-point operations of block_matmuls: 2*m*k*n per product, three products per linear and per
    batched product of the attention."""
    rows = batch * seq
    linears = sum(3 * 2 * rows * k * n for k, n in ((d, 3 * d), (d, d), (d, 4 * d), (4 * d, d)))
    return linears + 6 * 2 * batch * seq * seq * d


def transformer_rows(G, rounds: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    batch, seq, d = 8, 128, 256
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((batch, seq, d)).astype(np.float32)
    g_np = rng.standard_normal((batch, seq, d)).astype(np.float32)
    ps = [G.from_numpy(a.copy()).requires_grad_(True) for a in block_params(d)]
    x, g = G.from_numpy(x_np), G.from_numpy(g_np)
    compiled = G.compile(lambda t: block(G, ps, t))

    def step(f):  # type: ignore[no-untyped-def]
        def run() -> None:
            for p in ps:
                p.grad = None
            f(x).backward(g)
        return run

    fns = {"opgen eager": step(lambda t: block(G, ps, t)), "opgen G.compile": step(compiled)}
    try:
        import torch

        tp = [torch.from_numpy(a.copy()).requires_grad_(True) for a in block_params(d)]
        xt, gt = torch.from_numpy(x_np), torch.from_numpy(g_np)

        def torch_step() -> None:
            for p in tp:
                p.grad = None
            block(torch, tp, xt).backward(gt)
        fns["PyTorch eager"] = torch_step
        fns["PyTorch, matmuls only"] = block_matmuls(torch, batch, seq, d)
    except ImportError:
        pass
    return medians(fns, rounds)


def mlp_data() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The MLP 32-64-10 benchmark's batch (inputs, labels) and weights."""
    rng = np.random.default_rng(3)
    x_np = rng.standard_normal((32, 32)).astype(np.float32)
    y_np = rng.integers(0, 10, 32)
    w = [a.astype(np.float32) for a in (rng.standard_normal((64, 32)) * 0.1, np.zeros(64),
                                       rng.standard_normal((10, 64)) * 0.1, np.zeros(10))]
    return x_np, y_np, w


def mlp_loss(lib, ps, x, y):  # type: ignore[no-untyped-def]
    F = lib.nn.functional
    return F.cross_entropy(F.linear(F.relu(F.linear(x, ps[0], ps[1])), ps[2], ps[3]), y)


def mlp_whole_step(lib, ps):  # type: ignore[no-untyped-def]
    """The training step written whole (zero_grad, loss, backward, SGD momentum step) over `ps`."""
    opt = lib.optim.SGD(ps, lr=0.01, momentum=0.9)

    def step(x, y):  # type: ignore[no-untyped-def]
        opt.zero_grad()
        loss = mlp_loss(lib, ps, x, y)
        loss.backward()
        opt.step()
        return loss
    return step


def mlp_rows(G, rounds: int) -> tuple[dict[str, float], float]:  # type: ignore[no-untyped-def]
    x_np, y_np, w = mlp_data()

    def stepper(lib, f, ps, x, y):  # type: ignore[no-untyped-def]
        opt = lib.optim.SGD(ps, lr=0.01, momentum=0.9)

        def run() -> None:
            opt.zero_grad()
            f(x, y).backward()
            opt.step()
        return run

    x, y = G.from_numpy(x_np), G.from_numpy(y_np)
    ps = [G.from_numpy(a.copy()).requires_grad_(True) for a in w]
    eager = stepper(G, lambda a, b: mlp_loss(G, ps, a, b), ps, x, y)
    wps = [G.from_numpy(a.copy()).requires_grad_(True) for a in w]
    whole = G.compile(mlp_whole_step(G, wps))
    t = time.perf_counter()
    whole(x, y)
    first_whole = time.perf_counter() - t
    cps = [G.from_numpy(a.copy()).requires_grad_(True) for a in w]
    compiled_fn = G.compile(lambda a, b: mlp_loss(G, cps, a, b))
    t = time.perf_counter()
    compiled_fn(x, y).backward()
    first = time.perf_counter() - t
    compiled = stepper(G, compiled_fn, cps, x, y)
    fns = {"opgen eager": eager, "opgen G.compile": compiled, "opgen step compiled": lambda: whole(x, y)}
    try:
        import torch

        tps = [torch.from_numpy(a.copy()).requires_grad_(True) for a in w]
        xt, yt = torch.from_numpy(x_np), torch.from_numpy(y_np)
        fns["PyTorch eager"] = stepper(torch, lambda a, b: mlp_loss(torch, tps, a, b), tps, xt, yt)
    except ImportError:
        pass
    return medians(fns, rounds), max(first, first_whole)


def demo_rows(G, batches: int, rounds: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Seconds per batch of the demo's training loop (see the module's docstring), median over `rounds`
    passes of `batches` batches each."""
    from demo.data import train_test_split
    from demo.train import build_model, has_conv_ops

    kind = "cnn" if has_conv_ops() else "mlp"
    from runtime.kernels import conv_pool_cpp
    conv_pool_cpp.wait()  # time the C++ conv/pool kernels, not NumPy while they build (first run on a machine)
    size, batch = 12, 64
    data, _ = train_test_split(batch * batches, 10, size=size)
    G.manual_seed(0)
    model = build_model(kind, size)
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}

    def loop(lib, model, step):  # type: ignore[no-untyped-def]
        xs = [lib.tensor(data.images[i:i + batch]) for i in range(0, len(data.labels), batch)]
        ys = [lib.tensor(data.labels[i:i + batch]) for i in range(0, len(data.labels), batch)]

        def run() -> None:
            model.train()
            for x, y in zip(xs, ys, strict=True):
                loss, logits = step(x, y)
                float(loss.item())
                int((logits.detach().numpy().argmax(axis=1) == y.numpy()).sum())
        return run

    def stepper(lib, model):  # type: ignore[no-untyped-def]
        opt = lib.optim.Adam(model.parameters(), lr=3e-3)
        F = lib.nn.functional

        def step(x, y):  # type: ignore[no-untyped-def]
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss, logits
        return step

    def fresh():  # type: ignore[no-untyped-def]
        m = build_model(kind, size)
        m.load_state_dict({k: G.from_numpy(v.copy()) for k, v in state.items()})
        return m

    m_eager, m_comp = fresh(), fresh()
    rows = {"opgen eager": loop(G, m_eager, stepper(G, m_eager)),
            "opgen step compiled": loop(G, m_comp, G.compile(stepper(G, m_comp)))}
    try:
        import torch

        tm = demo_torch_model(torch, kind, size)
        tm.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})
        rows["PyTorch eager"] = loop(torch, tm, stepper(torch, tm))
    except ImportError:
        pass
    return {name: seconds / batches for name, seconds in medians(rows, rounds).items()}


def demo_torch_model(torch, kind: str, size: int):  # type: ignore[no-untyped-def]
    """demo/train.py's model in PyTorch (same layers, same state_dict names)."""
    nn = torch.nn
    if kind == "cnn":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Dropout(0.2), nn.Linear(32 * (size // 4) ** 2, 10))
    return nn.Sequential(nn.Flatten(), nn.Linear(size * size, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10))


def training_main() -> None:
    import generated as G

    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass

    rows = transformer_rows(G, 7)
    print("transformer block forward+backward, batch 8, seq 128, width 256, one thread (median of 7, rows timed "
          "in turns):")
    for name, seconds in rows.items():
        print(f"  {name:<18} {seconds * 1e3:8.2f} ms")
    if "PyTorch eager" in rows:
        print(f"  compiled / PyTorch eager   {rows['opgen G.compile'] / rows['PyTorch eager']:.2f}  (goal <= 0.6)")
        print(f"  matmul floor / PyTorch eager {rows['PyTorch, matmuls only'] / rows['PyTorch eager']:.2f}  (the "
              "block's GEMMs alone at PyTorch's speed: no ratio below this is reachable without faster GEMMs)")
        flops = block_matmul_flops(8, 128, 256)
        print(f"  the GEMMs are {flops / 1e9:.2f} GFLOP, run by PyTorch at "
              f"{flops / rows['PyTorch, matmuls only'] / 1e9:.0f} GFLOP/s; at the goal the whole block would run "
              f"at {flops / (0.6 * rows['PyTorch eager']) / 1e9:.0f} GFLOP/s of GEMMs alone (one core's FMA peak "
              "is 2 x 8 x 2 FLOP per cycle with AVX2)")
    print(f"  compiled / opgen eager     {rows['opgen G.compile'] / rows['opgen eager']:.2f}")
    rows, first = mlp_rows(G, 200)
    print("MLP 32-64-10 training step, batch 32, SGD momentum, one thread (median of 200, rows timed in turns):")
    for name, seconds in rows.items():
        print(f"  {name:<20} {seconds * 1e6:8.1f} us")
    if "PyTorch eager" in rows:
        print(f"  compiled / PyTorch eager   {rows['opgen G.compile'] / rows['PyTorch eager']:.2f}  (goal <= 0.6)")
    print(f"  compiled / opgen eager     {rows['opgen G.compile'] / rows['opgen eager']:.2f}")
    if "PyTorch eager" in rows:
        print(f"  step compiled / PyTorch eager {rows['opgen step compiled'] / rows['PyTorch eager']:.2f}  "
              "(goal <= 0.6)")
    print(f"  first compile of the step (capture, forward and backward, C++ build; kernel cache as found): "
          f"{first:.2f} s (goal <= 10 s)")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_call_seconds(cache, STEP_FIRST_CALL)
        warm = first_call_seconds(cache, STEP_FIRST_CALL)
    print(f"  the whole step's first two calls (two step programs: without and with .grads at entry), in a new "
          f"process: cold kernel cache {cold:.2f} s (goal <= 10 s), cache warm {warm:.2f} s (goal <= 0.5 s)")
    rows = demo_rows(G, 10, 15)
    print("demo training loop (demo/train.py's data, model and Adam; batch 64), one thread, per batch "
          "(median of 15 passes of 10 batches, rows timed in turns):")
    for name, seconds in rows.items():
        print(f"  {name:<20} {seconds * 1e6:8.1f} us")
    if "PyTorch eager" in rows:
        print(f"  step compiled / PyTorch eager {rows['opgen step compiled'] / rows['PyTorch eager']:.2f}  "
              "(goal <= 0.85)")
    print(f"  step compiled / opgen eager   {rows['opgen step compiled'] / rows['opgen eager']:.2f}")


def threads_main() -> None:
    import generated as G
    from runtime.compile import thread_split

    n = 2
    crossover, rows = thread_split.measure(n)
    print(f"calibration kernel (runtime/compile/thread_split.py), one thread / {n} threads (median of several):")
    for size, one, many in rows:
        print(f"  2^{size.bit_length() - 1:<3} {one * 1e6:9.1f} us {many * 1e6:9.1f} us  ratio {many / one:.2f}")
    print(f"  crossover measured now: {'never' if crossover is None else crossover} "
          f"(the runtime's, cached for this machine: {thread_split.threshold(n)})")
    print(f"fused kernel time, one thread / {n} threads (median of 25):")
    real = thread_split.kernel_threads
    for name, fn in (("GELU-residual", lambda t: gelu(t, G.tanh)),
                     ("softmax rows", lambda t: G.nn.functional.softmax(t * 0.125, dim=-1))):
        for k in range(12, 21, 2):
            x = G.randn(2 ** k // 256, 256)
            f = G.compile(fn)
            f(x)
            times = []
            for threads in (1, n):
                thread_split.kernel_threads = lambda threads=threads: threads  # type: ignore[misc]
                thread_split._known[n] = 0  # split at every size
                times.append(best(lambda f=f, x=x: f(x), 25))
            print(f"  {name:<14} 2^{k:<3} {times[0] * 1e6:9.1f} us {times[1] * 1e6:9.1f} us  "
                  f"ratio {times[1] / times[0]:.2f}")
    thread_split.kernel_threads = real
    thread_split._known.clear()


if __name__ == "__main__":
    if "--threads" in sys.argv:
        threads_main()
    else:
        main()
        training_main()
