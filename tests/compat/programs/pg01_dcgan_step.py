"""A DCGAN training loop in the style of the DCGAN example: a generator of ConvTranspose2d + BatchNorm2d + ReLU
with a Tanh output, a discriminator of Conv2d + LeakyReLU + BatchNorm2d with a Sigmoid output, weights_init
applied by class name, BCELoss, two Adam optimizers with betas=(0.5, 0.999), label tensors made with
torch.full and refilled with fill_, the fake batch detached for the discriminator step."""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

nz, ngf, ndf, nc = 4, 6, 6, 1
real_label, fake_label = 1.0, 0.0
rng = np.random.default_rng(7)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        w = rng.normal(0.0, 0.02, size=tuple(m.weight.shape)).astype(np.float32)
        m.weight.data.copy_(torch.from_numpy(w))
    elif classname.find("BatchNorm") != -1:
        w = rng.normal(1.0, 0.02, size=tuple(m.weight.shape)).astype(np.float32)
        m.weight.data.copy_(torch.from_numpy(w))
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),   # 1x1 -> 4x4
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),  # 4x4 -> 8x8
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),       # 8x8 -> 16x16
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),                # 16 -> 8
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),           # 8 -> 4
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),             # 4 -> 1
            nn.Sigmoid(),
        )

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


netG = Generator()
netG.apply(weights_init)
netD = Discriminator()
netD.apply(weights_init)

criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))

batch_size = 4
data = [torch.from_numpy(np.tanh(rng.normal(size=(batch_size, nc, 16, 16))).astype(np.float32)) for _ in range(3)]
noises = [torch.from_numpy(rng.normal(size=(batch_size, nz, 1, 1)).astype(np.float32)) for _ in range(3)]
fixed_noise = torch.from_numpy(rng.normal(size=(2, nz, 1, 1)).astype(np.float32))

trace = []
for i, real_cpu in enumerate(data):
    # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    b_size = real_cpu.size(0)
    label = torch.full((b_size,), real_label, dtype=real_cpu.dtype)
    output = netD(real_cpu)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()

    fake = netG(noises[i])
    label.fill_(fake_label)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()

    # (2) Update G network: maximize log(D(G(z)))
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    trace.append([errD.item(), errG.item(), D_x, D_G_z1, D_G_z2])

netG.eval()
with torch.no_grad():
    sample = netG(fixed_noise).detach()

results = {
    "trace": trace,
    "sample_shape": list(sample.shape),
    "sample_stats": [sample.mean().item(), sample.std().item(), sample.abs().max().item()],
    "bn_running_mean": netG.main[1].running_mean,
    "bn_batches": netD.main[3].num_batches_tracked.item(),
    "g_params": sum(p.numel() for p in netG.parameters()),
    "d_state_keys": sorted(netD.state_dict().keys()),
    "adam_state_steps": [float(s["step"]) for s in optimizerD.state.values()],
}
