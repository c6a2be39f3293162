"""dtype promotion rules a user relies on: int + float, int / int, bool arithmetic, scalars, to()/type()."""

import torch

i = torch.tensor([1, 2, 3])
f = torch.tensor([0.5, 1.5, 2.5])
h = torch.tensor([1.0, 2.0], dtype=torch.float16)
d = torch.tensor([1.0, 2.0], dtype=torch.float64)
bo = torch.tensor([True, False, True])
i32 = torch.tensor([1, 2], dtype=torch.int32)
u8 = torch.tensor([250, 3], dtype=torch.uint8)


def dt(t):
    return str(t.dtype).split(".")[-1]


def _err(fn):
    try:
        fn()
    except Exception as e:
        return e
    return None


results = {
    "int_float": dt(i + f),
    "int_div": dt(i / 2),
    "int_div_val": (i / 2).tolist(),
    "int_floordiv": dt(i // 2),
    "int_times_float_scalar": dt(i * 1.5),
    "float_times_int": dt(f * 2),
    "half_double": dt(h.double() + d),
    "half_scalar": dt(h * 2.5),
    "bool_sum": bo.sum().item(),
    "bool_dtype_sum": dt(bo.sum()),
    "bool_plus_int": dt(bo + i),
    "bool_float": dt(bo * 1.0),
    "i32_i64": dt(i32 + torch.tensor([1, 1])),
    "i32_scalar": dt(i32 + 5),
    "u8_wrap": (u8 + 10).tolist(),
    "u8_dtype": dt(u8 + 10),
    "mean_int_err": type(_err(lambda: i.mean())).__name__,
    "int_pow": dt(i**2),
    "int_pow_float": dt(i**0.5),
    "compare": dt(i > 1),
    "where_mix": dt(torch.where(bo, i, f)),
    "to_type": dt(f.to(torch.int32)),
    "trunc_cast": f.to(torch.int64).tolist(),
    "neg_trunc": torch.tensor([-1.7, 1.7]).long().tolist(),
    "type_str": f.type(),
    "type_long_str": i.type(),
    "result_type": dt(torch.tensor(0, dtype=torch.result_type(i, f))),
    "promote": str(torch.promote_types(torch.int32, torch.float32)).split(".")[-1],
    "can_cast": torch.can_cast(torch.float64, torch.int32),
    "cat_mix": dt(torch.cat([i.float(), f])),
    "arange_float": dt(torch.arange(0, 1, 0.25)),
    "arange_int": dt(torch.arange(5)),
    "full_int": dt(torch.full((2,), 3)),
    "full_float": dt(torch.full((2,), 3.0)),
    "finfo_eps": torch.finfo(torch.float32).eps,
    "iinfo_max": torch.iinfo(torch.int32).max,
    "sum_bool_dim": bo.reshape(3, 1).sum(0).tolist(),
    "abs_u8": dt(u8.abs()),
    "mul_bool": (bo * bo).tolist(),
    "float_eq_int": (f.floor() == torch.tensor([0, 1, 2])).tolist(),
}
