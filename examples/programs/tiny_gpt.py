# corpus: slow
"""A small GPT: token and position embeddings, pre-norm blocks with causal self-attention, weight
decay only on matrices through AdamW parameter groups, a cosine schedule with warm-up, and sampling
with temperature and top-k."""
import math

import torch
import torch.nn.functional as F
from torch import nn

TEXT = "abcdefghijklmnopqrstuvwxyz " * 12


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(context, context, dtype=torch.bool)))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        scores = scores.masked_fill(~self.mask[:t, :t], float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, dim, heads, context):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, context)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, dim=48, heads=4, layers=2, context=16):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, context, dim))
        self.blocks = nn.Sequential(*[Block(dim, heads, context) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, ids):
        x = self.tok(ids) + self.pos[:, : ids.size(1)]
        return self.head(self.ln(self.blocks(x)))

    @torch.no_grad()
    def generate(self, ids, steps, temperature=1.0, top_k=None):
        for _ in range(steps):
            logits = self(ids[:, -self.context:])[:, -1] / temperature
            if top_k is not None:
                kth = torch.topk(logits, top_k).values[:, -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            ids = torch.cat([ids, torch.multinomial(F.softmax(logits, dim=-1), 1)], dim=1)
        return ids


def main():
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    data = torch.tensor([chars.index(c) for c in TEXT])
    model = GPT(len(chars))
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith("pos")]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or n.startswith("pos")]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=3e-3, betas=(0.9, 0.95))
    print("parameter groups:", len(optimizer.param_groups), [g["weight_decay"] for g in optimizer.param_groups])
    print("every parameter in one group:", len(decay) + len(no_decay) == len(list(model.parameters())))
    steps, warmup = 120, 10
    schedule = lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (steps - warmup)))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)

    for step in range(steps):
        starts = torch.randint(0, len(data) - model.context - 1, (32,))
        x = torch.stack([data[s:s + model.context] for s in starts])
        y = torch.stack([data[s + 1:s + model.context + 1] for s in starts])
        loss = F.cross_entropy(model(x).view(-1, len(chars)), y.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
    print("learning rate decayed to near zero:", scheduler.get_last_lr()[0] < 1e-4)
    print("loss below 0.3:", loss.item() < 0.3)

    # causality: changing a later token never changes earlier predictions
    probe = data[:16].unsqueeze(0)
    changed = probe.clone()
    changed[0, 10] = (changed[0, 10] + 1) % len(chars)
    with torch.no_grad():
        same = torch.allclose(model(probe)[0, :10], model(changed)[0, :10], atol=1e-5)
    print("attention is causal:", same)

    model.eval()
    start = torch.tensor([[chars.index(c) for c in "abcd"]])
    out = model.generate(start, 20, temperature=0.5, top_k=3)
    print("generated:", out.shape)
    text = "".join(chars[i] for i in out[0].tolist())
    expected = (TEXT * 2)[:24]
    matches = sum(a == b for a, b in zip(text, expected))
    print("sample follows the alphabet (20 of 24):", matches >= 20)


if __name__ == "__main__":
    main()
