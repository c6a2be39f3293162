"""The actor-critic example of the examples repository (reinforcement_learning/actor_critic.py): a shared
affine layer with an action head (softmax) and a value head, a SavedAction namedtuple of Categorical
log_prob and value, discounted returns normalised with np.finfo(np.float32).eps, the policy loss and a
smooth_l1_loss value loss summed with torch.stack(...).sum(), Adam; actions are chosen by a NumPy
generator from the detached probabilities (sampling streams differ between libraries), and
Categorical's entropy / sample shape / support are checked."""

from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])
gamma = 0.9
eps = np.finfo(np.float32).eps.item()
rng = np.random.default_rng(12)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 16)
        self.action_head = nn.Linear(16, 2)
        self.value_head = nn.Linear(16, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


model = Policy()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.4, size=tuple(p.shape)).astype(np.float32)))
optimizer = optim.Adam(model.parameters(), lr=3e-2)


def select_action(state, u):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    m = Categorical(probs)
    p = probs.detach().numpy()
    action = torch.tensor(int(u > p[0]))
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item(), m.entropy().item()


def finish_episode():
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []
    value_losses = []
    returns = []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns, strict=True):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


running_reward = 10
episodes = []
for i_episode in range(4):
    state = rng.normal(size=4).astype(np.float32)
    ep_reward = 0
    actions, entropies = [], []
    for _t in range(6):
        action, entropy = select_action(state, rng.random())
        state = (np.roll(state, 1) * 0.9 + (0.1 if action else -0.1)).astype(np.float32)
        reward = float(1.0 - abs(state[0]))
        model.rewards.append(reward)
        ep_reward += reward
        actions.append(action)
        entropies.append(entropy)
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    loss = finish_episode()
    episodes.append({"actions": actions, "entropies": entropies, "loss": loss, "running": running_reward,
                     "episode": i_episode})

dist = Categorical(probs=torch.tensor([[0.2, 0.8], [0.5, 0.5]]))
draws = dist.sample((5,))
logits_dist = Categorical(logits=torch.tensor([0.0, 1.0, 2.0]))
results = {
    "episodes": episodes,
    "sample_shape": list(draws.shape),
    "in_support": bool(((draws >= 0) & (draws < 2)).all()),
    "batch_shape": list(dist.batch_shape),
    "logits_probs": logits_dist.probs,
    "logits_entropy": logits_dist.entropy().item(),
    "log_prob": logits_dist.log_prob(torch.tensor([0, 2])),
}
