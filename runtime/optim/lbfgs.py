"""`G.optim.LBFGS`: limited-memory BFGS over all parameters as one flat vector, PyTorch's algorithm.

`step(closure)` runs up to `max_iter` iterations (and `max_eval` evaluations of the closure). Each iteration
builds the search direction d from the last `history_size` pairs (s = step taken, y = change of gradient;
a pair is kept only when y.s > 1e-10) with the two-loop recursion, scaled by H = y.s / y.y of the newest pair,
then moves along d: by a fixed step t = lr (on the very first iteration min(1, 1 / |g|_1) * lr), or, with
`line_search_fn="strong_wolfe"`, by the step a bracketing line search with cubic interpolation finds to satisfy
the strong Wolfe conditions (sufficient decrease c1 = 1e-4, curvature c2 = 0.9). It stops early when the
largest gradient entry is <= tolerance_grad, or a step or the change of the loss is < tolerance_change.
The history lives in the state of the first parameter, so it carries over between step() calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime import opcall
from runtime.autograd.grad_mode import enable_grad, no_grad
from runtime.optim.optimizer import Optimizer, ParamsT, check_non_negative
from runtime.tensor import Tensor

Evaluate = Callable[[float], tuple[float, Tensor]]


def cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                  bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to `bounds`
    (default: between x1 and x2); the middle of the bounds when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = d2_square**0.5
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def strong_wolfe(evaluate: Evaluate, t: float, d: Tensor, f: float, g: Tensor, gtd: float, c1: float = 1e-4,
                 c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple[float, Tensor, float, int]:
    """A step t along d satisfying the strong Wolfe conditions: (loss, flat gradient, t, evaluations).

    Phase one grows t (cubic extrapolation within [t + 0.01 (t - t_prev), 10 t]) until the interval
    [t_prev, t] brackets an acceptable step; phase two shrinks the bracket (cubic interpolation, kept at least
    10% away from its ends when progress stalls) until a step is accepted or the bracket is tiny.
    """
    d_norm = float(d.abs().max().item())
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = float(g_new.dot(d).item())
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    bracket: list[float] = []
    bf: list[float] = []
    bg: list[Tensor] = []
    bgtd: list[float] = []
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg, bgtd, done = [t], [f_new], [g_new], [gtd_new], True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        t_next = cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d).item())
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bf, bg, bgtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_minimum(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d).item())
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new, gtd_new
    return bf[low], bg[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS: step(closure) runs up to max_iter quasi-Newton iterations with history_size curvature pairs;
    line_search_fn None or "strong_wolfe"; a single parameter group."""
    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check_non_negative("learning rate", lr)
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                                  "history_size": history_size, "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    # -- the parameters as one flat vector -------------------------------------------------------------
    def _flat_grad(self) -> Tensor:
        G = opcall.api
        return G.cat([p.grad.reshape(-1) if p.grad is not None else G.zeros(p.numel(), dtype=p.dtype,
                                                                             device=p.device)
                      for p in self._params])

    def _add_along(self, t: float, d: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].view(p.shape), alpha=t)
            offset += n

    def _evaluate_at(self, closure: Callable[[], Any], x: list[Tensor], t: float, d: Tensor) -> tuple[float, Tensor]:
        self._add_along(t, d)
        with enable_grad():
            loss = float(closure())
        flat = self._flat_grad()
        for p, saved in zip(self._params, x, strict=True):
            p.copy_(saved)
        return loss, flat

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        if closure is None:
            raise RuntimeError("LBFGS.step() needs a closure that re-evaluates the model and returns the loss")
        with no_grad():
            return self._minimise(closure)

    def _minimise(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(flat_grad.abs().max().item()) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        al = state.setdefault("al", [None] * history_size)  # the two-loop coefficients, kept as PyTorch keeps them
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = float(y.dot(s).item())
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y).item())
                d = self._two_loop(flat_grad, old_dirs, old_stps, ro, h_diag, al)
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(flat_grad.abs().sum().item())) * lr
            else:
                t = lr
            gtd = float(flat_grad.dot(d).item())
            if gtd > -tol_change:
                break
            evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, evals = strong_wolfe(
                    lambda step, x=x_init, d=d: self._evaluate_at(closure, x, step, d), t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_along(t, d)
                converged = float(flat_grad.abs().max().item()) <= tol_grad
            else:
                self._add_along(t, d)
                converged = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    converged = float(flat_grad.abs().max().item()) <= tol_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals
            if n_iter == max_iter or current_evals >= max_eval or converged:
                break
            if float(d.mul(t).abs().max().item()) <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update({"d": d, "t": t, "old_dirs": old_dirs, "old_stps": old_stps, "ro": ro, "H_diag": h_diag,
                      "prev_flat_grad": prev_flat_grad, "prev_loss": prev_loss})
        return orig_loss

    @staticmethod
    def _two_loop(flat_grad: Tensor, old_dirs: list[Tensor], old_stps: list[Tensor], ro: list[float],
                  h_diag: float, al: list[Any]) -> Tensor:
        """-H g for the L-BFGS estimate H of the inverse Hessian (Nocedal and Wright, algorithm 7.4); the
        first-loop coefficients are written into `al` (the optimizer state's list of history_size)."""
        n = len(old_dirs)
        q = flat_grad.neg()
        for i in range(n - 1, -1, -1):
            al[i] = float(old_stps[i].dot(q).item()) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        r = q.mul(h_diag)
        for i in range(n):
            be_i = float(old_dirs[i].dot(r).item()) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return r
