"""More torch.nn / torch.nn.functional names against PyTorch with the same weights and
inputs: F.multi_head_attention_forward (and MultiheadAttention through it), F.linear_cross_entropy and
LinearCrossEntropyLoss, F.conv_tbc, the __torch_function__ and dispatch helpers, BatchNorm3d, the lazy
convolutions and norms, AdaptiveLogSoftmaxWithLoss, CrossMapLRN2d, NLLLoss2d and nn.grad."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(22)


def _r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype("f8")


def _close(a, b, tol: float = 1e-6) -> None:
    def conv(t):
        return None if t is None else np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)

    a, b = conv(a), conv(b)
    if a is None or b is None:
        assert a is None and b is None
        return
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _both(arr: np.ndarray | None, grad: bool = False):
    if arr is None:
        return None, None
    return (G.tensor(arr, requires_grad=grad), torch.tensor(arr, requires_grad=grad))


# ---------------------------------------------------------------- multi_head_attention_forward
MHA_CASES = {
    "plain": {},
    "unbatched": {"batched": False},
    "bool_mask": {"attn_mask": "bool2"},
    "float_mask_3d": {"attn_mask": "float3"},
    "key_padding": {"key_padding_mask": True},
    "both_masks": {"attn_mask": "float2", "key_padding_mask": True},
    "bias_kv_zero_attn": {"bias_kv": True, "add_zero_attn": True, "attn_mask": "bool2", "key_padding_mask": True},
    "separate": {"separate": True},
    "static_kv": {"static": True},
    "no_weights": {"need_weights": False, "key_padding_mask": True},
    "per_head": {"average_attn_weights": False},
    "causal_no_weights": {"is_causal": True, "need_weights": False, "attn_mask": "causal"},
    "no_bias": {"no_in_bias": True},
}


@pytest.mark.parametrize("name", sorted(MHA_CASES))
def test_multi_head_attention_forward_agrees_with_torch(name: str) -> None:
    c = MHA_CASES[name]
    L, S, N, E, h = 4, 5, 3, 6, 2
    batched = c.get("batched", True)
    qs, ks = ((L, N, E), (S, N, E)) if batched else ((L, E), (S, E))
    arrays = {"q": _r(*qs), "k": _r(*ks), "v": _r(*ks)}
    params = {"in_w": _r(3 * E, E), "in_b": None if c.get("no_in_bias") else _r(3 * E), "out_w": _r(E, E),
              "out_b": _r(E)}
    if c.get("separate"):
        params.update(qw=_r(E, E), kw=_r(E, E), vw=_r(E, E))
    if c.get("bias_kv"):
        params.update(bk=_r(1, 1, E), bv=_r(1, 1, E))
    masks = {}
    kind = c.get("attn_mask")
    if kind == "bool2":
        m = RNG.random((L, S)) < 0.3
        m[:, 0] = False
        masks["attn_mask"] = m
    elif kind == "float2":
        masks["attn_mask"] = _r(L, S)
    elif kind == "float3":
        masks["attn_mask"] = _r(N * h, L, S)
    elif kind == "causal":
        masks["attn_mask"] = np.triu(np.ones((L, S), bool), 1)
    if c.get("key_padding_mask"):
        kpm = np.zeros((N, S), bool)
        kpm[1, 3:] = True
        masks["key_padding_mask"] = kpm
    if c.get("static"):
        params.update(sk=_r(N * h, 7, E // h), sv=_r(N * h, 7, E // h))
    results = []
    for lib_i in (0, 1):
        def t(a, grad=False, i=lib_i):
            return _both(a, grad)[i]
        q, k, v = (t(arrays[n], True) for n in ("q", "k", "v"))
        p = {n: t(a, n in ("in_w", "out_w")) for n, a in params.items()}
        F = (G, torch)[lib_i].nn.functional
        out, w = F.multi_head_attention_forward(
            q, k, v, E, h, p["in_w"], p["in_b"], p.get("bk"), p.get("bv"), c.get("add_zero_attn", False), 0.0,
            p["out_w"], p["out_b"], training=True,
            key_padding_mask=t(masks.get("key_padding_mask")), need_weights=c.get("need_weights", True),
            attn_mask=t(masks.get("attn_mask")), use_separate_proj_weight=c.get("separate", False),
            q_proj_weight=p.get("qw"), k_proj_weight=p.get("kw"), v_proj_weight=p.get("vw"), static_k=p.get("sk"),
            static_v=p.get("sv"), average_attn_weights=c.get("average_attn_weights", True),
            is_causal=c.get("is_causal", False))
        out.sum().backward()
        results.append((out, w, q.grad, p["out_w"].grad, p["in_w"].grad))
    for a, b in zip(*results, strict=True):
        _close(a, b)


def test_multi_head_attention_forward_errors() -> None:
    q = G.zeros(4, 3, 6)
    w, b = G.zeros(18, 6), G.zeros(18)
    F = G.nn.functional
    with pytest.raises(AssertionError):
        F.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, G.zeros(6, 6), None)
    with pytest.raises(RuntimeError):
        F.multi_head_attention_forward(q, q, q, 6, 2, w, b, None, None, False, 0.0, G.zeros(6, 6), None,
                                       attn_mask=G.zeros(3, 3))
    with pytest.raises(RuntimeError):
        F.multi_head_attention_forward(q, q, q, 6, 2, w, b, None, None, False, 0.0, G.zeros(6, 6), None,
                                       is_causal=True)
    with pytest.raises(AssertionError):
        F.multi_head_attention_forward(q, q, q, 6, 2, w, b, None, None, False, 0.0, G.zeros(6, 6), None,
                                       attn_mask=G.zeros(4, 4, dtype=G.int64))


@pytest.mark.parametrize("kdim", [None, 4])
def test_multihead_attention_module_goes_through_the_function(kdim, monkeypatch) -> None:
    tm = torch.nn.MultiheadAttention(6, 2, kdim=kdim, vdim=kdim, batch_first=True, add_bias_kv=True).double()
    gm = G.nn.MultiheadAttention(6, 2, kdim=kdim, vdim=kdim, batch_first=True, add_bias_kv=True).double()
    gm.load_state_dict({n: G.tensor(p.detach().numpy()) for n, p in tm.state_dict().items()})
    q, kv = _r(3, 4, 6), _r(3, 5, kdim or 6)
    t_out, t_w = tm(torch.tensor(q), torch.tensor(kv), torch.tensor(kv))
    calls = []
    real = G.nn.functional.multi_head_attention_forward
    monkeypatch.setattr(G.nn.functional, "multi_head_attention_forward",
                        lambda *a, **kw: calls.append(1) or real(*a, **kw))
    g_out, g_w = gm(G.tensor(q), G.tensor(kv), G.tensor(kv))
    assert calls
    _close(g_out, t_out)
    _close(g_w, t_w)


# ---------------------------------------------------------------- linear_cross_entropy
LCE_CASES = {
    "indices": {},
    "unbatched": {"unbatched": True},
    "probabilities": {"probs": True},
    "k_dim_bias": {"out": (2, 3), "bias": True},
    "weights_smoothing_sum": {"weight": True, "label_smoothing": 0.2, "reduction": "sum"},
    "ignore_index_none": {"ignore_index": 1, "reduction": "none"},
}


@pytest.mark.parametrize("name", sorted(LCE_CASES))
def test_linear_cross_entropy_agrees_with_torch(name: str) -> None:
    c = LCE_CASES[name]
    N, I, C = 5, 4, 3
    out = c.get("out", ())
    x = _r(I) if c.get("unbatched") else _r(N, I)
    W = _r(C, *out, I)
    batch = () if c.get("unbatched") else (N,)
    if c.get("probs"):
        p = RNG.random((*batch, C, *out))
        target = p / p.sum(axis=len(batch), keepdims=True)
    else:
        target = RNG.integers(0, C, (*batch, *out))
    kw = {k: c[k] for k in ("reduction", "label_smoothing", "ignore_index") if k in c}
    bias = _r(C, *out) if c.get("bias") else None
    results = []
    for i, lib in enumerate((G, torch)):
        xi, Wi = _both(x, True)[i], _both(W, True)[i]
        extra = {}
        if bias is not None:
            extra["linear_bias"] = _both(bias)[i]
        if c.get("weight"):
            extra["weight"] = lib.tensor(np.array([0.5, 1.0, 2.0]))
        loss = lib.nn.functional.linear_cross_entropy(xi, Wi, lib.tensor(target), **kw, **extra)
        loss.sum().backward()
        results.append((loss, xi.grad, Wi.grad))
    for a, b in zip(*results, strict=True):
        _close(a, b)


def test_linear_cross_entropy_errors_and_options() -> None:
    F = G.nn.functional
    x, W = G.zeros(2, 4), G.zeros(3, 4)
    with pytest.raises(RuntimeError):
        F.linear_cross_entropy(x, G.zeros(3, 5), G.tensor([0, 1]))
    with pytest.raises(RuntimeError):
        F.linear_cross_entropy(x, W, G.zeros(2, 3), ignore_index=0)
    with pytest.raises(RuntimeError):
        F.linear_cross_entropy(G.zeros(4), G.zeros(3, 2, 4), G.tensor(0))
    for bad in ({"acc_policy": "fast"}, {"chunking_method": "rows"}, {"batch_chunk_size": 0},
                {"acc_dtype": G.int32}):
        with pytest.raises(ValueError):
            G.nn.LinearCrossEntropyOptions(**bad)
        with pytest.raises(ValueError):
            torch.nn.LinearCrossEntropyOptions(**{k: (torch.int32 if k == "acc_dtype" else v)
                                                  for k, v in bad.items()})
    opts = G.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method="aspect_ratio:2")
    target = G.tensor([0, 2])
    base = F.linear_cross_entropy(x + 1, W + 0.5, target)
    _close(F.linear_cross_entropy(x + 1, W + 0.5, target, options=opts), base)


def test_linear_cross_entropy_loss_module() -> None:
    tm = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, label_smoothing=0.1).double()
    gm = G.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, label_smoothing=0.1).double()
    assert list(gm.state_dict()) == list(tm.state_dict())
    gm.load_state_dict({n: G.tensor(p.detach().numpy()) for n, p in tm.state_dict().items()})
    x, target = _r(5, 4), RNG.integers(0, 3, (5, 2))
    _close(gm(G.tensor(x), G.tensor(target)), tm(torch.tensor(x), torch.tensor(target)))
    with pytest.raises(RuntimeError):
        G.nn.LinearCrossEntropyLoss(4, 3, weight=G.ones(4))


# ---------------------------------------------------------------- conv_tbc and the helpers
@pytest.mark.parametrize("pad", [0, 2])
def test_conv_tbc_agrees_with_torch(pad: int) -> None:
    x, w, b = _r(7, 2, 3), _r(3, 3, 4), _r(4)
    res = []
    for i, lib in enumerate((G, torch)):
        xi, wi, bi = (_both(a, True)[i] for a in (x, w, b))
        out = lib.conv_tbc(xi, wi, bi, pad) if lib is torch else lib.nn.functional.conv_tbc(xi, wi, bi, pad)
        out.pow(2).sum().backward()
        res.append((out, xi.grad, wi.grad, bi.grad))
    for a, b_ in zip(*res, strict=True):
        _close(a, b_)
    with pytest.raises(RuntimeError):
        G.nn.functional.conv_tbc(G.zeros(7, 3), G.zeros(3, 3, 4), G.zeros(4))


def test_dispatch_helpers() -> None:
    F, TF = G.nn.functional, torch.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    assert F.BroadcastingList2[int] is TF.BroadcastingList2[int]

    def with_indices(x, flag=False):
        return ("indices", x)

    def plain(x, flag=False):
        """doc"""
        return ("plain", x)

    for lib in (F, TF):
        fn = lib.boolean_dispatch("flag", 1, False, with_indices, plain, "mod", "chosen")
        assert fn(1) == ("plain", 1) and fn(1, True) == ("indices", 1) and fn(1, flag=True) == ("indices", 1)
        assert fn.__name__ == "chosen" and fn.__doc__ == "doc"
        lib.assert_int_or_pair(3, "k", "{} bad")
        lib.assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            lib.assert_int_or_pair((1, 2, 3), "k", "{} bad")
    with pytest.raises(RuntimeError):
        F.boolean_dispatch("flag", 1, False, plain, plain, None, None)


def test_torch_function_protocol() -> None:
    F = G.nn.functional
    log = []

    class Base:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((cls.__name__, [t.__name__ for t in types]))
            return NotImplemented if cls is Sub else ("handled by", cls.__name__)

    class Sub(Base):
        pass

    x = G.zeros(2)
    assert not F.has_torch_function((x, 1.0)) and not F.has_torch_function_unary(x)
    assert F.has_torch_function_variadic(x, Base()) and F.has_torch_function_unary(Sub())

    def api(*a):
        return "plain"

    assert F.handle_torch_function(api, (Base(), Sub()), 1) == ("handled by", "Base")
    assert log == [("Sub", ["Sub", "Base"]), ("Base", ["Sub", "Base"])]  # the subclass first

    class Never:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError):
        F.handle_torch_function(api, (Never(),))


# ---------------------------------------------------------------- modules
def _load(gm, tm) -> None:
    assert list(gm.state_dict()) == list(tm.state_dict())
    gm.load_state_dict({n: G.tensor(p.detach().numpy()) for n, p in tm.state_dict().items()})


def test_batchnorm3d_agrees_with_torch() -> None:
    tm, gm = torch.nn.BatchNorm3d(3, momentum=0.3).double(), G.nn.BatchNorm3d(3, momentum=0.3).double()
    x = _r(2, 3, 2, 3, 2)
    for _ in range(2):
        _close(gm(G.tensor(x)), tm(torch.tensor(x)))
    _close(gm.running_var, tm.running_var)
    gm.eval(), tm.eval()
    _close(gm(G.tensor(x)), tm(torch.tensor(x)))
    with pytest.raises(ValueError):
        gm(G.zeros(2, 3, 4))


LAZY = [("LazyConv1d", "Conv1d", (4, 3), {"padding": 1}, (2, 3, 9)),
        ("LazyConv3d", "Conv3d", (4, 2), {"stride": 2}, (2, 3, 5, 5, 5)),
        ("LazyConv3d", "Conv3d", (4, 2), {}, (3, 5, 5, 5)),
        ("LazyConvTranspose1d", "ConvTranspose1d", (4, 3), {"stride": 2, "groups": 1}, (2, 3, 6)),
        ("LazyConvTranspose2d", "ConvTranspose2d", (4, 3), {"output_padding": 1, "stride": 2}, (2, 6, 4, 5)),
        ("LazyConvTranspose3d", "ConvTranspose3d", (2, 2), {}, (1, 3, 3, 4, 3)),
        ("LazyInstanceNorm1d", "InstanceNorm1d", (), {"affine": True}, (2, 3, 7)),
        ("LazyInstanceNorm2d", "InstanceNorm2d", (), {"track_running_stats": True}, (2, 3, 4, 5)),
        ("LazyInstanceNorm3d", "InstanceNorm3d", (), {}, (2, 3, 2, 3, 4)),
        ("LazyBatchNorm3d", "BatchNorm3d", (), {}, (2, 3, 2, 3, 4))]


@pytest.mark.parametrize("lazy, plain, args, kw, shape", LAZY)
def test_lazy_modules_infer_and_agree_with_torch(lazy, plain, args, kw, shape) -> None:
    gm, tm = getattr(G.nn, lazy)(*args, **kw), getattr(torch.nn, lazy)(*args, **kw)
    x = _r(*shape).astype("f4")
    g_out, t_out = gm(G.tensor(x)), tm(torch.tensor(x))
    assert type(gm) is getattr(G.nn, plain) and type(tm) is getattr(torch.nn, plain)
    assert tuple(g_out.shape) == tuple(t_out.shape)
    assert {n: tuple(p.shape) for n, p in gm.state_dict().items()} == \
        {n: tuple(p.shape) for n, p in tm.state_dict().items()}
    _load(gm, tm)
    _close(gm(G.tensor(x)), tm(torch.tensor(x)), 1e-4)


def test_lazy_conv_errors() -> None:
    with pytest.raises(RuntimeError):
        G.nn.LazyConv1d(4, 3)(G.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError):
        G.nn.LazyConv1d(4, 3, groups=2)(G.zeros(2, 3, 9))


def test_adaptive_log_softmax_agrees_with_torch() -> None:
    kw = {"cutoffs": [3, 6], "div_value": 2.0, "head_bias": True}
    tm, gm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, **kw).double(), G.nn.AdaptiveLogSoftmaxWithLoss(8, 10, **kw)
    gm = gm.double()
    _load(gm, tm)
    x, target = _r(7, 8), np.array([0, 4, 9, 2, 6, 5, 8])
    gx, tx = G.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    g_res, t_res = gm(gx, G.tensor(target)), tm(tx, torch.tensor(target))
    _close(g_res.output, t_res.output)
    _close(g_res.loss, t_res.loss)
    g_res.loss.backward(), t_res.loss.backward()
    _close(gx.grad, tx.grad)
    _close(gm.tail[1][0].weight.grad, tm.tail[1][0].weight.grad)
    _close(gm.log_prob(G.tensor(x)), tm.log_prob(torch.tensor(x)))
    assert gm.predict(G.tensor(x)).tolist() == tm.predict(torch.tensor(x)).tolist()
    _close(gm(G.tensor(x[0]), G.tensor(target[0])).output, tm(torch.tensor(x[0]), torch.tensor(target[0])).output)
    with pytest.raises(RuntimeError):
        gm(G.tensor(x), G.tensor(np.array([0, 1, 2, 3, 4, 5, 10])))
    with pytest.raises(ValueError):
        G.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[6, 3])


@pytest.mark.parametrize("channels, size", [(3, 3), (9, 3), (8, 5)])
def test_cross_map_lrn2d_agrees_with_torch(channels: int, size: int) -> None:
    x = _r(2, channels, 3, 4)
    gm, tm = G.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.6, k=1.5), torch.nn.CrossMapLRN2d(size, 0.5, 0.6, 1.5)
    _close(gm(G.tensor(x)), tm(torch.tensor(x)))
    # PyTorch's legacy backward is not the exact gradient of its forward (another channel window); opgen's
    # is autograd's through the forward, checked against finite differences
    assert G.autograd.gradcheck(gm, (G.tensor(x[:1, :, :2, :2], requires_grad=True),))


def test_nllloss2d_is_nllloss() -> None:
    logp = np.log(RNG.dirichlet(np.ones(4), (2, 3, 3)).transpose(0, 3, 1, 2))
    target = RNG.integers(0, 4, (2, 3, 3))
    with pytest.warns(FutureWarning):
        gm = G.nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning):
        tm = torch.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(gm, G.nn.NLLLoss)
    _close(gm(G.tensor(logp), G.tensor(target)), tm(torch.tensor(logp), torch.tensor(target)))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_agrees_with_torch(nd: int) -> None:
    x, w = _r(2, 4, *(6,) * nd), _r(4, 2, *(3,) * nd)
    kw = {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}
    out = getattr(torch.nn.functional, f"conv{nd}d")(torch.tensor(x), torch.tensor(w), **kw)
    go = _r(*out.shape)
    for kind in ("input", "weight"):
        g_fn, t_fn = getattr(G.nn.grad, f"conv{nd}d_{kind}"), getattr(torch.nn.grad, f"conv{nd}d_{kind}")
        if kind == "input":
            g = g_fn(x.shape, G.tensor(w), G.tensor(go), **kw)
            t = t_fn(x.shape, torch.tensor(w), torch.tensor(go), **kw)
        else:
            g = g_fn(G.tensor(x), w.shape, G.tensor(go), **kw)
            t = t_fn(torch.tensor(x), w.shape, torch.tensor(go), **kw)
        _close(g, t)
    with pytest.raises(RuntimeError):
        G.nn.grad.conv2d_input((1, 4, 6, 6), G.tensor(_r(3, 4, 3, 3)), G.zeros(1, 3, 2, 2))


def test_common_types() -> None:
    from generated.nn import common_types
    assert common_types._size_2_t == (int | tuple[int, int])
    assert common_types.T.__name__ == "T"


def test_nested_io_function_is_legacy_as_in_torch() -> None:
    import warnings

    class Ours(G.autograd.NestedIOFunction):
        def forward_extended(self, a):
            return a

    class Theirs(torch.autograd.NestedIOFunction):
        def forward_extended(self, a):
            return a

    assert issubclass(Ours, G.autograd.Function)
    with pytest.raises(RuntimeError):  # legacy instance calls are gone
        Ours()(G.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception):  # noqa: B017 (PyTorch 2.13 cannot call one either)
            Theirs()(torch.ones(2))
    with pytest.raises(NotImplementedError):
        G.autograd.NestedIOFunction().backward_extended(G.ones(1))
