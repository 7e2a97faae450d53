# corpus: slow
"""The first lines of many training scripts: pick a device, set threads and flags, seed, compile the
model, build tensors with the legacy constructors, and train a little linear model."""
import math

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
print("device:", device)
print("gpus:", torch.cuda.device_count(), "mps:", torch.backends.mps.is_available())
torch.set_num_threads(1)
print("threads:", torch.get_num_threads())
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True
torch.manual_seed(0)
torch.cuda.manual_seed_all(0)

ids = torch.LongTensor([3, 1, 4, 1, 5])
weights = torch.FloatTensor([[0.5, -1.0], [2.0, 0.25]])
mask = torch.BoolTensor([True, False, True])
print(ids, ids.type(), isinstance(ids, torch.LongTensor))
print(weights.type(), weights.type(torch.DoubleTensor).dtype, torch.FloatTensor(2, 3).shape)
print(mask.type(), torch.IntTensor([7]).dtype, torch.ByteTensor([255]).dtype)
print("constants:", torch.pi == math.pi, torch.e == math.e, torch.inf > 1e308, math.isnan(torch.nan))
print("newaxis:", torch.arange(3)[:, torch.newaxis].shape)

model = nn.Sequential(nn.Linear(2, 1)).to(device)
model = torch.compile(model)
x = torch.randn(256, 2, device=device)
y = x @ torch.tensor([[2.0], [-3.0]]) + 0.5
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(200):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
if torch.cuda.is_available():
    torch.cuda.synchronize()
print("fit the line:", loss.item() < 1e-6)


@torch.jit.script
def scaled(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k


print(scaled(torch.tensor([1.0, 2.0]), 3.0))
with torch.random.fork_rng():
    torch.manual_seed(5)
    inside = torch.rand(2)
torch.manual_seed(5)
print("fork_rng leaves the seeded stream alone:", torch.equal(torch.rand(2), inside))
torch.use_deterministic_algorithms(True)
print("deterministic:", torch.are_deterministic_algorithms_enabled())
