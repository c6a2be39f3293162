"""optim.swa_utils against PyTorch: averaged weights (SWA, EMA, with and without buffers), update_bn, SWALR."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
X = [RNG.standard_normal((6, 3)).astype(np.float32) for _ in range(4)]


def _model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 1))
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def _train(lib, averaged_kwargs):
    model = _model(lib)
    avg = lib.optim.swa_utils.AveragedModel(model, **averaged_kwargs(lib))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for x in X:
        opt.zero_grad()
        model(lib.tensor(x)).pow(2).mean().backward()
        opt.step()
        avg.update_parameters(model)
    lib.optim.swa_utils.update_bn([(lib.tensor(x), 0) for x in X], avg)
    return {k: v.detach().numpy() for k, v in avg.state_dict().items()}


@pytest.mark.parametrize("kind", ["swa", "ema", "ema-multi", "swa-buffers"])
def test_averaged_model_matches_torch(kind: str) -> None:
    def kwargs(lib):
        S = lib.optim.swa_utils
        return {"swa": {}, "ema": {"avg_fn": S.get_ema_avg_fn(0.9)},
                "ema-multi": {"multi_avg_fn": S.get_ema_multi_avg_fn(0.8)},
                "swa-buffers": {"use_buffers": True}}[kind]
    got, want = _train(G, kwargs), _train(torch, kwargs)
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_swalr_matches_torch() -> None:
    traces = []
    for lib in (G, torch):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([{"params": [p]}, {"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.3}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.1], anneal_epochs=4, anneal_strategy="cos")
        trace = []
        for _ in range(7):
            opt.step()
            sched.step()
            trace.append(sched.get_last_lr())
        traces.append(trace)
    np.testing.assert_allclose(traces[0], traces[1], rtol=1e-12)


def test_bad_arguments() -> None:
    S = G.optim.swa_utils
    m = G.nn.Linear(2, 2)
    with pytest.raises(ValueError):
        S.AveragedModel(m, avg_fn=S.get_swa_avg_fn(), multi_avg_fn=S.get_swa_multi_avg_fn())
    opt = G.optim.SGD(m.parameters(), lr=0.1)
    with pytest.raises(ValueError):
        S.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
