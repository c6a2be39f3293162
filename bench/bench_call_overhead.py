"""The Python cost of calling a compiled function, against torch.compile's, measured in the same run:

    OPENBLAS_NUM_THREADS=1 python3 bench/bench_call_overhead.py [--profile]

- a tiny pointwise function (`t * 2 + 1` on 16 float32): the compiled call is almost all per-call cost
  (the key, the guards, the generated program's Python, one fused C++ call); beside it opgen eager, PyTorch
  eager and torch.compile of the same function;
- the MLP 32-64-10 training step (batch 32, SGD momentum) written whole in the compiled function, and the
  loss alone compiled (its backward runs the compiled backward through one autograd node);
- the demo's training step (demo/train.py's CNN where conv ops exist, Adam, batch 64), compiled whole.

Each row is a median of calls timed in turns (one call of each row per round). For each compiled function
a breakdown follows: the call key (the input signature), the Python-state guards (Note [Guards on Python
state]), and the rest (the program). `--profile` adds cProfile's top functions for each compiled call.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def medians(fns: dict[str, Any], rounds: int, inner: int = 1) -> dict[str, float]:
    """Median seconds per call of each of `fns`, timed in turns (`inner` calls per timing)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = time.perf_counter()
            for _ in range(inner):
                fn()
            times[name].append((time.perf_counter() - t) / inner)
    return {name: float(np.median(ts)) for name, ts in times.items()}


def breakdown(compiled: Any, args: tuple[Any, ...], rounds: int = 200, inner: int = 20) -> dict[str, float]:
    """Median seconds of the call key and of the Python-state guards of `compiled` for `args`, and of a
    whole call (timed in turns)."""
    from runtime.compile import _signature
    from runtime.compile.guards import python_state

    fn = compiled.fn
    plan = getattr(compiled, "state_plan", None)  # (the plan each compiled function keeps)
    state = plan.state if plan is not None else lambda a, k: python_state(fn, a, k)
    parts = {"call": lambda: compiled(*args), "signature": lambda: _signature(args, {}),
             "python_state": lambda: state(args, {})}
    return medians(parts, rounds, inner)


def profile(name: str, call: Any, calls: int = 2000) -> None:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        call()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(14)
    print(f"--- cProfile, {calls} calls of {name} (sorted by own time) ---")
    print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))


def tiny(G: Any, torch: Any) -> tuple[dict[str, float], Any, tuple[Any, ...]]:
    x_np = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    x = G.from_numpy(x_np)
    f = G.compile(lambda t: t * 2 + 1)
    f(x)
    rows = {"opgen eager": lambda: x * 2 + 1, "opgen G.compile": lambda: f(x)}
    if torch is not None:
        xt = torch.from_numpy(x_np)
        tc = torch.compile(lambda t: t * 2 + 1)
        tc(xt)
        rows["PyTorch eager"] = lambda: xt * 2 + 1
        rows["torch.compile"] = lambda: tc(xt)
    return medians(rows, 300, 20), f, (x,)


def mlp(G: Any, torch: Any) -> tuple[dict[str, float], list[tuple[str, Any, tuple[Any, ...], Any]]]:
    from bench_compile import mlp_data, mlp_loss, mlp_whole_step

    x_np, y_np, w = mlp_data()
    x, y = G.from_numpy(x_np), G.from_numpy(y_np)
    wps = [G.from_numpy(a.copy()).requires_grad_(True) for a in w]
    whole = G.compile(mlp_whole_step(G, wps))
    whole(x, y)
    whole(x, y)
    cps = [G.from_numpy(a.copy()).requires_grad_(True) for a in w]
    loss_fn = G.compile(lambda a, b: mlp_loss(G, cps, a, b))
    opt = G.optim.SGD(cps, lr=0.01, momentum=0.9)

    def loss_step() -> None:
        opt.zero_grad()
        loss_fn(x, y).backward()
        opt.step()
    loss_step()
    rows = {"opgen step compiled": lambda: whole(x, y), "opgen loss compiled": loss_step}
    if torch is not None:
        tps = [torch.from_numpy(a.copy()).requires_grad_(True) for a in w]
        xt, yt = torch.from_numpy(x_np), torch.from_numpy(y_np)
        tstep = mlp_whole_step(torch, tps)
        rows["PyTorch eager step"] = lambda: tstep(xt, yt)
    return medians(rows, 200), [("MLP step compiled", whole, (x, y), lambda: whole(x, y)),
                                ("MLP loss compiled (+ backward)", loss_fn, (x, y), lambda: loss_fn(x, y).backward())]


def demo(G: Any, torch: Any) -> tuple[dict[str, float], tuple[str, Any, tuple[Any, ...], Any]]:
    from demo.data import train_test_split
    from demo.train import build_model, has_conv_ops
    from runtime.kernels import conv_pool_cpp

    conv_pool_cpp.wait()
    kind = "cnn" if has_conv_ops() else "mlp"
    size, batch = 12, 64
    data, _ = train_test_split(batch, 10, size=size)
    G.manual_seed(0)
    model = build_model(kind, size)
    model.train()

    def stepper(lib: Any, model: Any) -> Any:
        opt = lib.optim.Adam(model.parameters(), lr=3e-3)
        F = lib.nn.functional

        def step(x: Any, y: Any) -> Any:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss, logits
        return step

    x, y = G.tensor(data.images[:batch]), G.tensor(data.labels[:batch])
    compiled = G.compile(stepper(G, model))
    compiled(x, y)
    compiled(x, y)
    rows = {"opgen step compiled": lambda: compiled(x, y)}
    if torch is not None:
        from bench_compile import demo_torch_model

        tm = demo_torch_model(torch, kind, size)
        tm.train()
        xt, yt = torch.tensor(data.images[:batch]), torch.tensor(data.labels[:batch])
        ts = stepper(torch, tm)
        rows["PyTorch eager step"] = lambda: ts(xt, yt)
    return medians(rows, 60), (f"demo {kind} step compiled", compiled, (x, y), lambda: compiled(x, y))


def show(title: str, rows: dict[str, float]) -> None:
    print(title)
    for name, seconds in rows.items():
        print(f"  {name:<22} {seconds * 1e6:9.1f} us")


def main() -> None:
    import warnings

    import generated as G

    warnings.simplefilter("ignore", RuntimeWarning)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rows, f, args = tiny(G, torch)
    show("tiny pointwise call, t * 2 + 1 on 16 float32 (median of 300 x 20 calls, rows timed in turns):", rows)
    figures = {"tiny compiled call (us)": f"{rows['opgen G.compile'] * 1e6:.1f}"}
    if "torch.compile" in rows:
        print(f"  G.compile call / torch.compile call  {rows['opgen G.compile'] / rows['torch.compile']:.2f}")
        print(f"  G.compile call / opgen eager         {rows['opgen G.compile'] / rows['opgen eager']:.2f}")
        figures["tiny compiled call / torch.compile call"] = f"{rows['opgen G.compile'] / rows['torch.compile']:.2f}"
    calls = [("tiny compiled", f, args, lambda: f(*args))]
    rows, more = mlp(G, torch)
    calls += more
    show("MLP 32-64-10 training step, batch 32, SGD momentum (median of 200, in turns):", rows)
    if "PyTorch eager step" in rows:
        for name in ("opgen step compiled", "opgen loss compiled"):
            print(f"  {name} / PyTorch eager  {rows[name] / rows['PyTorch eager step']:.2f}")
            figures[f"MLP {name.removeprefix('opgen ')} / PyTorch eager"] = \
                f"{rows[name] / rows['PyTorch eager step']:.2f}"
    rows, call = demo(G, torch)
    calls.append(call)
    show("demo training step, batch 64, Adam (median of 60, in turns):", rows)
    if "PyTorch eager step" in rows:
        print(f"  step compiled / PyTorch eager  {rows['opgen step compiled'] / rows['PyTorch eager step']:.2f}")
        ratio = rows["opgen step compiled"] / rows["PyTorch eager step"]
        figures["demo step compiled / PyTorch eager"] = f"{ratio:.2f}"
    print("per-call breakdown of each compiled function (median, us): call key, Python-state guards, whole call")
    for name, compiled, a, _ in calls:
        b = breakdown(compiled, a, rounds=100 if "demo" in name else 200, inner=5 if "demo" in name else 20)
        print(f"  {name:<32} key {b['signature'] * 1e6:6.2f}  guards {b['python_state'] * 1e6:6.2f}  "
              f"call {b['call'] * 1e6:8.1f}")
        figures[f"{name}: key + guards (us)"] = f"{(b['signature'] + b['python_state']) * 1e6:.2f}"
    print("\nfigure  value  goal  ok")  # (bench/run_all.py's table; the goals of issue 25 are bench_compile.py's)
    for label, value in figures.items():
        print(f"{label}  {value}  -  -")
    if "--profile" in sys.argv:
        for name, _, _, call in calls:
            profile(name, call, 300 if "demo" in name else 2000)


if __name__ == "__main__":
    main()
