"""In-place ops, pointwise math with scalars, comparison helpers and clamp variants."""

import numpy as np
import torch

a = torch.tensor(np.linspace(-2, 2, 9).reshape(3, 3), dtype=torch.float32)
b = a.clone()
b.add_(1).mul_(2).sub_(0.5).div_(2)
c = a.clone()
c.clamp_(min=-1.0, max=1.0)
d = a.clone()
d.abs_().sqrt_()
e = a.clone()
e.addcmul_(a, a, value=0.5)
f = torch.zeros(3)
f += torch.tensor([1.0, 2.0, 3.0])
f *= 2
f -= 1
f /= 4
g = a.clone()
g.pow_(2)
g.neg_()
g.exp_()
h = a.clone().relu_()
i = torch.ones(2, 2)
i.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
j = torch.zeros(4).normal_() * 0 + 1
k = a.clone()
k[0].zero_()
k.masked_fill_(k < -1, 9.0)
results = {
    "b": b,
    "c": c,
    "d": d,
    "e": e,
    "f": f,
    "g": g,
    "h": h,
    "i": i,
    "j": j,
    "k": k,
    "add_alpha": torch.add(a, a, alpha=2),
    "sub_alpha": a.sub(1, alpha=3) if False else a.sub(a, alpha=3),
    "rsub": 1 - a,
    "rdiv": 1 / (a + 3),
    "pow": a**2,
    "rpow": 2**a,
    "floordiv": torch.tensor([7, -7]) // 2,
    "mod": torch.tensor([7, -7]) % 3,
    "true_div": torch.tensor([7, 8]) / 2,
    "div_floor": torch.div(torch.tensor([7.0, -7.0]), 2, rounding_mode="floor"),
    "div_trunc": torch.div(torch.tensor([7, -7]), 2, rounding_mode="trunc"),
    "clamp_t": torch.clamp(a, min=torch.zeros(3), max=torch.ones(3)),
    "clip": a.clip(-0.5, 0.5),
    "clamp_min": a.clamp_min(0),
    "clamp_max": torch.clamp(a, max=0.0),
    "sign": a.sign(),
    "round": (a * 1.3).round(),
    "round_dec": torch.round(a * 1.234, decimals=2),
    "floor": a.floor(),
    "ceil": a.ceil(),
    "trunc": a.trunc(),
    "frac": a.frac(),
    "sigmoid": torch.sigmoid(a),
    "tanh": a.tanh(),
    "log1p": (a + 3).log1p(),
    "rsqrt": (a + 3).rsqrt(),
    "lerp": torch.lerp(a, b, 0.3),
    "addcdiv": torch.addcdiv(a, a, a + 5, value=2.0),
    "isclose": torch.isclose(a, a + 1e-7),
    "allclose": torch.allclose(a, b),
    "equal": torch.equal(a, a.clone()),
    "eq": a.eq(0),
    "ne": (a != 0),
    "ge": a.ge(1),
    "lt": torch.lt(a, 0),
    "logical": torch.logical_and(a > 0, a < 1.5),
    "logical_not": ~(a > 0),
    "bitand": (a > 0) & (a < 1),
    "bitor": (a > 1) | (a < -1),
    "xor": (a > 0) ^ (a > 1),
    "isnan": torch.isnan(torch.tensor([1.0, float("nan")])),
    "isinf": torch.isinf(torch.tensor([float("inf"), 1.0])),
    "isfinite": torch.isfinite(torch.tensor([float("inf"), 1.0])),
    "nan_to_num": torch.nan_to_num(torch.tensor([float("nan"), float("inf"), 1.0])),
    "square": a.square(),
    "exp2": torch.exp2(a),
    "logaddexp": torch.logaddexp(a, b),
    "hypot": torch.hypot(a, b),
    "atan2": torch.atan2(a, b + 5),
    "fmod": torch.fmod(a, 1.5),
    "remainder": torch.remainder(a, 1.5),
    "erf": torch.erf(a),
    "mul_int_float": (torch.tensor([1, 2]) * 1.5).tolist(),
    "int_add": (torch.tensor([1, 2]) + torch.tensor([True, False])).tolist(),
    "abs_int": torch.tensor([-3, 3]).abs(),
}
