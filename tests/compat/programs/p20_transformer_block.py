"""A tiny pre-norm transformer block (LayerNorm, MultiheadAttention with a causal mask, GELU MLP, residuals)
trained on a toy next-token task with AdamW and CosineAnnealingLR; dropout off for determinism."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def fill_(model, seed, scale=0.2):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=11, d=16, heads=2, length=8):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(length, d))
        self.block = Block(d, heads)
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, vocab)

    def forward(self, idx):
        length = idx.shape[1]
        mask = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
        x = self.tok(idx) + self.pos[:length]
        return self.out(self.norm(self.block(x, mask)))


rng = np.random.default_rng(20)
start = rng.integers(0, 11, size=(16, 1))
seqs = (start + np.arange(9)) % 11                      # counting sequences: the next token is +1
data = torch.tensor(seqs)
inputs, targets = data[:, :-1], data[:, 1:]
model = TinyLM()
fill_(model, 200)
opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=15)
losses = []
for _step in range(15):
    opt.zero_grad()
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, 11), targets.reshape(-1))
    loss.backward()
    opt.step()
    sched.step()
    losses.append(loss.item())
model.eval()
with torch.no_grad():
    acc = (model(inputs).argmax(-1) == targets).float().mean().item()
results = {"losses": losses[::3], "final": losses[-1], "accuracy": acc, "lr": sched.get_last_lr(),
           "n_params": sum(p.numel() for p in model.parameters())}
