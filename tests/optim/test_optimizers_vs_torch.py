"""Every optimizer of torch.optim against PyTorch: the same parameters, the same loss, several steps.

The loss is a fixed function of two parameters (a matrix and a vector, float64), so each step's gradient
depends on the trajectory: any difference in an update rule grows over the steps. Each case also checks
the param-group keys, and that a state_dict taken half-way and loaded into a fresh optimizer continues the
same trajectory (state keyed by parameter index, as PyTorch).
"""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

STEPS = 6
CASES = [
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05, "amsgrad": True}), ("Adam", {"lr": 0.05, "decoupled_weight_decay": True,
                                                      "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.05, "foreach": False}), ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 0.05}), ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05}), ("ASGD", {"lr": 0.05, "t0": 2, "weight_decay": 0.01}),
    ("NAdam", {"lr": 0.05}), ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}), ("RAdam", {"lr": 0.05, "betas": (0.5, 0.6), "weight_decay": 0.1}),
    ("Rprop", {"lr": 0.05}), ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Adafactor", {"lr": 0.05}), ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "maximize": False}),
]


def _loss(lib, w, b):
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=lib.float64)
    y = lib.tensor([0.5, -1.0, 2.0, 0.0, 1.0], dtype=lib.float64)
    out = lib.tanh(x @ w + b)            # (4, 5)
    return ((out - y) ** 2).mean() + (w ** 4).sum() * 0.01


def _init(lib):
    rng = np.random.default_rng(3)
    w = lib.nn.Parameter(lib.tensor(rng.standard_normal((3, 5)), dtype=lib.float64))
    b = lib.nn.Parameter(lib.tensor(rng.standard_normal(5), dtype=lib.float64))
    return w, b


def _run(lib, name, kwargs, steps, resume_at=None):
    w, b = _init(lib)
    opt = getattr(lib.optim, name)([w, b], **kwargs)
    for i in range(steps):
        if resume_at is not None and i == resume_at:
            saved = opt.state_dict()
            opt = getattr(lib.optim, name)([w, b], **kwargs)
            opt.load_state_dict(saved)
        opt.zero_grad()
        _loss(lib, w, b).backward()
        opt.step()
    return opt, w.detach().numpy(), b.detach().numpy()


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_matches_torch(name: str, kwargs: dict) -> None:
    t_opt, tw, tb = _run(torch, name, kwargs, STEPS)
    g_opt, gw, gb = _run(G, name, kwargs, STEPS)
    np.testing.assert_allclose(gw, tw, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gb, tb, rtol=1e-6, atol=1e-9)
    t_sd, g_sd = t_opt.state_dict(), g_opt.state_dict()
    assert sorted(g_sd["param_groups"][0]) == sorted(t_sd["param_groups"][0])
    assert sorted(g_sd["state"]) == sorted(t_sd["state"])
    for index, t_state in t_sd["state"].items():
        assert sorted(g_sd["state"][index]) == sorted(t_state)


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_state_dict_round_trip_continues_the_trajectory(name: str, kwargs: dict) -> None:
    # as PyTorch, loading casts floating state (but "step") to the parameter's dtype, so a resumed run is
    # compared with PyTorch's resumed run, and with the uninterrupted one to a float32 tolerance
    _, w_straight, b_straight = _run(G, name, kwargs, STEPS)
    _, w_resumed, b_resumed = _run(G, name, kwargs, STEPS, resume_at=3)
    _, tw_resumed, tb_resumed = _run(torch, name, kwargs, STEPS, resume_at=3)
    np.testing.assert_allclose(w_resumed, tw_resumed, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b_resumed, tb_resumed, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w_resumed, w_straight, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b_resumed, b_straight, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch(line_search_fn: str | None) -> None:
    results = []
    for lib in (torch, G):
        w, b = _init(lib)
        opt = lib.optim.LBFGS([w, b], lr=0.5 if line_search_fn is None else 1, max_iter=10, history_size=5,
                              line_search_fn=line_search_fn)
        losses = []

        def closure(lib=lib, w=w, b=b, opt=opt):
            opt.zero_grad()
            loss = _loss(lib, w, b)
            loss.backward()
            return loss
        for _ in range(3):
            losses.append(float(opt.step(closure)))
        results.append((losses, w.detach().numpy(), opt.state[w]["func_evals"], opt.state[w]["n_iter"],
                        sorted(opt.state[w]), len(opt.state[w]["al"])))
    (t_losses, tw, t_evals, t_iters, t_keys, t_al), (g_losses, gw, g_evals, g_iters, g_keys, g_al) = results
    np.testing.assert_allclose(g_losses, t_losses, rtol=1e-6)
    np.testing.assert_allclose(gw, tw, rtol=1e-5, atol=1e-8)
    assert (g_evals, g_iters) == (t_evals, t_iters)
    assert (g_keys, g_al) == (t_keys, t_al)  # the state's entries, the two-loop coefficients `al` among them


def test_sparse_adam_moves_only_touched_entries() -> None:
    w = G.nn.Parameter(G.ones(4, 2, dtype=G.float64))
    opt = G.optim.SparseAdam([w], lr=0.1)
    w.grad = G.tensor([[1.0, 1.0], [0.0, 0.0], [-2.0, -2.0], [0.0, 0.0]], dtype=G.float64)
    opt.step()
    got = w.detach().numpy()
    # the first Adam step moves a touched entry by lr * sign(g) (bias corrections cancel); untouched stay
    np.testing.assert_allclose(got[:, 0], [0.9, 1.0, 1.1, 1.0], rtol=1e-6)
    # against torch with the same gradient as a sparse tensor
    tw = torch.nn.Parameter(torch.ones(4, 2, dtype=torch.float64))
    topt = torch.optim.SparseAdam([tw], lr=0.1)
    tw.grad = torch.tensor(w.grad.numpy()).to_sparse()
    topt.step()
    np.testing.assert_allclose(got, tw.detach().numpy(), rtol=1e-7)


@pytest.mark.parametrize("flags", [{"foreach": True}, {"fused": True}, {"foreach": False, "capturable": True}])
def test_implementation_flags_are_accepted_and_kept(flags: dict) -> None:
    p = G.nn.Parameter(G.zeros(2))
    opt = G.optim.Adam([p], **flags)
    for k, v in flags.items():
        assert opt.param_groups[0][k] == v


def test_differentiable_and_conflicting_flags_are_refused() -> None:
    p = G.nn.Parameter(G.zeros(2))
    with pytest.raises(NotImplementedError):
        G.optim.Adam([p], differentiable=True)
    with pytest.raises(RuntimeError):
        G.optim.Adam([p], foreach=True, fused=True)


def test_bad_hyper_parameters_are_refused() -> None:
    p = G.nn.Parameter(G.zeros(2))
    for name, kwargs in [("Adadelta", {"rho": 1.5}), ("NAdam", {"lr": -1}), ("Rprop", {"etas": (1.5, 0.5)}),
                         ("Adafactor", {"d": 0.5}), ("LBFGS", {"line_search_fn": "armijo"})]:
        with pytest.raises(ValueError):
            getattr(G.optim, name)([p], **kwargs)


def test_named_parameters_and_add_param_group() -> None:
    model = G.nn.Linear(2, 1)
    opt = G.optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    extra = G.nn.Parameter(G.zeros(3))
    opt.add_param_group({"params": [extra], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.0
    with pytest.raises(ValueError):
        opt.add_param_group({"params": [extra]})


def test_step_hooks_run_around_step() -> None:
    p = G.nn.Parameter(G.ones(2))
    p.grad = G.ones(2)
    opt = G.optim.SGD([p], lr=0.5)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", float(p[0]))))
    handle = opt.register_step_post_hook(lambda o, a, k: seen.append(("post", float(p[0]))))
    opt.step()
    handle.remove()
    opt.step()
    assert seen == [("pre", 1.0), ("post", 0.5), ("pre", 0.5)]


def test_state_dict_hooks() -> None:
    p = G.nn.Parameter(G.ones(2))
    opt = G.optim.SGD([p], lr=0.5, momentum=0.9)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    assert calls == ["pre"] and sd["extra"] == 1

    def drop_extra(o, sd):
        sd = dict(sd)
        sd.pop("extra")
        sd["param_groups"] = [{**g, "lr": 0.25} for g in sd["param_groups"]]
        return sd
    opt.register_load_state_dict_pre_hook(drop_extra)
    opt.register_load_state_dict_post_hook(lambda o: calls.append("loaded"))
    opt.load_state_dict(sd)
    assert opt.param_groups[0]["lr"] == 0.25 and calls == ["pre", "loaded"]
    assert opt.state[G.nn.Parameter(G.zeros(1))] == {}  # a defaultdict, as PyTorch's
