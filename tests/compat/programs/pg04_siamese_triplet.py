"""A siamese network in the style of the siamese-network example and metric-learning recipes: one shared
embedding net (Conv2d, MaxPool2d, Flatten, Linear, F.normalize) applied to anchor / positive / negative
crops, TripletMarginLoss, TripletMarginWithDistanceLoss with a cosine distance, a hand-written contrastive
loss over F.pairwise_distance, CosineEmbeddingLoss, and the example's pair head (BCEWithLogitsLoss over the
concatenated embeddings); Adam with StepLR, then verification accuracy from cdist."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR

rng = np.random.default_rng(5)


class EmbeddingNet(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
        self.fc = nn.Linear(3 * 3 * 3, dim)

    def forward(self, x):
        return F.normalize(self.fc(self.features(x)), p=2, dim=1)


class SiameseNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = EmbeddingNet()
        self.head = nn.Sequential(nn.Linear(8, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))

    def forward_once(self, x):
        return self.embed(x)

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        return self.head(output), output1, output2


def contrastive_loss(out1, out2, label, margin=1.0):
    d = F.pairwise_distance(out1, out2, keepdim=True)
    return torch.mean((1 - label) * torch.pow(d, 2) + label * torch.pow(torch.clamp(margin - d, min=0.0), 2))


model = SiameseNetwork()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape)).astype(np.float32)))

protos = rng.normal(size=(3, 1, 8, 8)).astype(np.float32)


def crops(classes):
    x = protos[classes] + 0.3 * rng.normal(size=(len(classes), 1, 8, 8)).astype(np.float32)
    return torch.from_numpy(x.astype(np.float32))


triplet = nn.TripletMarginLoss(margin=0.5, p=2)
cos_triplet = nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b),
                                               margin=0.3)
cos_embed = nn.CosineEmbeddingLoss(margin=0.1)
bce = nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = StepLR(optimizer, step_size=2, gamma=0.7)

history = []
for _epoch in range(4):
    a_cls = rng.integers(0, 3, size=6)
    n_cls = (a_cls + rng.integers(1, 3, size=6)) % 3
    anchor, positive, negative = crops(a_cls), crops(a_cls), crops(n_cls)
    same = torch.from_numpy((rng.random(6) < 0.5).astype(np.float32)).unsqueeze(1)
    other = torch.where(same.bool().view(-1, 1, 1, 1), positive, negative)
    optimizer.zero_grad()
    ea, ep, en = model.forward_once(anchor), model.forward_once(positive), model.forward_once(negative)
    logits, o1, o2 = model(anchor, other)
    loss_t = triplet(ea, ep, en)
    loss_c = cos_triplet(ea, ep, en)
    loss_pair = contrastive_loss(o1, o2, 1 - same)
    loss_cos = cos_embed(o1, o2, same.squeeze(1) * 2 - 1)
    loss_bce = bce(logits, same)
    loss = loss_t + loss_c + loss_pair + loss_cos + loss_bce
    loss.backward()
    optimizer.step()
    scheduler.step()
    history.append([loss_t.item(), loss_c.item(), loss_pair.item(), loss_cos.item(), loss_bce.item()])

model.eval()
with torch.no_grad():
    gallery = model.forward_once(torch.from_numpy(protos))
    probe_cls = np.array([0, 1, 2, 0, 1, 2])
    probes = model.forward_once(crops(probe_cls))
    dist = torch.cdist(probes, gallery)
    pred = dist.argmin(dim=1)
    functional_triplet = F.triplet_margin_loss(probes, gallery[probe_cls], gallery[(probe_cls + 1) % 3],
                                               margin=0.5, swap=True, reduction="none")

results = {
    "history": history,
    "lr": scheduler.get_last_lr(),
    "dist": dist,
    "pred": pred,
    "norms": probes.norm(dim=1),
    "functional_triplet": functional_triplet,
}
