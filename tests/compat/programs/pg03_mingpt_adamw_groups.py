"""A minGPT-style model: causal self-attention with the mask as a registered tril buffer and masked_fill
with -inf, NewGELU written out with math.sqrt(2/pi), pre-LayerNorm blocks in an nn.ModuleDict, weights
initialised through self.apply, configure_optimizers splitting parameters into decay / no-decay groups by
module type with named_modules / named_parameters, AdamW with those groups, a warmup + cosine LambdaLR,
cross_entropy with ignore_index=-1, clip_grad_norm_, and greedy generation with top-k cropping."""

import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

rng = np.random.default_rng(11)


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))
        self.n_head, self.n_embd = n_head, n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd),
                                      act=NewGELU()))
        m = self.mlp
        self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlpf(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer=2, n_head=2, n_embd=8):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                with torch.no_grad():
                    p.mul_(1.0 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            w = rng.normal(0.0, 0.2, size=tuple(module.weight.shape)).astype(np.float32)
            with torch.no_grad():
                module.weight.copy_(torch.from_numpy(w))
            if isinstance(module, nn.Linear) and module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            torch.nn.init.zeros_(module.bias)
            torch.nn.init.ones_(module.weight)

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        decay, no_decay = set(), set()
        whitelist_weight_modules = (torch.nn.Linear,)
        blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding)
        for mn, m in self.named_modules():
            for pn, _p in m.named_parameters():
                fpn = f"{mn}.{pn}" if mn else pn
                if pn.endswith("bias"):
                    no_decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, whitelist_weight_modules):
                    decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, blacklist_weight_modules):
                    no_decay.add(fpn)
        param_dict = {pn: p for pn, p in self.named_parameters()}
        inter_params = decay & no_decay
        union_params = decay | no_decay
        assert len(inter_params) == 0
        assert len(param_dict.keys() - union_params) == 0
        optim_groups = [
            {"params": [param_dict[pn] for pn in sorted(list(decay))], "weight_decay": weight_decay},
            {"params": [param_dict[pn] for pn in sorted(list(no_decay))], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas), sorted(decay), sorted(no_decay)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.block_size, f"Cannot forward sequence of length {t}"
        pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :]
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            _, idx_next = torch.topk(probs, k=1, dim=-1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


vocab, block = 7, 6
model = GPT(vocab, block)
optimizer, decay_names, no_decay_names = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
warmup, total = 2, 8


def lr_lambda(step):
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
seq = torch.from_numpy(rng.integers(0, vocab, size=(total, 3, block + 1)))
losses, lrs, norms = [], [], []
for step in range(total):
    x, y = seq[step, :, :-1], seq[step, :, 1:].clone()
    y[:, 0] = -1  # ignored positions
    logits, loss = model(x, y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)))
    optimizer.step()
    scheduler.step()
    losses.append(loss.item())
    lrs.append(scheduler.get_last_lr())

model.eval()
out = model.generate(torch.tensor([[1, 2]], dtype=torch.long), 6, top_k=3)
results = {
    "decay": decay_names,
    "no_decay": no_decay_names,
    "groups": [(len(g["params"]), g["weight_decay"]) for g in optimizer.param_groups],
    "losses": losses,
    "lrs": lrs,
    "norms": norms,
    "generated": out,
    "buffers": [name for name, _ in model.named_buffers()],
    "state_keys": len(model.state_dict()),
}
