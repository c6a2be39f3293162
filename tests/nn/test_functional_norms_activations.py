"""Normalizations (instance, local response, RMS, batch norm of an empty 1-D input), activations (celu,
hardshrink, softshrink, rrelu, channel_shuffle, bilinear), embedding_bag and the dropout family against
PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

from tests.torch_oracle import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _G():
    import generated as G
    return G


def r(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape) * 11 + len(shape)).standard_normal(shape)


def test_batch_norm_of_an_empty_1d_input() -> None:
    """opgen refused a 1-D input even when empty; PyTorch returns an empty tensor."""
    F = _G().nn.functional
    compare(lambda x: F.batch_norm(x, None, None, training=True), lambda x: TF.batch_norm(x, None, None,
                                                                                          training=True), r(0))


def test_instance_norm_with_running_stats() -> None:
    G = _G()
    F = G.nn.functional
    compare(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), lambda x, w, b: TF.instance_norm(x, weight=w, bias=b),
            r(2, 3, 4, 5), r(3), r(3))
    mean, var = np.random.default_rng(0).random(3), np.random.default_rng(1).random(3) + 1
    gm, gv, tm, tv = G.tensor(mean), G.tensor(var), torch.tensor(mean), torch.tensor(var)
    compare(lambda x: F.instance_norm(x, gm, gv), lambda x: TF.instance_norm(x, tm, tv), r(2, 3, 6))
    np.testing.assert_allclose(gm.numpy(), tm.numpy())
    np.testing.assert_allclose(gv.numpy(), tv.numpy())
    compare(lambda x: F.instance_norm(x, gm, gv, use_input_stats=False),
            lambda x: TF.instance_norm(x, tm, tv, use_input_stats=False), r(2, 3, 6))


CASES = [
    ("local_response_norm", (r(2, 5, 4, 3),), dict(size=3, alpha=1e-2, beta=0.75, k=2.0)),
    ("local_response_norm", (r(2, 5, 4),), dict(size=4)),
    ("rms_norm", (r(2, 3, 4, 5),), dict(normalized_shape=[5], eps=0.1)),
    ("celu", (r(3, 4) * 5,), dict(alpha=0.7)),
    ("hardshrink", (r(3, 4),), dict(lambd=0.6)),
    ("softshrink", (r(3, 4),), dict(lambd=0.6)),
    ("rrelu", (r(3, 4),), dict()),
    ("channel_shuffle", (r(2, 6, 3, 2),), dict(groups=2)),
    ("bilinear", (r(2, 3, 4), r(2, 3, 5), r(6, 4, 5), r(6)), dict()),
]


@pytest.mark.parametrize("name,arrays,kwargs", CASES)
def test_functions(name: str, arrays: tuple, kwargs: dict) -> None:
    F = _G().nn.functional
    compare(lambda *a: getattr(F, name)(*a, **kwargs), lambda *a: getattr(TF, name)(*a, **kwargs), *arrays)


def test_rms_norm_weight_and_default_eps() -> None:
    F = _G().nn.functional
    compare(lambda x, w: F.rms_norm(x, (4, 5), w), lambda x, w: TF.rms_norm(x, (4, 5), w), r(2, 3, 4, 5), r(4, 5))
    compare(lambda x: F.rms_norm(x, [5]), lambda x: TF.rms_norm(x, [5]), r(2, 3, 5).astype(np.float32), atol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode: str) -> None:
    G = _G()
    F = G.nn.functional
    rng = np.random.default_rng(4)
    rows2, rows1, offsets = rng.integers(0, 6, (3, 4)), rng.integers(0, 6, (7,)), np.array([0, 2, 2, 5])
    compare(lambda w: F.embedding_bag(G.tensor(rows2), w, mode=mode, padding_idx=1),
            lambda w: TF.embedding_bag(torch.tensor(rows2), w, mode=mode, padding_idx=1), r(6, 3))
    compare(lambda w: F.embedding_bag(G.tensor(rows1), w, G.tensor(offsets), mode=mode),
            lambda w: TF.embedding_bag(torch.tensor(rows1), w, torch.tensor(offsets), mode=mode), r(6, 3))
    last = np.array([0, 2, 2, 7])
    compare(lambda w: F.embedding_bag(G.tensor(rows1), w, G.tensor(last), mode=mode, include_last_offset=True),
            lambda w: TF.embedding_bag(torch.tensor(rows1), w, torch.tensor(last), mode=mode,
                                       include_last_offset=True), r(6, 3))


def test_embedding_bag_per_sample_weights() -> None:
    G = _G()
    F = G.nn.functional
    rows, offsets = np.array([1, 4, 2, 2, 0, 5, 3]), np.array([0, 3, 3])
    compare(lambda w, p: F.embedding_bag(G.tensor(rows), w, G.tensor(offsets), mode="sum", per_sample_weights=p),
            lambda w, p: TF.embedding_bag(torch.tensor(rows), w, torch.tensor(offsets), mode="sum",
                                          per_sample_weights=p), r(6, 3), r(7))


def test_channel_dropouts_zero_whole_channels() -> None:
    G = _G()
    F = G.nn.functional
    G.manual_seed(0)
    shapes = (("dropout1d", (300, 40, 3)), ("dropout2d", (300, 40, 3, 2)), ("dropout3d", (300, 40, 2, 2, 2)))
    for name, shape in shapes:
        y = getattr(F, name)(G.ones(*shape), 0.3).numpy()
        per_channel = y.reshape(300, 40, -1)
        assert (per_channel == per_channel[:, :, :1]).all()  # a channel is kept or dropped whole
        assert np.all(np.isclose(y, 0) | np.isclose(y, 1 / 0.7))
        assert abs((per_channel[:, :, 0] == 0).mean() - 0.3) < 0.03
        assert getattr(F, name)(G.ones(*shape), 0.3, training=False).numpy().min() == 1.0


def test_alpha_dropouts_keep_mean_and_variance() -> None:
    G = _G()
    F = G.nn.functional
    G.manual_seed(1)
    y = F.alpha_dropout(G.randn(200000), 0.2, True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    y = F.feature_alpha_dropout(G.randn(4000, 30, 4), 0.2, True).numpy()
    assert abs(y.mean()) < 0.03 and abs(y.std() - 1) < 0.03
    x = G.randn(5)
    assert F.alpha_dropout(x, 0.5) is x  # not training: the input itself


@pytest.mark.parametrize("name,shape", [("dropout2d", (4, 6)), ("dropout2d", (3, 5, 2)), ("dropout2d", (2, 3, 2, 2, 2)),
                                        ("dropout3d", (3, 2, 2)), ("dropout3d", (2, 3, 2, 2, 2, 2)),
                                        ("dropout1d", (3, 4)), ("dropout2d", (5,)), ("dropout1d", (2, 3, 4, 5))])
def test_channel_dropout_masks_span_the_dimensions_torch_masks(name: str, shape: tuple[int, ...]) -> None:
    """Which dimensions a whole-channel mask spans, and which ranks are refused, as PyTorch (Note [Channel
    dropout shapes]): the kept pattern of a ones input is constant exactly along torch's masked dims."""
    import warnings
    G = _G()
    F = G.nn.functional
    f_torch = getattr(TF, name)
    f_ours = getattr(F, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = f_torch(torch.ones(shape, dtype=torch.float64), 0.5, True).numpy()
        except RuntimeError:
            with pytest.raises(RuntimeError):
                f_ours(G.ones(shape, dtype=G.float64), 0.5, True)
            return
        got = f_ours(G.ones(shape, dtype=G.float64), 0.5, True).numpy()
    assert got.shape == want.shape

    def constant_dims(a: np.ndarray) -> tuple[bool, ...]:
        return tuple(bool((a == a.take([0], axis=d)).all()) for d in range(a.ndim))

    # over many draws, a dimension the mask does not span is constant; one it spans is not (with p = 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = [constant_dims(f_ours(G.ones(shape, dtype=G.float64), 0.5, True).numpy()) for _ in range(20)]
        theirs = [constant_dims(f_torch(torch.ones(shape, dtype=torch.float64), 0.5, True).numpy())
                  for _ in range(20)]
    assert [all(c[d] for c in ours) for d in range(len(shape))] == \
        [all(c[d] for c in theirs) for d in range(len(shape))]
