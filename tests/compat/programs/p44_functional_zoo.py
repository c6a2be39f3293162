"""nn.functional odds and ends: pad, normalize, cosine_similarity, pairwise_distance, embedding, dropout in
eval, interpolate-free upsampling by repeat, gelu/silu/elu/leaky_relu/softplus, hardtanh, F.linear, unfold ops."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(44)
x = torch.tensor(rng.normal(size=(3, 4)), dtype=torch.float32)
y = torch.tensor(rng.normal(size=(3, 4)), dtype=torch.float32)
w = torch.tensor(rng.normal(size=(2, 4)), dtype=torch.float32)
emb = torch.tensor(rng.normal(size=(5, 3)), dtype=torch.float32)
drop = nn.Dropout(0.5)
drop.eval()
results = {
    "pad": F.pad(x[:1], (1, 2)),
    "pad_value": F.pad(x[:1, :2], (1, 1), value=9.0),
    "pad_2d": list(F.pad(x.view(1, 1, 3, 4), (1, 1, 2, 0)).shape),
    "normalize": F.normalize(x, dim=1),
    "normalize_p1": F.normalize(x, p=1.0, dim=0),
    "cos": F.cosine_similarity(x, y),
    "cos_dim0": F.cosine_similarity(x, y, dim=0),
    "pdist": F.pairwise_distance(x, y),
    "embedding": F.embedding(torch.tensor([[0, 4], [2, 2]]), emb),
    "dropout_eval": torch.equal(drop(x), x),
    "f_dropout_off": torch.equal(F.dropout(x, 0.5, training=False), x),
    "gelu": F.gelu(x),
    "gelu_tanh": F.gelu(x, approximate="tanh"),
    "silu": F.silu(x),
    "elu": F.elu(x, alpha=0.5),
    "leaky": F.leaky_relu(x, 0.2),
    "softplus": F.softplus(x, beta=2.0),
    "hardtanh": F.hardtanh(x, -0.5, 0.5),
    "relu6": F.relu6(x * 4),
    "linear": F.linear(x, w),
    "linear_bias": F.linear(x, w, torch.tensor([1.0, -1.0])),
    "softmin": F.softmin(x, dim=1),
    "log_sigmoid": F.logsigmoid(x),
    "tanh": torch.tanh(x),
    "sigmoid_f": F.sigmoid(x),
    "mse": F.mse_loss(x, y).item(),
    "l1": F.l1_loss(x, y, reduction="sum").item(),
    "smooth_l1": F.smooth_l1_loss(x, y, beta=0.5).item(),
    "huber": F.huber_loss(x, y, delta=0.7).item(),
    "bce": F.binary_cross_entropy(torch.sigmoid(x), (y > 0).float()).item(),
    "bce_logits": F.binary_cross_entropy_with_logits(x, (y > 0).float(), pos_weight=torch.full((4,), 2.0)).item(),
    "kl": F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1), reduction="batchmean").item(),
    "glu": F.glu(x, dim=1),
    "prelu": nn.PReLU()(x),
    "softsign": F.softsign(x),
    "tanhshrink": F.tanhshrink(x),
    "mish": F.mish(x),
    "hardswish": F.hardswish(x),
    "softmax_dtype": F.softmax(x, dim=0, dtype=torch.float64).dtype == torch.float64,
    "threshold": F.threshold(x, 0.1, 20.0),
}
