"""nn modules against PyTorch with the same weights: the Transformer family, packed sequences through the
recurrent layers, Bilinear, the activations, LazyLinear, and the parameter names each one registers."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _same_weights(t_module, g_module) -> None:
    assert list(g_module.state_dict()) == list(t_module.state_dict())
    g_module.load_state_dict({k: G.tensor(v.detach().numpy()) for k, v in t_module.state_dict().items()})


def _close(a, b, tol: float = 2e-5) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if hasattr(a, "detach") else a),
                               np.asarray(b.detach().numpy() if hasattr(b, "detach") else b), rtol=tol, atol=tol)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_matches_torch(norm_first: bool, batch_first: bool, activation: str) -> None:
    kw = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 1, "dim_feedforward": 16,
          "dropout": 0.0, "batch_first": batch_first, "norm_first": norm_first, "activation": activation}
    tm, gm = torch.nn.Transformer(**kw).eval(), G.nn.Transformer(**kw).eval()
    _same_weights(tm, gm)
    src, tgt = RNG.standard_normal((5, 3, 8)).astype("f4"), RNG.standard_normal((4, 3, 8)).astype("f4")
    if batch_first:
        src, tgt = src.transpose(1, 0, 2).copy(), tgt.transpose(1, 0, 2).copy()
    pad = np.zeros((3, 5), bool)
    pad[2, 3:] = True
    outs = []
    for lib, m in ((torch, tm), (G, gm)):
        x = lib.tensor(src, requires_grad=True)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(4)
        out = m(x, lib.tensor(tgt), tgt_mask=mask, src_key_padding_mask=lib.tensor(pad),
                memory_key_padding_mask=lib.tensor(pad), tgt_is_causal=True)
        out.pow(2).sum().backward()
        outs.append((out, x.grad, m.encoder.layers[0].linear1.weight.grad))
    for a, b in zip(*outs, strict=True):
        _close(b, a, 1e-4)


def test_encoder_layer_with_module_activation_and_bool_mask() -> None:
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=torch.nn.GELU(), batch_first=True)
    gl = G.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=G.nn.GELU(), batch_first=True)
    assert "activation" in dict(gl.named_children())
    _same_weights(tl, gl)
    te, ge = torch.nn.TransformerEncoder(tl, 2, enable_nested_tensor=False), G.nn.TransformerEncoder(gl, 2)
    assert ge.layers[0] is not gl and ge.layers[0].linear1.weight is not ge.layers[1].linear1.weight
    _same_weights(te, ge)
    x = RNG.standard_normal((2, 5, 8)).astype("f4")
    mask = np.triu(np.ones((5, 5), bool), 1)
    _close(ge(G.tensor(x), mask=G.tensor(mask)), te(torch.tensor(x), mask=torch.tensor(mask)))


def test_square_subsequent_mask() -> None:
    _close(G.nn.Transformer.generate_square_subsequent_mask(4),
           torch.nn.Transformer.generate_square_subsequent_mask(4))


def test_transformer_refuses_mismatched_batches() -> None:
    m = G.nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError):
        m(G.zeros(5, 3, 8), G.zeros(4, 2, 8))
    with pytest.raises(RuntimeError):
        G.nn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize(("cls", "kwargs"), [("LSTM", {"num_layers": 2, "bidirectional": True}),
                                             ("GRU", {"bidirectional": True, "batch_first": True}),
                                             ("RNN", {"num_layers": 2, "nonlinearity": "relu"})])
def test_packed_sequences_through_recurrent_layers(cls: str, kwargs: dict) -> None:
    tm, gm = getattr(torch.nn, cls)(3, 5, **kwargs), getattr(G.nn, cls)(3, 5, **kwargs)
    _same_weights(tm, gm)
    gm.flatten_parameters()
    batch_first = kwargs.get("batch_first", False)
    x = RNG.standard_normal((4, 6, 3) if batch_first else (6, 4, 3)).astype("f4")
    h0 = RNG.standard_normal((gm.num_layers * (2 if gm.bidirectional else 1), 4, 5)).astype("f4")
    lengths = [3, 6, 2, 5]
    results = []
    for lib, m in ((torch, tm), (G, gm)):
        xx = lib.tensor(x, requires_grad=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(xx, lengths, batch_first=batch_first, enforce_sorted=False)
        hx = (lib.tensor(h0), lib.tensor(h0)) if cls == "LSTM" else lib.tensor(h0)
        out, h = m(packed, hx)
        assert isinstance(out, lib.nn.utils.rnn.PackedSequence)
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
        h_n = h[1] if cls == "LSTM" else h
        (padded.pow(2).sum() + h_n.sum()).backward()
        results.append((padded, lens, h_n, xx.grad, m.weight_ih_l0.grad))
    for a, b in zip(*results, strict=True):
        _close(b, a, 1e-5)


def test_pack_helpers_match_torch() -> None:
    seqs = [RNG.standard_normal((n, 2)).astype("f4") for n in (2, 5, 3)]
    got, want = [], []
    for lib, out in ((G, got), (torch, want)):
        R = lib.nn.utils.rnn
        ts = [lib.tensor(s) for s in seqs]
        out.append(R.pad_sequence(ts, batch_first=True, padding_value=-1.0))
        out.append(R.pad_sequence(ts, padding_side="left"))
        packed = R.pack_sequence(ts, enforce_sorted=False)
        out += [packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices]
        out += R.unpack_sequence(packed)
        padded, lengths = R.pad_packed_sequence(packed, total_length=7)
        out += [padded.clone(), lengths]  # (torch's unpad_sequence transposes its argument in place)
        out += R.unpad_sequence(padded, lengths)
    for a, b in zip(got, want, strict=True):
        _close(a, b)


def test_pack_refuses_unsorted_and_empty_lengths() -> None:
    R = G.nn.utils.rnn
    with pytest.raises(RuntimeError):
        R.pack_padded_sequence(G.zeros(4, 2, 1), [2, 3])
    with pytest.raises(RuntimeError):
        R.pack_padded_sequence(G.zeros(4, 2, 1), [2, 0], enforce_sorted=False)
    packed = R.pack_sequence([G.ones(3, 1), G.ones(1, 1)])
    with pytest.raises(ValueError):
        R.pad_packed_sequence(packed, total_length=2)


def test_bilinear_matches_torch() -> None:
    tm, gm = torch.nn.Bilinear(3, 4, 5), G.nn.Bilinear(3, 4, 5)
    _same_weights(tm, gm)
    x1, x2 = RNG.standard_normal((2, 6, 3)).astype("f4"), RNG.standard_normal((2, 6, 4)).astype("f4")
    _close(gm(G.tensor(x1), G.tensor(x2)), tm(torch.tensor(x1), torch.tensor(x2)))
    assert repr(gm) == repr(tm)


@pytest.mark.parametrize(("name", "args"), [("CELU", (0.7,)), ("Hardshrink", (0.3,)), ("Softshrink", (0.4,)),
                                            ("Softmax2d", ()), ("RReLU", (0.1, 0.3))])
def test_activation_modules_match_torch(name: str, args: tuple) -> None:
    x = RNG.standard_normal((2, 3, 4, 4)).astype("f4")
    tm, gm = getattr(torch.nn, name)(*args).eval(), getattr(G.nn, name)(*args).eval()
    tx, gx = torch.tensor(x, requires_grad=True), G.tensor(x, requires_grad=True)
    t_out, g_out = tm(tx), gm(gx)
    _close(g_out, t_out)
    t_out.pow(2).sum().backward()
    g_out.pow(2).sum().backward()
    _close(gx.grad, tx.grad)
    assert repr(gm) == repr(tm)


def test_rrelu_training_slopes_lie_between_lower_and_upper() -> None:
    x = -G.ones(1000)
    y = G.nn.RReLU(0.1, 0.3)(x)
    assert float(y.max()) <= -0.1 and float(y.min()) >= -0.3 and float(y.std()) > 0.01


def test_lazy_linear_infers_in_features_and_becomes_linear() -> None:
    m = G.nn.LazyLinear(3)
    assert m.has_uninitialized_params()
    opt_params = list(m.parameters())
    y = m(G.ones(2, 5))
    assert type(m) is G.nn.Linear and tuple(m.weight.shape) == (3, 5) and tuple(y.shape) == (2, 3)
    assert opt_params[0] is m.weight  # materialised in place
    fresh = G.nn.LazyLinear(3)
    fresh.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), m.weight.detach().numpy())


def test_rnn_cell_base_and_flatten_parameters_exist() -> None:
    assert issubclass(G.nn.GRUCell, G.nn.RNNCellBase)
    assert G.nn.LSTM(2, 3).flatten_parameters() is None


@pytest.mark.parametrize("kwargs", [{"add_bias_kv": True}, {"add_zero_attn": True},
                                    {"add_bias_kv": True, "add_zero_attn": True, "kdim": 5, "vdim": 3}])
def test_multihead_attention_extra_keys_match_torch(kwargs: dict) -> None:
    tm, gm = torch.nn.MultiheadAttention(8, 2, **kwargs), G.nn.MultiheadAttention(8, 2, **kwargs)
    _same_weights(tm, gm)
    q = RNG.standard_normal((4, 3, 8)).astype("f4")
    k = RNG.standard_normal((5, 3, kwargs.get("kdim", 8))).astype("f4")
    v = RNG.standard_normal((5, 3, kwargs.get("vdim", 8))).astype("f4")
    pad = np.zeros((3, 5), bool)
    pad[1, 3:] = True
    mask = np.triu(np.ones((4, 5), bool), 2)
    outs = []
    for lib, m in ((torch, tm), (G, gm)):
        out, weights = m(lib.tensor(q), lib.tensor(k), lib.tensor(v), key_padding_mask=lib.tensor(pad),
                         attn_mask=lib.tensor(mask), average_attn_weights=False)
        outs.append((out, weights))
    for a, b in zip(*outs, strict=True):
        _close(b, a)


@pytest.mark.parametrize("kwargs", [{"proj_size": 3, "num_layers": 2, "bidirectional": True},
                                    {"proj_size": 2, "batch_first": True}])
def test_lstm_with_projections_matches_torch(kwargs: dict) -> None:
    tm, gm = torch.nn.LSTM(4, 5, **kwargs), G.nn.LSTM(4, 5, **kwargs)
    _same_weights(tm, gm)
    assert repr(gm) == repr(tm)
    x = RNG.standard_normal((3, 6, 4)).astype("f4")
    lengths = [6, 2, 4] if kwargs.get("batch_first") else [3, 3, 2, 2, 1, 1]
    results = []
    for lib, m in ((torch, tm), (G, gm)):
        xx = lib.tensor(x, requires_grad=True)
        out, (h, c) = m(xx)
        packed = lib.nn.utils.rnn.pack_padded_sequence(xx, lengths, batch_first=kwargs.get("batch_first", False),
                                                       enforce_sorted=False)
        p_out, (p_h, p_c) = m(packed)
        (out.sum() + p_h.pow(2).sum()).backward()
        results.append((out, h, c, lib.nn.utils.rnn.pad_packed_sequence(p_out)[0], p_h, p_c, xx.grad,
                        m.weight_hr_l0.grad))
    for a, b in zip(*results, strict=True):
        _close(b, a)
    with pytest.raises(ValueError):
        G.nn.LSTM(4, 5, proj_size=5)
    with pytest.raises(ValueError):
        G.nn.RNNBase("GRU", 4, 5, proj_size=2)


def test_lazy_conv_and_batchnorm_infer_their_sizes() -> None:
    x = RNG.standard_normal((2, 3, 5, 5)).astype("f4")
    t_bn, g_bn = torch.nn.LazyBatchNorm2d(momentum=0.3), G.nn.LazyBatchNorm2d(momentum=0.3)
    _close(g_bn(G.tensor(x)), t_bn(torch.tensor(x)))
    assert type(g_bn) is G.nn.BatchNorm2d and list(g_bn.state_dict()) == list(t_bn.state_dict())
    for k, v in t_bn.state_dict().items():
        _close(g_bn.state_dict()[k], v)
    conv = G.nn.LazyConv2d(4, 3, padding=1, groups=1)
    y = conv(G.tensor(x))
    assert type(conv) is G.nn.Conv2d and conv.in_channels == 3 and tuple(conv.weight.shape) == (4, 3, 3, 3)
    assert tuple(y.shape) == (2, 4, 5, 5)
    assert repr(conv) == repr(torch.nn.Conv2d(3, 4, 3, padding=1))
