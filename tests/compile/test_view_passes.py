"""The view pass (Note [Simplifying views] in runtime/compile/passes.py): identity view chains go, reshape
chains of a contiguous base become one view, and nothing changes what the program computes or aliases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generated as G


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def names(c) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.name for n in c.programs[0].graph.nodes]


def test_identity_chains_go_and_reshape_chains_become_one_view() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        y = x.t().t().permute(1, 0).transpose(0, 1).expand(4, 6)  # x itself
        z = x.view(6, 4).unsqueeze(0).squeeze(0).reshape(2, 12).flatten()  # one view of x
        return y.sum(0) + z.view(4, 6).sum(0)

    x = G.randn(4, 6)
    c = G.compile(f)
    np.testing.assert_allclose(c(x).numpy(), f(x).numpy(), rtol=1e-6)
    assert c.programs[0].stats["views"] >= 6
    got = names(c)
    for gone in ("t", "permute", "transpose.int", "expand", "unsqueeze", "squeeze.dim"):
        assert gone not in got, got


def test_a_view_the_function_returns_stays_a_new_tensor() -> None:
    x = G.randn(3, 5)
    c = G.compile(lambda t: (t * 2).t().t())
    out = c(x)
    np.testing.assert_allclose(out.numpy(), (x * 2).numpy())
    out2 = G.compile(lambda t: t.view(3, 5))(x)
    assert out2 is not x and np.shares_memory(out2.numpy(), x.numpy())


def test_views_of_a_tensor_written_in_place_are_left_alone() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        y = x.view(15).view(3, 5)
        x.add_(1)  # y sees the write
        return y * 2

    x1, x2 = G.randn(3, 5), None
    x2 = x1.clone()
    c = G.compile(f)
    np.testing.assert_allclose(c(x1).numpy(), f(x2).numpy())
    np.testing.assert_allclose(x1.numpy(), x2.numpy())


def test_non_contiguous_reshape_chains_are_kept() -> None:
    def f(x: G.Tensor) -> G.Tensor:
        return x.t().reshape(30).reshape(5, 6) * 1.5  # the reshape of a transpose copies

    x = G.randn(6, 5)
    c = G.compile(f)
    np.testing.assert_allclose(c(x).numpy(), f(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(c(G.randn(6, 5)).shape, (5, 6))


_STEPS = ("t", "flatten", "unsqueeze", "squeeze", "reshape", "view", "permute", "expand", "mul", "contiguous")


def _apply(x: G.Tensor, steps: list[tuple[str, int]]) -> G.Tensor:
    for name, k in steps:
        if name == "t" and x.dim() == 2:
            x = x.t()
        elif name == "flatten":
            x = x.flatten()
        elif name == "unsqueeze":
            x = x.unsqueeze(k % (x.dim() + 1))
        elif name == "squeeze":
            x = x.squeeze()
        elif name == "reshape":
            x = x.reshape(-1, [1, 2, 3][k % 3]) if x.numel() % [1, 2, 3][k % 3] == 0 else x.reshape(-1)
        elif name == "view" and x.is_contiguous():
            x = x.view(x.numel())
        elif name == "permute":
            dims = list(range(x.dim()))
            x = x.permute(*dims[k % max(len(dims), 1):], *dims[:k % max(len(dims), 1)]) if dims else x
        elif name == "expand":
            x = x.unsqueeze(0).expand(2, *x.shape)
        elif name == "mul":
            x = x * 1.5
        elif name == "contiguous":
            x = x.contiguous()
    return x


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_STEPS), st.integers(0, 5)), min_size=1, max_size=8))
def test_random_view_chains_compute_what_eager_does(steps: list[tuple[str, int]]) -> None:
    x = G.arange(12.0).reshape(3, 4)
    c = G.compile(lambda t: _apply(t, steps) + 0.25)  # fused or not, the pass runs before fusion
    want = _apply(x, steps) + 0.25
    got = c(x)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
