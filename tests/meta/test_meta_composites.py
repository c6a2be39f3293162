"""Composites that read values on the CPU (a check, a size, a table built by NumPy) take meta tensors too:
each gives the shape, dtype and strides PyTorch's meta result has (torch is the oracle: the module skips
without it), or, where opgen's CPU kernel lays its result out otherwise (LAPACK results), the strides of
opgen's own CPU result. Ops whose output size is a matter of values refuse meta inputs (as PyTorch's do)
unless told the size. Training on meta tensors: forward, backward and the optimizer step. A meta tensor
beside a CPU tensor with dimensions is a device-mismatch error (Note [Meta tensors] in runtime/meta_array.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import generated as G  # noqa: E402
from runtime.kernels.meta_shape import DataDependentOutputError  # noqa: E402
from runtime.meta_array import MetaDataError  # noqa: E402

F = G.nn.functional
TF = torch.nn.functional


def _lib_meta(lib: Any) -> Callable[..., Any]:
    def make(*shape: int, dtype: str = "float32") -> Any:
        return lib.empty(shape, dtype=getattr(lib, dtype), device="meta")
    return make


def _outputs(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _outputs(v)]
    return [value]


def _same_as_torch(call: Callable[[Any, Callable[..., Any]], Any], strides: bool = True) -> list[Any]:
    """Run `call(lib, meta)` with torch and with opgen; every output has torch's shape and dtype (and
    strides, where `strides`), and lies on meta. Returns opgen's outputs."""
    want = _outputs(call(torch, _lib_meta(torch)))
    got = _outputs(call(G, _lib_meta(G)))
    assert len(got) == len(want)
    for w, g in zip(want, got, strict=True):
        assert g.device.type == "meta"
        assert tuple(g.shape) == tuple(w.shape)
        assert g.dtype.name == str(w.dtype).removeprefix("torch.")
        if strides and w.numel() > 1:
            assert tuple(g.stride()) == tuple(w.stride())
    return got


@pytest.mark.parametrize("op", ["linspace", "logspace"])
@pytest.mark.parametrize("dtype", [None, "int64", "float64"])
def test_spaced_with_meta_tensor_bounds(op: str, dtype: str | None) -> None:
    """A 0-dim meta tensor bound has no value to read: the result is on meta, even when device='cpu'."""
    def call(lib: Any, meta: Callable[..., Any]) -> Any:
        kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        return (getattr(lib, op)(meta(), 3, 7, **kw), getattr(lib, op)(2, meta(), 5, device="cpu", **kw),
                getattr(lib, op)(lib.tensor(1.0), meta(), 4, **kw))
    _same_as_torch(call)
    with pytest.raises(RuntimeError, match="0-dimensional"):
        getattr(G, op)(G.empty(2, device="meta"), 3, 5)
    assert G.linspace(G.tensor(1.0), G.tensor(3.0), 3).tolist() == [1.0, 2.0, 3.0]  # values still read


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial(replacement: bool) -> None:
    _same_as_torch(lambda lib, meta: (lib.multinomial(meta(3, 5), 4, replacement),
                                      lib.multinomial(meta(5), 2, replacement)))
    with pytest.raises(RuntimeError):  # the checks of arguments stay
        G.multinomial(G.empty(3, 5, device="meta"), 6)


def test_bernoulli_with_tensor_probabilities() -> None:
    _same_as_torch(lambda lib, meta: meta(3, 4).bernoulli_(meta(3, 4)))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode: str) -> None:
    def call(lib: Any, meta: Callable[..., Any]) -> Any:
        f = (TF if lib is torch else F).embedding_bag
        weight = meta(10, 3)
        cpu_index = lib.tensor([1, 2, 3, 4, 5, 6])
        return (f(meta(4, 3, dtype="int64"), weight, mode=mode),
                f(meta(6, dtype="int64"), weight, meta(3, dtype="int64"), mode=mode),
                f(meta(6, dtype="int64"), weight, meta(3, dtype="int64"), mode=mode, include_last_offset=True),
                f(cpu_index, weight, lib.tensor([0, 2]), mode=mode))
    _same_as_torch(call)


def test_embedding_bag_sample_weights_and_gradient() -> None:
    weight = G.empty(10, 3, device="meta", requires_grad=True)
    psw = G.empty(6, device="meta", requires_grad=True)
    out = F.embedding_bag(G.empty(6, dtype=G.int64, device="meta"), weight, G.empty(2, dtype=G.int64, device="meta"),
                          mode="sum", per_sample_weights=psw)
    assert tuple(out.shape) == (2, 3) and out.is_meta
    out.sum().backward()
    assert tuple(weight.grad.shape) == (10, 3) and tuple(psw.grad.shape) == (6,)
    with pytest.raises(RuntimeError, match="meta"):  # meta indices, weight with data: nothing to read them with
        F.embedding_bag(G.empty(2, 3, dtype=G.int64, device="meta"), G.ones(10, 3))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss(reduction: str) -> None:
    def call(lib: Any, meta: Callable[..., Any]) -> Any:
        f = (TF if lib is torch else F).ctc_loss
        return (f(meta(6, 2, 5), meta(2, 3, dtype="int64"), [6, 5], [3, 2], reduction=reduction),
                f(meta(6, 5), meta(3, dtype="int64"), [6], [3], reduction=reduction),
                f(meta(6, 2, 5), meta(5, dtype="int64"), (6, 4), (3, 2), reduction=reduction))
    _same_as_torch(call)
    # lengths as meta tensors (PyTorch's meta ctc_loss has no kernel for them): only their number is read
    loss = F.ctc_loss(G.empty(6, 2, 5, device="meta"), G.empty(5, dtype=G.int64, device="meta"),
                      G.empty(2, dtype=G.int64, device="meta"), G.empty(2, dtype=G.int64, device="meta"),
                      reduction=reduction)
    assert loss.is_meta and tuple(loss.shape) == ((2,) if reduction == "none" else ())
    log_probs = G.empty(6, 2, 5, device="meta", requires_grad=True)
    F.ctc_loss(log_probs, G.empty(2, 3, dtype=G.int64, device="meta"), [6, 6], [3, 3]).backward()
    assert tuple(log_probs.grad.shape) == (6, 2, 5)
    with pytest.raises(RuntimeError, match="input_lengths"):
        F.ctc_loss(G.empty(6, 2, 5, device="meta"), G.empty(2, 3, dtype=G.int64, device="meta"), [6], [3, 3])


def test_ldl_factor_and_solve() -> None:
    """Shapes and dtypes as PyTorch's; strides as opgen's own CPU kernel lays the results out."""
    _same_as_torch(lambda lib, meta: (lib.linalg.ldl_factor_ex(meta(2, 4, 4)), lib.linalg.ldl_factor(meta(4, 4)),
                                      lib.linalg.ldl_solve(meta(2, 4, 4), meta(2, 4, dtype="int32"),
                                                           meta(2, 4, 2))), strides=False)
    a = G.eye(4).expand(2, 4, 4) * 3 + G.ones(4, 4)
    cpu = G.linalg.ldl_factor_ex(a)
    meta = G.linalg.ldl_factor_ex(a.to("meta"))
    for c, m in zip(cpu, meta, strict=True):
        assert (tuple(m.shape), m.stride(), m.dtype) == (tuple(c.shape), c.stride(), c.dtype)
    b = G.ones(2, 4, 3)
    x = G.linalg.ldl_solve(cpu[0], cpu[1], b)
    xm = G.linalg.ldl_solve(meta[0], meta[1], b.to("meta"))
    assert (tuple(xm.shape), xm.stride(), xm.dtype) == (tuple(x.shape), x.stride(), x.dtype)
    with pytest.raises(RuntimeError, match="square"):
        G.linalg.ldl_factor(G.empty(3, 4, device="meta"))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss(reduction: str) -> None:
    _same_as_torch(lambda lib, meta: (TF if lib is torch else F).multilabel_margin_loss(
        meta(3, 5), meta(3, 5, dtype="int64"), reduction=reduction))
    # one sample: the shape of opgen's (and PyTorch's) CPU result; PyTorch's meta kernel keeps a dim of 1
    cpu = F.multilabel_margin_loss(G.ones(5), G.tensor([1, 2, -1, 0, 0]), reduction=reduction)
    meta = F.multilabel_margin_loss(G.empty(5, device="meta"), G.empty(5, dtype=G.int64, device="meta"),
                                    reduction=reduction)
    assert meta.is_meta and meta.shape == cpu.shape
    with pytest.raises(RuntimeError, match="device"):
        F.multilabel_margin_loss(G.ones(3, 5), G.empty(3, 5, dtype=G.int64, device="meta"))


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool(nd: int) -> None:
    def call(lib: Any, meta: Callable[..., Any]) -> Any:
        f = getattr(TF if lib is torch else F, f"fractional_max_pool{nd}d")
        size = (8,) * nd
        return (f(meta(2, 3, *size), 2, output_size=5, return_indices=True),
                f(meta(3, *size), 3, output_ratio=(0.5,) * nd),
                f(meta(1, 2, *size), 2, output_size=4, _random_samples=meta(1, 2, nd)))
    _same_as_torch(call)


def test_repeat_interleave_with_tensor_repeats() -> None:
    _same_as_torch(lambda lib, meta: (meta(3, 4).repeat_interleave(meta(3, dtype="int64"), 0, output_size=7),
                                      meta(3, 4).repeat_interleave(meta(1, dtype="int64"), 1, output_size=8),
                                      lib.repeat_interleave(meta(2, 3), meta(6, dtype="int64"), output_size=9)))
    with pytest.raises(DataDependentOutputError, match="repeat_interleave"):
        G.empty(3, 4, device="meta").repeat_interleave(G.empty(3, dtype=G.int64, device="meta"), 0)
    # output_size is checked against the repeats where they have values, as PyTorch checks it
    with pytest.raises(RuntimeError, match="output_size"):
        G.ones(3, 4).repeat_interleave(G.tensor([1, 2, 3]), 0, output_size=5)
    with pytest.raises(RuntimeError, match="output_size"):
        G.ones(3, 4).repeat_interleave(2, 0, output_size=5)
    assert G.ones(3, 4).repeat_interleave(G.tensor([1, 2, 3]), 0, output_size=6).shape == (6, 4)


def test_nonzero_static() -> None:
    _same_as_torch(lambda lib, meta: (lib.nonzero_static(meta(3, 4), size=5),
                                      lib.nonzero_static(meta(), size=2)), strides=False)
    assert G.nonzero_static(G.empty(3, 4, device="meta"), size=5).stride() == G.nonzero_static(
        G.ones(3, 4), size=5).stride()


def test_antialiased_bilinear_of_uint8() -> None:
    _same_as_torch(lambda lib, meta: lib.ops.aten._upsample_bilinear2d_aa(meta(2, 3, 10, 20, dtype="uint8"),
                                                                          [4, 6], False, None)
                   if lib is torch else G._upsample_bilinear2d_aa(meta(2, 3, 10, 20, dtype="uint8"), [4, 6],
                                                                   False, None))


# -- training on meta tensors ---------------------------------------------------------------------------------

def _check_grads(module: Any) -> None:
    for name, p in module.named_parameters():
        assert p.grad is not None and p.grad.is_meta and tuple(p.grad.shape) == tuple(p.shape), name


def test_training_step_on_meta() -> None:
    """Forward, a cross-entropy and a layer-norm backward (whose CPU formulas run on arrays), gradient
    clipping and an optimizer step, all on meta tensors."""
    G.manual_seed(0)
    model = G.nn.Sequential(G.nn.Linear(4, 8), G.nn.LayerNorm(8), G.nn.ReLU(), G.nn.Linear(8, 3)).to("meta")
    opt = G.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = G.empty(5, 4, device="meta")
    y = G.empty(5, dtype=G.int64, device="meta")
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        norm = G.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    assert loss.is_meta and loss.shape == () and norm.is_meta
    _check_grads(model)


def test_transformer_layer_backward_on_meta() -> None:
    layer = G.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, device="meta")
    layer(G.empty(2, 3, 8, device="meta")).sum().backward()
    _check_grads(layer)


def test_clip_grad_norm_on_cpu_unchanged() -> None:
    lin = G.nn.Linear(4, 3)
    lin(G.ones(2, 4) * 10).sum().backward()
    total = G.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
    assert float(total) > 0.5
    clipped = G.cat([lin.weight.grad.flatten(), lin.bias.grad.flatten()]).norm()
    assert abs(float(clipped) - 0.5) < 1e-4


# -- device mismatch ------------------------------------------------------------------------------------------

_MIXED = {
    "add": lambda a, b: a + b,
    "matmul": lambda a, b: a @ b,
    "cat": lambda a, b: G.cat([a, b]),
    "where": lambda a, b: G.where(a > 0, a, b),
    "addmm": lambda a, b: G.addmm(a, a, b),
    "linear": lambda a, b: F.linear(a, b),
    "mse_loss": lambda a, b: F.mse_loss(a, b),
    "add_": lambda a, b: a.add_(b),
    "layer_norm": lambda a, b: F.layer_norm(a, [3], b[0]),
    "index_select": lambda a, b: a.index_select(0, G.zeros(2, dtype=G.int64, device=b.device)),
    "index (meta index of a CPU tensor)": lambda a, b: b[G.zeros(2, dtype=G.int64, device=a.device)],
    "index_put_ (meta values into a CPU tensor)": lambda a, b: b.index_put_((G.zeros(1, dtype=G.int64),), a[0]),
    "index_put_ (meta index into a CPU tensor)":
        lambda a, b: b.index_put_((G.zeros(1, dtype=G.int64, device=a.device),), b[0]),
}


# the index cases say themselves which tensor is on meta; the others take both orders
_ORDERS = [(name, first) for name in _MIXED for first in ((True,) if name.startswith("index") else (True, False))]


@pytest.mark.parametrize(("name", "meta_first"), _ORDERS)
def test_meta_beside_cpu_is_a_device_mismatch(name: str, meta_first: bool) -> None:
    """A CPU tensor with dimensions and a meta tensor in one call: a RuntimeError naming both devices, never a
    CPU result computed from a meta tensor or a CPU tensor left silently unwritten."""
    meta, cpu = G.empty(3, 3, device="meta"), G.ones(3, 3)
    before = cpu.clone()
    a, b = (meta, cpu) if meta_first else (cpu, meta)
    with pytest.raises(RuntimeError, match=r"meta") as info:
        _MIXED[name](a, b)
    assert "cpu" in str(info.value) and not isinstance(info.value, MetaDataError)
    assert G.equal(cpu, before)


def test_meta_beside_cpu_index_tensors_runs_the_meta_kernel() -> None:
    """The allowed mix: CPU index tensors (and CPU values) of a meta tensor, as PyTorch takes them."""
    meta = G.empty(3, 3, device="meta")
    assert meta[G.tensor([0, 2])].is_meta
    assert meta.index_put_((G.tensor([0]),), G.ones(3)) is meta
    assert (meta + G.tensor(2.0)).is_meta  # a 0-dim CPU tensor is a scalar


# -- CPU results laid out as PyTorch's, and as their Meta kernels describe them -----------------------------------

_LAYOUTS = {
    "index after a slice": lambda lib, x: x[:, :, lib.tensor([0, 3])],
    "index between slices": lambda lib, x: x[:, lib.tensor([0, 3]), :],
    "ravel of a strided view": lambda lib, x: x.reshape(-1)[::2].ravel(),
    "baddbmm of a transposed self": lambda lib, x: lib.baddbmm(x.transpose(1, 2), x, x),
    "addbmm of a transposed self": lambda lib, x: lib.addbmm(x[0].t(), x, x, beta=0.5),
    "normal around a transposed mean": lambda lib, x: lib.normal(x.transpose(1, 2), 1.0),
    "cat of transposed tensors": lambda lib, x: lib.cat([x.transpose(0, 2), x.transpose(0, 2)], 1),
    "roll of a transposed tensor": lambda lib, x: lib.roll(x.transpose(0, 2), 1, 0),
    "cumsum of a transposed tensor": lambda lib, x: lib.cumsum(x.transpose(1, 2), 1),
    "cumsum of an expanded tensor": lambda lib, x: lib.cumsum(x[:1].expand(5, 5, 5), 0),
    "gather from a transposed tensor":
        lambda lib, x: lib.gather(x.transpose(0, 2), 1, lib.tensor([[[0, 2]] * 5] * 5).to(x.device)),
    "exp of an expanded int64 tensor": lambda lib, x: lib.exp(x[:1].long().expand(5, 5, 5)),
    "comparison of an expanded tensor": lambda lib, x: x[:, :1].long().expand(5, 5, 5) > 3,
    "to() of an expanded tensor": lambda lib, x: x[:1].expand(5, 5, 5).to(lib.int64),
    "to() of a sliced transposed tensor": lambda lib, x: x.transpose(0, 2)[::2].to(lib.int64),
    "to() of an expanded transposed tensor": lambda lib, x: x[0].t()[None].expand(3, 5, 5).to(lib.float64),
    "erf of an expanded tensor": lambda lib, x: lib.erf(x[:1].expand(5, 5, 5)),
    "bessel_j0 of an expanded int64 tensor": lambda lib, x: lib.special.bessel_j0(x[:1].long().expand(5, 5, 5)),
    "sign of a transposed bool tensor": lambda lib, x: lib.sign(x.transpose(0, 2) > 4),
    "nan_to_num of a transposed int64 tensor": lambda lib, x: lib.nan_to_num(x.transpose(0, 2).long()),
    "cummax": lambda lib, x: lib.cummax(x, 1),
    "cummin": lambda lib, x: lib.cummin(x, 2),
    "lu_unpack": lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(x[0] + 5 * lib.eye(5))),
    "antialiased uint8 resize": lambda lib, x: (
        lib.ops.aten._upsample_bilinear2d_aa if lib is torch else G._upsample_bilinear2d_aa)(
        (x.unsqueeze(0) * 10).to(lib.uint8), [3, 7], False, None),
}


@pytest.mark.parametrize("name", list(_LAYOUTS))
def test_cpu_layout_matches_pytorch_and_meta(name: str) -> None:
    values = [[[float((i * 7 + j * 3 + k) % 11) for k in range(5)] for j in range(5)] for i in range(5)]
    call = _LAYOUTS[name]
    want = _outputs(call(torch, torch.tensor(values)))
    cpu = _outputs(call(G, G.tensor(values)))
    meta = _outputs(call(G, G.tensor(values).to("meta"))) if name != "lu_unpack" else None
    for i, (w, c) in enumerate(zip(want, cpu, strict=True)):
        assert tuple(c.shape) == tuple(w.shape) and c.stride() == w.stride(), (i, c.stride(), w.stride())
        if meta is not None:
            assert meta[i].is_meta and meta[i].stride() == c.stride()
    if name == "lu_unpack":  # its meta form takes the factors as meta tensors
        LU, piv = G.linalg.lu_factor(G.tensor(values)[0] + 5 * G.eye(5))
        assert [t.stride() for t in G.lu_unpack(LU.to("meta"), piv.to("meta"))] == [t.stride() for t in cpu]


def test_zero_dim_mask_of_a_zero_dim_meta_tensor_is_data_dependent() -> None:
    """x[mask] with a 0-dim mask keeps x or drops it by the mask's value: data-dependent, like every mask."""
    x, mask = G.empty((), device="meta"), G.empty((), dtype=G.bool, device="meta")
    with pytest.raises(DataDependentOutputError):
        G.masked_select(x, mask)
    with pytest.raises((DataDependentOutputError, MetaDataError)):  # Python indexing reads a 0-dim mask's value
        x[mask]


def test_bfloat16_on_meta() -> None:
    """bfloat16 (the CUDA backend's dtype, which NumPy lacks) works on meta: composites that build small
    weight tensors in the input's dtype, and defaults read from the dtype."""
    def call(lib: Any, meta: Callable[..., Any]) -> Any:
        f = TF if lib is torch else F
        x = meta(2, 3, 8, 8, dtype="bfloat16")
        return (f.adaptive_avg_pool2d(x, 3), f.interpolate(x, scale_factor=2, mode="bilinear"),
                f.avg_pool2d(x, 2), f.rms_norm(x, [8]), lib.tensor([1.0, 2.0], dtype=lib.bfloat16, device="meta"),
                lib.index_fill(meta(dtype="bfloat16"), 0, meta(1, dtype="int64"), 2.0))
    _same_as_torch(call)
    with pytest.raises(TypeError, match="bfloat16"):  # the CPU still has no such type
        G.tensor([1.0], dtype=G.bfloat16)


def test_tensor_split_at_positional_indices() -> None:
    """`tensor_split(x, (2, 4))`: split points given positionally (the binding passes them as `sections`)."""
    _same_as_torch(lambda lib, meta: lib.tensor_split(meta(5, 6), (1, 4), 1))
    assert [t.tolist() for t in G.tensor_split(G.arange(10), (2, 4))] == [[0, 1], [2, 3], [4, 5, 6, 7, 8, 9]]
    assert [t.tolist() for t in G.arange(5).tensor_split([3])] == [[0, 1, 2], [3, 4]]


@pytest.mark.parametrize(("shape", "strides"), [((4, 4), (1, 4)), ((2, 4), (1, 8)), ((4, 4), (0, 1)),
                                                 ((2, 3, 4), (0, 1, 3)), ((5, 1, 5), (5, 5, 1)),
                                                 ((3, 3), (1, 1)), ((2, 2, 3), (6, 0, 2)), ((4, 2), (4, 2))])
def test_dense_strides_like_is_pytorchs_preserve_format(shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
    from runtime.strides import dense_strides_like
    extent = sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1
    viewed = torch.empty(extent).as_strided(shape, strides)
    assert dense_strides_like(shape, strides) == torch.empty_like(viewed).stride()


@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_of_nothing_on_meta(op: str) -> None:
    """median() of an empty tensor is a 0-dim NaN on the CPU (and in PyTorch); on meta, its 0-dim geometry."""
    _same_as_torch(lambda lib, meta: getattr(meta(0, 3), op)())
    assert getattr(G.empty(0, device="meta"), op)().shape == getattr(G.tensor([]), op)().shape == ()


def test_resize_grows_a_meta_tensor() -> None:
    """resize_ past a meta tensor's storage: a larger (data-less) storage, nothing copied."""
    _same_as_torch(lambda lib, meta: meta(0, 4).resize_([2, 3]))
    grown = G.empty(2, 2, device="meta").t().resize_([5])
    assert grown.is_meta and tuple(grown.shape) == (5,) and grown.stride() == (1,)
