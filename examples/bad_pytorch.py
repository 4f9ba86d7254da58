"""A small training script with the hazards flake8-detach finds (do not copy it)."""

import numpy as np
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)).to(device)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

x = torch.randn(16, 4, device=device)
y = torch.randn(16, 1, device=device)

model.eval()  # does not turn grad off
out = model(x)
predictions = out.numpy()
loss = criterion(out, y)
history = [loss.cpu().detach()]

for p in model.parameters():
    p.data.add_(-0.1 * p)

_, best = out.max(0)
print(best.cpu().numpy(), np.mean(history))

losses = [criterion(model(x), y) for _ in range(3)]
print(np.mean(losses))  # NumPy calls .numpy() on each loss for you

weights = model[0].weight.detach()
view = weights.cpu().numpy()  # shares memory with `weights` on the CPU
view[0, 0] = 0.0
print(weights)
