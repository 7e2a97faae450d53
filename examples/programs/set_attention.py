# corpus: slow
"""Attention over sets with nn.MultiheadAttention: each example is a set of numbers of varying size
(padding marked by key_padding_mask), and a learnt query pools it to predict the set's maximum;
the attention weights show where the model looks."""
import torch
from torch import nn


class SetPooler(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(1, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.self_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.query = nn.Parameter(torch.randn(1, 1, dim))
        self.pool = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.out = nn.Linear(dim, 1)

    def forward(self, values, padding):
        h = self.embed(values.unsqueeze(-1))
        h = h + self.self_attn(h, h, h, key_padding_mask=padding, need_weights=False)[0]
        query = self.query.expand(values.shape[0], -1, -1)
        pooled, weights = self.pool(query, h, h, key_padding_mask=padding)
        return self.out(pooled).squeeze(-1).squeeze(-1), weights.squeeze(1)


def make_sets(n, max_size=10):
    sizes = torch.randint(2, max_size + 1, (n,))
    values = torch.rand(n, max_size) * 4 - 2
    padding = torch.arange(max_size).unsqueeze(0) >= sizes.unsqueeze(1)
    values = values.masked_fill(padding, 0.0)
    target = values.masked_fill(padding, float("-inf")).max(1).values
    return values, padding, target


def main():
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2, batch_first=True)
    q = torch.randn(3, 1, 8)
    kv = torch.randn(3, 5, 8)
    mask = torch.tensor([[False] * 5, [False, False, True, True, True], [False] * 4 + [True]])
    out, weights = attention(q, kv, kv, key_padding_mask=mask)
    print("output:", out.shape, "weights:", weights.shape)
    print("padded keys get zero weight:", bool((weights[1, 0, 2:] == 0).all()), bool((weights[2, 0, 4] == 0).all()))
    print("weights sum to one:", torch.allclose(weights.sum(-1), torch.ones(3, 1)))
    _, per_head = attention(q, kv, kv, average_attn_weights=False)
    print("per-head weights:", per_head.shape)

    model = SetPooler()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    for step in range(300):
        values, padding, target = make_sets(64)
        prediction, _ = model(values, padding)
        loss = nn.functional.mse_loss(prediction, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    model.eval()
    with torch.no_grad():
        values, padding, target = make_sets(500)
        prediction, weights = model(values, padding)
    error = (prediction - target).abs().mean().item()
    print("mean error of the maximum below 0.25:", error < 0.25)
    print("pooling never looks at padding:", bool((weights.masked_select(padding) == 0).all()))
    looks_at_max = (weights.argmax(1) == values.masked_fill(padding, float("-inf")).argmax(1)).float().mean().item()
    print("the pooling attends to the largest element more often than chance:", looks_at_max > 0.3)


if __name__ == "__main__":
    main()
