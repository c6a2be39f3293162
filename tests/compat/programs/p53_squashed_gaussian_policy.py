"""A SAC-style squashed Gaussian policy and an actor-critic update: Normal through TanhTransform(cache_size=1)
inside a TransformedDistribution, log_prob of given actions with its tanh correction, Independent over action
dimensions, kl_divergence between policies, and a critic trained with smooth_l1_loss. Sampled actions are
checked for shape, range and gradient; the reported numbers use fixed actions."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Independent, Normal, TransformedDistribution, kl_divergence
from torch.distributions.transforms import TanhTransform

rng = np.random.default_rng(7)


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 16), nn.Tanh())
        self.mu = nn.Linear(16, 2)
        self.log_std = nn.Linear(16, 2)

    def forward(self, obs):
        h = self.body(obs)
        log_std = self.log_std(h).clamp(-5, 2)
        base = Normal(self.mu(h), log_std.exp())
        return Independent(TransformedDistribution(base, [TanhTransform(cache_size=1)]), 1), base


actor = Actor()
critic = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
for net in (actor, critic):
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape)).astype(np.float32)))
obs = torch.from_numpy(rng.normal(size=(6, 3)).astype(np.float32))
actions = torch.from_numpy(rng.uniform(-0.9, 0.9, size=(6, 2)).astype(np.float32))
targets = torch.from_numpy(rng.normal(size=(6, 1)).astype(np.float32))
actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=3e-3)
actor_losses, critic_losses = [], []
for _step in range(4):
    q = critic(torch.cat([obs, actions], -1))
    critic_loss = F.smooth_l1_loss(q, targets)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    critic_losses.append(critic_loss.item())
    pi, base = actor(obs)
    logp = pi.log_prob(actions)
    advantage = (targets - critic(torch.cat([obs, actions], -1))).detach().squeeze(-1)
    actor_loss = -(logp * advantage).mean() - 0.01 * base.entropy().sum(-1).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    actor_losses.append(actor_loss.item())

pi, base = actor(obs)
sampled = pi.rsample()
sampled.sum().backward()
other = Normal(torch.zeros(2), torch.ones(2))
results = {
    "actor_losses": actor_losses,
    "critic_losses": critic_losses,
    "log_prob": pi.log_prob(actions).tolist(),
    "shapes": [list(pi.batch_shape), list(pi.event_shape), list(sampled.shape)],
    "in_range": bool((sampled.abs() < 1).all()),
    "roundtrip_log_prob_finite": bool(torch.isfinite(pi.log_prob(sampled)).all()),
    "mu_grad_finite": bool(torch.isfinite(actor.mu.weight.grad).all()),
    "kl": kl_divergence(Independent(base, 1), Independent(other.expand(base.batch_shape), 1)).tolist(),
}
