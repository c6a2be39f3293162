"""A small vision transformer as the ViT tutorials write it: patches made by a strided Conv2d and
flatten(2).transpose(1, 2), a class token and a learned position embedding as nn.Parameter (initialised with
nn.init.trunc_normal_ replaced by NumPy values), nn.TransformerEncoder of TransformerEncoderLayer with
batch_first=True, norm_first=True, activation="gelu", dropout 0, a LayerNorm + Linear head on the class
token; label-smoothed cross_entropy, AdamW, and a OneCycleLR-free warmup done by hand on param_groups."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(21)


class PatchEmbed(nn.Module):
    def __init__(self, img_size=8, patch_size=4, in_chans=1, embed_dim=8):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class ViT(nn.Module):
    def __init__(self, num_classes=3, embed_dim=8, depth=2, num_heads=2):
        super().__init__()
        self.patch_embed = PatchEmbed(embed_dim=embed_dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches + 1, embed_dim))
        layer = nn.TransformerEncoderLayer(embed_dim, num_heads, dim_feedforward=16, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x)
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.pos_embed
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))


model = ViT()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(np.clip(rng.normal(0, 0.2, size=tuple(p.shape)), -0.4, 0.4).astype(np.float32)))

no_decay = ["cls_token", "pos_embed", "bias", "norm"]
groups = [
    {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": 0.05},
    {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(groups, lr=1e-2)
base_lrs = [g["lr"] for g in optimizer.param_groups]
images = torch.from_numpy(rng.normal(size=(5, 6, 1, 8, 8)).astype(np.float32))
labels = torch.from_numpy(rng.integers(0, 3, size=(5, 6)))
warmup = 3
losses, lrs = [], []
model.train()
for step in range(5):
    scale = min(1.0, (step + 1) / warmup)
    for g, base in zip(optimizer.param_groups, base_lrs, strict=True):
        g["lr"] = base * scale
    logits = model(images[step])
    loss = F.cross_entropy(logits, labels[step], label_smoothing=0.1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    lrs.append([g["lr"] for g in optimizer.param_groups])

model.eval()
with torch.no_grad():
    probs = model(images[0]).softmax(-1)
results = {
    "losses": losses,
    "lrs": lrs,
    "group_sizes": [len(g["params"]) for g in groups],
    "probs": probs,
    "pred": probs.argmax(-1),
    "n_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
    "layer_names": [n for n, _ in model.encoder.layers[0].named_children()],
}
