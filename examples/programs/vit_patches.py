"""A small vision transformer on scikit-learn's 8x8 digits: patches cut with unfold and embedded by a
linear layer, a learned class token and positional embeddings, nn.TransformerEncoder (pre-norm, GELU),
AdamW with no weight decay on biases, norms and embeddings, a linear warmup then cosine decay chained
with SequentialLR, label smoothing, gradient clipping, and top-k accuracy in eval mode."""
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


class PatchEmbedding(nn.Module):
    def __init__(self, patch=4, channels=1, dim=32):
        super().__init__()
        self.patch = patch
        self.project = nn.Linear(channels * patch * patch, dim)

    def forward(self, images):
        patches = F.unfold(images, kernel_size=self.patch, stride=self.patch)  # (B, C*p*p, L)
        return self.project(patches.transpose(1, 2))


class ViT(nn.Module):
    def __init__(self, classes=10, dim=32, depth=2, heads=4, image=8, patch=4):
        super().__init__()
        self.patches = PatchEmbedding(patch, 1, dim)
        count = (image // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.position = nn.Parameter(torch.randn(1, count + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=64, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, norm=nn.LayerNorm(dim), enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, images):
        tokens = self.patches(images)
        cls = self.cls_token.expand(tokens.shape[0], -1, -1)
        tokens = torch.cat([cls, tokens], dim=1) + self.position
        return self.head(self.encoder(tokens)[:, 0])


def parameter_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if parameter.ndim < 2 or name in ("cls_token", "position") or "norm" in name:
            no_decay.append(parameter)
        else:
            decay.append(parameter)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def topk_accuracy(logits, labels, ks=(1, 3)):
    top = logits.topk(max(ks), dim=1).indices
    hits = top == labels[:, None]
    return [hits[:, :k].any(dim=1).float().mean().item() for k in ks]


def main():
    torch.manual_seed(0)
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target)
    dataset = TensorDataset(images, labels)
    train_set, test_set = random_split(dataset, [0.8, 0.2], generator=torch.Generator().manual_seed(42))
    print("split:", len(train_set), len(test_set), type(train_set).__name__)

    patches = F.unfold(torch.arange(16.0).view(1, 1, 4, 4), kernel_size=2, stride=2)
    print("unfold:", patches.shape)
    print(patches)
    print("fold back:", torch.equal(F.fold(patches, (4, 4), kernel_size=2, stride=2),
                                    torch.arange(16.0).view(1, 1, 4, 4)))

    model = ViT()
    groups = parameter_groups(model, 0.05)
    print(model.encoder.layers[0])
    print(model.patches)
    print("groups:", [len(g["params"]) for g in groups], sum(p.numel() for p in model.parameters()))
    optimizer = torch.optim.AdamW(groups, lr=2e-3)
    print(optimizer)
    print("defaults:", optimizer.defaults["betas"], optimizer.defaults["eps"], optimizer.defaults["weight_decay"])
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=10)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=20, eta_min=1e-5)
    scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[10])
    loader = DataLoader(train_set, batch_size=128, shuffle=True, drop_last=True)
    print("batches per epoch:", len(loader))

    lrs, norms, losses = [], [], []
    for epoch in range(2):
        model.train()
        total = 0.0
        for batch_images, batch_labels in loader:
            loss = F.cross_entropy(model(batch_images), batch_labels, label_smoothing=0.1)
            optimizer.zero_grad()
            loss.backward()
            norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0).item())
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr()[0])
            total += loss.item()
        losses.append(total / len(loader))
    print("lrs:", [f"{lr:.6f}" for lr in lrs[:3]], f"{lrs[9]:.6f}", f"{lrs[10]:.6f}", f"{lrs[-1]:.6f}")
    print("group lrs equal:", optimizer.param_groups[0]["lr"] == optimizer.param_groups[1]["lr"])
    print("grad norms finite and positive:", all(n > 0 for n in norms))
    print("loss fell:", losses[-1] < losses[0])

    model.eval()
    test_images = torch.stack([test_set[i][0] for i in range(len(test_set))])
    test_labels = torch.tensor([int(test_set[i][1]) for i in range(len(test_set))])
    with torch.inference_mode():
        logits = model(test_images)
        again = model(test_images)
    print("eval is deterministic:", torch.equal(logits, again), logits.is_inference())
    top1, top3 = topk_accuracy(logits, test_labels)
    print("top-1 above 0.25:", top1 > 0.25, "top-3 above 0.6:", top3 > 0.6, "top-3 >= top-1:", top3 >= top1)
    print("topk on explicit logits:", torch.tensor([[0.1, 2.0, -1.0, 0.5]]).topk(2))
    state = model.state_dict()
    print("state keys:", len(state), list(state)[:4])
    print("layer 0 keys:", [k for k in state if k.startswith("encoder.layers.0.self_attn")])


if __name__ == "__main__":
    main()
