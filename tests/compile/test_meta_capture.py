"""Capture takes its values' layouts from meta execution (Note [Shapes from meta execution]): an operator
whose output shape depends on values ends the capture, a Meta kernel that disagrees with the real one ends
it naming the operator, and the operators of ordinary programs all run on meta."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import generated as G
from runtime.compile import GraphBreak, meta_shapes

F = G.nn.functional


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize("fn", [
    lambda x: x[x > 0] * 2,
    lambda x: G.nonzero(x).float().sum(0),
    lambda x: G.masked_select(x, x > 0) + 1,
    lambda x: G.unique(x.round()) * 3,
], ids=["mask-index", "nonzero", "masked_select", "unique"])
def test_an_output_shape_that_depends_on_values_ends_capture(fn) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(GraphBreak, match="depends on the values"):
        G.compile(fn, fullgraph=True)(G.tensor([1.0, -1.0, 2.0]))
    c = G.compile(fn)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        c(G.tensor([1.0, -1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in (G.tensor([1.0, 1.0, 2.0]), G.tensor([-1.0, -1.0, 2.0]), G.tensor([0.5, 2.5, -3.0, 4.0])):
            np.testing.assert_allclose(c(x).numpy(), fn(x).numpy())


def test_a_shape_read_from_a_data_dependent_result_is_not_baked_in() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        y = x[x > 0]
        return y + G.ones(y.shape[0])

    c = G.compile(f)
    with pytest.warns(RuntimeWarning):
        c(G.tensor([1.0, -1.0, 2.0]))
    x = G.tensor([1.0, 3.0, 2.0, 5.0])  # four positives where the first call had two
    np.testing.assert_allclose(c(x).numpy(), f(x).numpy())


def test_a_meta_kernel_that_disagrees_ends_capture_naming_the_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    real = meta_shapes.MetaTwins.call

    def wrong(self, op, args):  # type: ignore[no-untyped-def]
        out = real(self, op, args)
        if op.name == "tanh" and out:
            return [out[0][:1]]
        return out

    monkeypatch.setattr(meta_shapes.MetaTwins, "call", wrong)
    with pytest.raises(GraphBreak, match="tanh: its Meta kernel"):
        G.compile(lambda x: G.tanh(x * 2) + 1, fullgraph=True)(G.randn(4, 3))



def test_ordinary_programs_run_every_operator_on_meta() -> None:
    del meta_shapes.misses[:]
    G.manual_seed(0)
    model = G.nn.Sequential(G.nn.Conv2d(1, 4, 3, padding=1), G.nn.BatchNorm2d(4), G.nn.ReLU(), G.nn.MaxPool2d(2),
                            G.nn.Flatten(), G.nn.Dropout(0.1), G.nn.Linear(4 * 4 * 4, 10), G.nn.LayerNorm(10))
    opt = G.optim.Adam(model.parameters(), lr=1e-3)

    def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(F.log_softmax(model(x), -1) * 1.5, y, label_smoothing=0.1)
        loss.backward()
        opt.step()
        return loss

    c = G.compile(step, fullgraph=True)
    x, y = G.randn(8, 1, 8, 8), G.randint(0, 10, (8,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, not run eagerly after a failed check
        for _ in range(2):
            assert np.isfinite(c(x, y).item())
    assert meta_shapes.misses == []


def train_step(m: G.nn.Module, opt: G.optim.Optimizer, scale: float = 1.0, clip: float | None = None):  # type: ignore[no-untyped-def]
    def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y) * scale
        loss.backward()
        if clip is not None:
            G.nn.utils.clip_grad_norm_(m.parameters(), clip)
        opt.step()
        return loss
    return step


def test_a_bias_before_batch_norm_with_adam_compiles() -> None:
    """The bias's gradient is rounding noise, which Adam turns into a step of lr (Note [Checking a compiled
    step]): the step still compiles, and the other parameters follow eager's."""
    def make():  # type: ignore[no-untyped-def]
        m = G.nn.Sequential(G.nn.Conv2d(1, 4, 3, padding=1), G.nn.BatchNorm2d(4), G.nn.ReLU(), G.nn.Flatten(),
                            G.nn.Linear(4 * 6 * 6, 3))
        return m, train_step(m, G.optim.Adam(m.parameters(), lr=1e-3))

    (le, pe), (lc, pc) = _steps(make, (G.randn(5, 1, 6, 6), G.tensor([0, 2, 1, 1, 0])))
    np.testing.assert_allclose(lc, le, rtol=1e-3)
    for k in pe:
        np.testing.assert_allclose(pc[k], pe[k], atol=1e-2 if k == "0.bias" else 1e-4, err_msg=k)


def _steps(make, inputs, n: int = 3):  # type: ignore[no-untyped-def]
    """The losses and parameters after `n` steps, eager and compiled (no warning: compiled, not run eagerly)."""
    runs = []
    for compiled in (False, True):
        G.manual_seed(0)
        model, step = make()
        f = G.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            losses = [f(*inputs).item() for _ in range(n)]
        runs.append((losses, {k: p.detach().numpy().copy() for k, p in model.named_parameters()}))
    return runs


def test_attention_with_adamw_compiles() -> None:
    """The key projection's bias gets a noise gradient (softmax ignores a constant added to a row of scores)."""
    class Encoder(G.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = G.nn.Embedding(50, 16)
            self.layer = G.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
            self.out = G.nn.Linear(16, 3)

        def forward(self, x: G.Tensor) -> G.Tensor:
            return self.out(self.layer(self.emb(x)).mean(1))

    def make():  # type: ignore[no-untyped-def]
        m = Encoder()
        return m, train_step(m, G.optim.AdamW(m.parameters(), lr=1e-3))

    (le, pe), (lc, pc) = _steps(make, (G.randint(0, 50, (4, 9)), G.tensor([0, 2, 1, 1])))
    np.testing.assert_allclose(lc, le, rtol=1e-4)
    for k in pe:
        if k != "layer.self_attn.in_proj_bias":
            np.testing.assert_allclose(pc[k], pe[k], rtol=1e-3, atol=1e-5, err_msg=k)


def test_gradient_clipping_inside_a_compiled_step() -> None:
    def make():  # type: ignore[no-untyped-def]
        m = G.nn.Sequential(G.nn.Linear(10, 20), G.nn.Tanh(), G.nn.Linear(20, 3))
        return m, train_step(m, G.optim.SGD(m.parameters(), lr=0.5), scale=10, clip=0.5)

    (le, pe), (lc, pc) = _steps(make, (G.randn(16, 10), G.randint(0, 3, (16,))))
    np.testing.assert_allclose(lc, le, rtol=1e-4)
    for k in pe:
        np.testing.assert_allclose(pc[k], pe[k], rtol=1e-4, atol=1e-6, err_msg=k)
