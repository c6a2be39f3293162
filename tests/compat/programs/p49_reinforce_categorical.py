"""REINFORCE in the style of the examples repository's reinforcement_learning/reinforce.py: a policy network
gives Categorical action probabilities, log_prob of the taken actions times normalised discounted returns is
the loss. The actions and rewards are fixed arrays (sampling streams differ between libraries); sampling is
checked for shape and support."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 16)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        return F.softmax(self.affine2(x), dim=1)


rng = np.random.default_rng(1)
policy = Policy()
with torch.no_grad():
    for p in policy.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.5, size=tuple(p.shape)).astype(np.float32)))
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()
gamma = 0.99
states = rng.normal(size=(3, 12, 4)).astype(np.float32)
actions = rng.integers(0, 2, size=(3, 12))
rewards = rng.uniform(0, 1, size=(3, 12))
losses, entropies = [], []
for episode in range(3):
    for t in range(12):
        state = torch.from_numpy(states[episode, t]).float().unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        action = torch.tensor([int(actions[episode, t])])
        policy.saved_log_probs.append(m.log_prob(action))
        policy.rewards.append(float(rewards[episode, t]))
        entropies.append(m.entropy().item())
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = [-log_prob * R for log_prob, R in zip(policy.saved_log_probs, returns, strict=True)]
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    losses.append(policy_loss.item())
    del policy.rewards[:]
    del policy.saved_log_probs[:]

m = Categorical(logits=torch.tensor([[0.1, 2.0, -1.0], [0.0, 0.0, 0.0]]))
s = m.sample((100,))
results = {
    "losses": losses,
    "entropy_head": entropies[:5],
    "sample_shape": list(s.shape),
    "in_support": bool(((s >= 0) & (s < 3)).all()),
    "sample_dtype_is_long": s.dtype == torch.int64,
    "log_prob": m.log_prob(torch.tensor([1, 2])).tolist(),
    "probs": m.probs.tolist(),
    "entropy": m.entropy().tolist(),
    "enumerate": m.enumerate_support().tolist(),
}
