"""nn layers (pooling, padding, normalisation, upsampling, ...) against torch.nn:
the same state_dict keys and shapes, the same output once
PyTorch's parameters are loaded, and the same repr."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

LAYERS = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, dilation=2, groups=2, padding_mode="reflect"), (2, 4, 10)),
    ("Conv3d", (4, 6, (2, 3, 2)), dict(padding="same", padding_mode="circular"), (2, 4, 5, 6, 5)),
    ("Conv2d", (4, 6, 3), dict(padding="same", padding_mode="replicate", bias=False), (2, 4, 5, 6)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, output_padding=1), (2, 4, 7)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, dilation=2), (2, 4, 4, 3)),
    ("ConvTranspose3d", (4, 6, 2), dict(stride=2, groups=2), (2, 4, 3, 4, 3)),
    ("InstanceNorm2d", (3,), dict(affine=True, track_running_stats=True), (2, 3, 4, 5)),
    ("InstanceNorm1d", (3,), dict(), (3, 6)),
    ("InstanceNorm3d", (3,), dict(affine=True, bias=False), (2, 3, 3, 4, 2)),
    ("RMSNorm", ((4, 5),), dict(), (2, 3, 4, 5)),
    ("LocalResponseNorm", (3,), dict(), (2, 5, 4)),
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 9)),
    ("MaxPool3d", (2,), dict(), (2, 3, 4, 4, 4)),
    ("AvgPool1d", (3,), dict(stride=2), (2, 3, 9)),
    ("AvgPool3d", (2,), dict(ceil_mode=True), (2, 3, 5, 4, 4)),
    ("LPPool2d", (2, 2), dict(), (2, 3, 4, 4)),
    ("AdaptiveMaxPool1d", (4,), dict(), (2, 3, 9)),
    ("AdaptiveMaxPool2d", ((2, 3),), dict(), (2, 3, 5, 7)),
    ("AdaptiveAvgPool1d", (4,), dict(), (2, 3, 9)),
    ("AdaptiveAvgPool3d", (2,), dict(), (2, 3, 5, 7, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 1),), dict(), (2, 3, 4, 5)),
    ("ReplicationPad3d", (1,), dict(), (2, 3, 4, 4, 3)),
    ("CircularPad1d", (2,), dict(), (2, 3, 4)),
    ("ZeroPad1d", (2,), dict(), (2, 3, 4)),
    ("ConstantPad3d", (1, 3.5), dict(), (2, 3, 4, 4, 3)),
    ("Upsample", (), dict(scale_factor=2, mode="bilinear"), (2, 3, 4, 5)),
    ("UpsamplingBilinear2d", (), dict(size=(7, 8)), (2, 3, 4, 5)),
    ("UpsamplingNearest2d", (), dict(scale_factor=3), (2, 3, 4, 5)),
    ("PixelShuffle", (2,), dict(), (2, 8, 3, 3)),
    ("PixelUnshuffle", (2,), dict(), (2, 2, 4, 6)),
    ("ChannelShuffle", (2,), dict(), (2, 4, 3, 3)),
    ("Unfold", (2,), dict(), (2, 3, 4, 4)),
    ("Fold", ((4, 4), 2), dict(), (2, 12, 9)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS)
def test_layer_matches_torch(name: str, args: tuple, kwargs: dict, shape: tuple) -> None:
    import generated as G
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(G.nn, name)(*args, **kwargs).double()
    t_state, g_state = theirs.state_dict(), ours.state_dict()
    assert list(g_state) == list(t_state)
    assert all(tuple(g_state[k].shape) == tuple(t_state[k].shape) for k in t_state)
    ours.load_state_dict({k: G.tensor(v.numpy()) for k, v in t_state.items()})
    x = np.random.default_rng(0).standard_normal(shape)
    np.testing.assert_allclose(ours(G.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               atol=1e-10)
    assert repr(ours) == repr(theirs)
    if "running_var" in t_state:
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy())


def test_conv_transpose_output_size() -> None:
    import generated as G
    theirs = torch.nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    ours = G.nn.ConvTranspose2d(2, 3, 3, stride=2).double()
    ours.load_state_dict({k: G.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 4))
    out = ours(G.tensor(x), output_size=[10, 9])
    np.testing.assert_allclose(out.detach().numpy(), theirs(torch.tensor(x), output_size=[10, 9]).detach().numpy())
    with pytest.raises(ValueError, match="output size"):
        ours(G.tensor(x), output_size=[12, 12])


def test_embedding_bag_and_distances() -> None:
    import generated as G
    theirs = torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2).double()
    ours = G.nn.EmbeddingBag(10, 3, mode="max", padding_idx=2).double()
    assert list(ours.state_dict()) == ["weight"]
    ours.load_state_dict({"weight": G.tensor(theirs.weight.detach().numpy())})
    rows = np.random.default_rng(2).integers(0, 10, (4, 3))
    np.testing.assert_allclose(ours(G.tensor(rows)).detach().numpy(), theirs(torch.tensor(rows)).detach().numpy())
    assert repr(ours) == repr(theirs)
    a, b = np.random.default_rng(3).standard_normal((2, 3, 4))
    for name in ("CosineSimilarity", "PairwiseDistance"):
        np.testing.assert_allclose(getattr(G.nn, name)()(G.tensor(a), G.tensor(b)).numpy(),
                                   getattr(torch.nn, name)()(torch.tensor(a), torch.tensor(b)).numpy())


LOSS_LAYERS = [
    ("MarginRankingLoss", dict(margin=0.2), 3), ("HingeEmbeddingLoss", dict(margin=0.5), 2),
    ("CosineEmbeddingLoss", dict(margin=0.1), 3), ("SoftMarginLoss", dict(), 2),
    ("MultiLabelSoftMarginLoss", dict(), 2), ("PoissonNLLLoss", dict(full=True), 2),
    ("TripletMarginLoss", dict(swap=True), 3), ("TripletMarginWithDistanceLoss", dict(margin=0.5), 3),
    ("GaussianNLLLoss", dict(full=True), 3),
]


@pytest.mark.parametrize("name,kwargs,arity", LOSS_LAYERS)
def test_loss_layers(name: str, kwargs: dict, arity: int) -> None:
    import generated as G
    rng = np.random.default_rng(4)
    if name in ("MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss"):
        arrays = [rng.standard_normal(5) for _ in range(arity - 1)] + [np.where(rng.random(5) > 0.5, 1.0, -1.0)]
    elif name == "CosineEmbeddingLoss":
        arrays = [rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), np.where(rng.random(5) > 0.5, 1.0, -1.0)]
    else:
        arrays = [np.abs(rng.standard_normal((4, 3))) for _ in range(arity)]
    ours = getattr(G.nn, name)(**kwargs)(*[G.tensor(a) for a in arrays])
    theirs = getattr(torch.nn, name)(**kwargs)(*[torch.tensor(a) for a in arrays])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_dropout_layers_follow_training_mode() -> None:
    import generated as G
    for name in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        layer = getattr(G.nn, name)(p=0.5)
        assert repr(layer) == repr(getattr(torch.nn, name)(p=0.5))
        x = G.ones(4, 6, 3, 3, 3) if name == "Dropout3d" else G.ones(4, 6, 3, 3) if name == "Dropout2d" else \
            G.ones(4, 6, 3)
        layer.eval()
        assert layer(x) is x
        layer.train()
        assert not np.array_equal(layer(x).numpy(), x.numpy())
