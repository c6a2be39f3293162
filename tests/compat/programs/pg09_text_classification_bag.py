"""The text-classification tutorial's model and loop: nn.EmbeddingBag over a flat token tensor with offsets
built by a collate_fn (torch.tensor(offsets[:-1]).cumsum(dim=0)), a Linear head, DataLoader with
collate_fn and batch_size, Subset for the train/valid split, CrossEntropyLoss, SGD lr=5 with StepLR
(gamma=0.1) stepped when validation accuracy stops improving, clip_grad_norm_(0.1), accuracy counted with
(argmax(1) == label).sum().item(); then a predict() on one unseen text and EmbeddingBag modes on their own."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset

rng = np.random.default_rng(17)
VOCAB, EMSIZE, NUM_CLASS = 20, 6, 3


class TextDataset(Dataset):
    def __init__(self, n):
        self.items = []
        for _ in range(n):
            label = int(rng.integers(0, NUM_CLASS))
            length = int(rng.integers(2, 7))
            tokens = (rng.integers(0, 6, size=length) + 6 * label).tolist()
            self.items.append((label, tokens))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(_label)
        processed_text = torch.tensor(_text, dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        with torch.no_grad():
            self.embedding.weight.copy_(torch.from_numpy(
                rng.uniform(-initrange, initrange, size=(VOCAB, EMSIZE)).astype(np.float32)))
            self.fc.weight.copy_(torch.from_numpy(
                rng.uniform(-initrange, initrange, size=(NUM_CLASS, EMSIZE)).astype(np.float32)))
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


dataset = TextDataset(40)
train_split = Subset(dataset, list(range(30)))
valid_split = Subset(dataset, list(range(30, 40)))
train_dataloader = DataLoader(train_split, batch_size=8, shuffle=False, collate_fn=collate_batch)
valid_dataloader = DataLoader(valid_split, batch_size=8, shuffle=False, collate_fn=collate_batch)

model = TextClassificationModel(VOCAB, EMSIZE, NUM_CLASS)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)


def train(dataloader):
    model.train()
    total_acc, total_count, losses = 0, 0, []
    for label, text, offsets in dataloader:
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
        losses.append(loss.item())
    return total_acc / total_count, losses


def evaluate(dataloader):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for label, text, offsets in dataloader:
            predicted_label = model(text, offsets)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count


total_accu = None
history = []
for _epoch in range(1, 4):
    train_acc, losses = train(train_dataloader)
    accu_val = evaluate(valid_dataloader)
    if total_accu is not None and total_accu > accu_val:
        scheduler.step()
    else:
        total_accu = accu_val
    history.append([train_acc, accu_val, losses, scheduler.get_last_lr()[0]])


def predict(tokens):
    with torch.no_grad():
        text = torch.tensor(tokens)
        output = model(text, torch.tensor([0]))
        return output.argmax(1).item() + 1


bag_input = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
bag_offsets = torch.tensor([0, 4])
modes = {}
for mode in ("sum", "mean", "max"):
    bag = nn.EmbeddingBag.from_pretrained(model.embedding.weight.detach()[:10], mode=mode)
    modes[mode] = bag(bag_input, bag_offsets)
weighted = nn.EmbeddingBag.from_pretrained(model.embedding.weight.detach()[:10], mode="sum")(
    bag_input, bag_offsets, per_sample_weights=torch.linspace(0.5, 1.5, 8))
results = {
    "history": history,
    "predict": predict([7, 8, 9, 10]),
    "modes": modes,
    "weighted": weighted,
    "batch_shapes": [[list(t.shape) for t in b] for b in valid_dataloader],
}
