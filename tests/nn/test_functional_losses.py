"""The losses and distances of torch.nn.functional added for the OpInfo database, and the cosine_similarity
broadcasting fix, against PyTorch (values and gradients)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.torch_oracle import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _F():
    import generated as G
    return G.nn.functional


def _G():
    import generated as G
    return G


def r(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape) * 5 + len(shape)).standard_normal(shape)


def sign(n: int) -> np.ndarray:
    return np.where(np.random.default_rng(n).standard_normal(n) > 0, 1.0, -1.0)


def test_cosine_similarity_broadcasts_along_the_reduced_dim() -> None:
    """[1,2,3] against [2,1,3] at dim=-2 was off by sqrt(2) (the norms were taken before broadcasting)."""
    F = _F()
    compare(lambda a, b: F.cosine_similarity(a, b, dim=-2), lambda a, b: TF.cosine_similarity(a, b, dim=-2),
            r(1, 2, 3), r(2, 1, 3))
    compare(lambda a, b: F.cosine_similarity(a, b, dim=0, eps=0.5),
            lambda a, b: TF.cosine_similarity(a, b, dim=0, eps=0.5), r(3, 1) * 0.1, r(1, 4) * 0.1)


LOSSES = [
    ("margin_ranking_loss", (r(5), r(5), sign(5)), dict(margin=0.3), (2,)),
    ("hinge_embedding_loss", (r(5), sign(5)), dict(margin=0.5, reduction="none"), (1,)),
    ("soft_margin_loss", (r(5), sign(5)), dict(), (1,)),
    ("cosine_embedding_loss", (r(5, 3), r(5, 3), sign(5)), dict(margin=0.2), (2,)),
    ("cosine_embedding_loss", (r(3), r(3), np.array(-1.0)), dict(), (2,)),
    ("multilabel_soft_margin_loss", (r(4, 5), (r(4, 5) > 0) * 1.0, r(5)), dict(), (1,)),
    ("gaussian_nll_loss", (r(4, 5), r(4, 5), np.abs(r(4, 5)) * 1e-6), dict(), ()),
    ("gaussian_nll_loss", (r(4, 5), r(4, 5), np.abs(r(4)) + 0.1), dict(full=True, reduction="sum"), ()),
    ("poisson_nll_loss", (r(4, 5), np.abs(r(4, 5)) * 3), dict(), (1,)),
    ("poisson_nll_loss", (np.abs(r(4, 5)), np.abs(r(4, 5)) * 3), dict(log_input=False, full=True,
                                                                      reduction="none"), (1,)),
    ("triplet_margin_loss", (r(4, 5), r(4, 5), r(4, 5)), dict(swap=True, p=1.5), ()),
    ("triplet_margin_with_distance_loss", (r(4, 5), r(4, 5), r(4, 5)), dict(swap=True), ()),
    ("pdist", (r(5, 3),), dict(), ()),
    ("pdist", (r(5, 3),), dict(p=1.5), ()),
    ("pairwise_distance", (r(5, 3), r(1, 3)), dict(), ()),
]


@pytest.mark.parametrize("name,arrays,kwargs,nograd", LOSSES)
def test_losses(name: str, arrays: tuple, kwargs: dict, nograd: tuple) -> None:
    F = _F()
    compare(lambda *a: getattr(F, name)(*a, **kwargs), lambda *a: getattr(TF, name)(*a, **kwargs), *arrays,
            nograd=nograd)


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss(p: int) -> None:
    F, G = _F(), _G()
    target = np.array([0, 3, 4, 1])
    compare(lambda a, w: F.multi_margin_loss(a, G.tensor(target), p, 0.7, w),
            lambda a, w: TF.multi_margin_loss(a, torch.tensor(target), p, 0.7, w), r(4, 5), r(5), nograd=(1,))
    compare(lambda a: F.multi_margin_loss(a, G.tensor(2), reduction="none"),
            lambda a: TF.multi_margin_loss(a, torch.tensor(2), reduction="none"), r(5))


def test_multilabel_margin_loss() -> None:
    F, G = _F(), _G()
    target = np.array([[3, 0, -1, 1, 2], [1, 1, 2, -1, 0], [-1, 0, 0, 0, 0], [0, 1, 2, 3, 4]])
    for reduction in ("none", "mean"):
        compare(lambda a, red=reduction: F.multilabel_margin_loss(a, G.tensor(target), reduction=red),
                lambda a, red=reduction: TF.multilabel_margin_loss(a, torch.tensor(target), reduction=red), r(4, 5))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss(reduction: str) -> None:
    F, G = _F(), _G()
    rng = np.random.default_rng(1)
    steps, n, classes = 12, 3, 5
    log_probs = np.log(rng.dirichlet(np.ones(classes), (steps, n)))
    targets = rng.integers(1, classes, (n, 4))
    targets[0, 1] = targets[0, 0]  # a repeated label needs a blank between
    in_len, tgt_len = np.array([12, 9, 10]), np.array([4, 2, 0])
    compare(lambda x: F.ctc_loss(x, G.tensor(targets), G.tensor(in_len), G.tensor(tgt_len), reduction=reduction),
            lambda x: TF.ctc_loss(x, torch.tensor(targets), torch.tensor(in_len), torch.tensor(tgt_len),
                                  reduction=reduction), log_probs)
    flat = np.concatenate([targets[i, :tgt_len[i]] for i in range(n)])
    compare(lambda x: F.ctc_loss(x.log_softmax(2), G.tensor(flat), in_len.tolist(), tgt_len.tolist()),
            lambda x: TF.ctc_loss(x.log_softmax(2), torch.tensor(flat), in_len.tolist(), tgt_len.tolist()),
            rng.standard_normal((steps, n, classes)))


def test_ctc_loss_infeasible_and_zero_infinity() -> None:
    F, G = _F(), _G()
    rng = np.random.default_rng(2)
    log_probs = np.log(rng.dirichlet(np.ones(5), (8, 2)))
    targets, in_len, tgt_len = rng.integers(1, 5, (2, 4)), np.array([3, 8]), np.array([4, 2])
    for zero_infinity in (False, True):
        compare(lambda x, z=zero_infinity: F.ctc_loss(x, G.tensor(targets), G.tensor(in_len), G.tensor(tgt_len),
                                                      reduction="none", zero_infinity=z),
                lambda x, z=zero_infinity: TF.ctc_loss(x, torch.tensor(targets), torch.tensor(in_len),
                                                       torch.tensor(tgt_len), reduction="none", zero_infinity=z),
                log_probs, grad=zero_infinity)
