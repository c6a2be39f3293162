"""Sampling ops built on the uniform and normal generators (`G.rand`, `G.randn`): bernoulli, normal,
multinomial. Their streams come from the same generators (reproducible with `G.manual_seed` or a
`generator=`), so they are not PyTorch's bit for bit."""

from __future__ import annotations

from typing import Any

from runtime import dtypes, opcall


def _G() -> Any:
    return opcall.api


def bernoulli(self: Any, generator: Any = None) -> Any:
    u = _G().rand(tuple(self.shape), generator=generator, dtype=dtypes.float64, device=self.device)
    return (u < self.detach().to(dtypes.float64)).to(self.dtype)


def bernoulli_p(self: Any, p: float, generator: Any = None) -> Any:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    u = _G().rand(tuple(self.shape), generator=generator, dtype=dtypes.float64, device=self.device)
    return (u < p).to(self.dtype)


def _check_std(std: Any) -> None:
    if getattr(std, "is_meta", False):
        return  # no values to check (Note [Meta tensors] in runtime/meta_array.py)
    bad = (std < 0).any() if not isinstance(std, float | int) else std < 0
    if bool(bad):
        raise RuntimeError("normal expects all elements of std >= 0.0")


def normal_Tensor_float(mean: Any, std: float = 1, generator: Any = None) -> Any:
    _check_std(std)
    z = _G().randn(tuple(mean.shape), generator=generator, dtype=mean.dtype, device=mean.device)
    return z * std + mean.detach()  # laid out as the (row-major) draws, as PyTorch's result


def normal_float_Tensor(mean: float, std: Any, generator: Any = None) -> Any:
    _check_std(std)
    z = _G().randn(tuple(std.shape), generator=generator, dtype=std.dtype, device=std.device)
    return z * std.detach() + mean


def normal_Tensor_Tensor(mean: Any, std: Any, generator: Any = None) -> Any:
    _check_std(std)
    shape = _G().broadcast_shapes(mean.shape, std.shape)
    dt = dtypes.promote_types(mean.dtype, std.dtype)
    z = _G().randn(tuple(shape), generator=generator, dtype=dt, device=mean.device)
    return z * std.detach() + mean.detach()  # laid out as the (row-major) draws, as PyTorch's result


def normal_float_float(mean: float, std: float, size: Any, generator: Any = None, dtype: Any = None,
                       layout: Any = None, device: Any = None, pin_memory: Any = None) -> Any:
    _check_std(std)
    return _G().randn(tuple(size), generator=generator, dtype=dtype, device=device) * std + mean


def multinomial(self: Any, num_samples: int, replacement: bool = False, generator: Any = None) -> Any:
    G = _G()
    if self.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input")
    p = self.detach().to(dtypes.float64)
    p2 = p.reshape(1, -1) if p.dim() == 1 else p
    n = p2.shape[1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not p2.is_meta:  # a meta tensor has no values to check (Note [Meta tensors] in runtime/meta_array.py)
        if bool((p2 < 0).any()) or not bool(p2.isfinite().all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if bool((p2.sum(1) <= 0).any()):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = p2.shape[0]
    if replacement:  # inverse CDF of uniform draws
        cdf = p2.cumsum(1)
        cdf = cdf / cdf[:, -1:]
        u = G.rand(rows, num_samples, generator=generator, dtype=dtypes.float64, device=self.device)
        out = G.searchsorted(cdf, u, right=True).clamp(max=n - 1)
    else:  # Gumbel top-k: the k largest of log p - log(-log u), without replacement
        u = G.rand(rows, n, generator=generator, dtype=dtypes.float64, device=self.device).clamp(min=1e-300)
        keys = p2.log() - (-u.log()).log()
        out = keys.topk(num_samples, 1)[1]
    return out.reshape(-1) if self.dim() == 1 else out


def bernoulli__float(self: Any, p: float = 0.5, generator: Any = None) -> Any:
    """`t.bernoulli_(p)`: each element 1 with probability p, else 0, in t's dtype (any dtype, bool too)."""
    return self.copy_(bernoulli_p(self, p, generator))  # CompositeExplicitAutograd: the gradient is zero


def bernoulli__Tensor(self: Any, p: Any, generator: Any = None) -> Any:
    """`t.bernoulli_(p)` with a tensor of probabilities broadcastable to t."""
    probabilities = p.detach().to(dtypes.float64)
    if not probabilities.is_meta and bool(((probabilities < 0) | (probabilities > 1)).any()):
        raise RuntimeError("bernoulli_ expects all elements of p to be in [0, 1]")
    u = _G().rand(tuple(self.shape), generator=generator, dtype=dtypes.float64, device=self.device)
    return self.copy_((u < probabilities).to(self.dtype))
