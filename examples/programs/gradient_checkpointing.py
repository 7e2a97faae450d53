# corpus: slow
"""Trading compute for memory with torch.utils.checkpoint: a deep residual MLP whose blocks are
recomputed in the backward pass, giving the same gradients as the plain model, plus
checkpoint_sequential over an nn.Sequential."""
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        return x + self.net(x)


class DeepMLP(nn.Module):
    def __init__(self, dim=16, depth=6, use_checkpoint=False):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, 1)
        self.use_checkpoint = use_checkpoint
        self.forward_calls = 0

    def forward(self, x):
        for block in self.blocks:
            self.forward_calls += 1
            x = checkpoint(block, x, use_reentrant=False) if self.use_checkpoint else block(x)
        return self.head(x)


def main():
    torch.manual_seed(0)
    plain = DeepMLP()
    checkpointed = DeepMLP(use_checkpoint=True)
    checkpointed.load_state_dict(plain.state_dict())
    x, y = torch.randn(64, 16), torch.randn(64, 1)

    nn.functional.mse_loss(plain(x), y).backward()
    nn.functional.mse_loss(checkpointed(x), y).backward()
    same = all(torch.allclose(a.grad, b.grad, atol=1e-6) for a, b in zip(plain.parameters(), checkpointed.parameters()))
    print("checkpointed gradients equal plain ones:", same)

    calls = []
    block = Block(16)
    block.register_forward_pre_hook(lambda module, inputs: calls.append(inputs[0].shape))
    out = checkpoint(block, torch.randn(4, 16, requires_grad=True), use_reentrant=False)
    print("block ran once in the forward pass:", len(calls) == 1)
    out.sum().backward()
    print("and again to recompute in the backward pass:", len(calls) == 2)

    seq = nn.Sequential(*[Block(16) for _ in range(4)], nn.Linear(16, 1))
    inp = torch.randn(8, 16, requires_grad=True)
    out_cp = checkpoint_sequential(seq, 2, inp, use_reentrant=False)
    grad_cp = torch.autograd.grad(out_cp.sum(), inp)[0]
    grad_plain = torch.autograd.grad(seq(inp).sum(), inp)[0]
    print("checkpoint_sequential matches:", torch.allclose(grad_cp, grad_plain, atol=1e-6), out_cp.shape)

    optimizer = torch.optim.Adam(checkpointed.parameters(), lr=3e-3)
    target = x[:, :1] * 2 - x[:, 1:2]
    first = None
    for step in range(100):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(checkpointed(x), target)
        loss.backward()
        optimizer.step()
        first = first or loss.item()
    print("loss fell tenfold with checkpointing:", loss.item() < first / 10)


if __name__ == "__main__":
    main()
