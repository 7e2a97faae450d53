"""Learning an embedding with a triplet margin loss and cosine similarity: points on noisy circles
embedded so that same-class points lie together, with hard-negative mining inside the batch and
F.normalize onto the unit sphere."""
import torch
import torch.nn.functional as F
from torch import nn


def make_data(n, classes=4):
    labels = torch.randint(0, classes, (n,))
    angle = torch.rand(n) * 6.2832
    radius = 1.0 + labels.float()
    points = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], 1)
    return points + 0.1 * torch.randn(n, 2), labels


def main():
    torch.manual_seed(0)
    anchor = torch.tensor([[1.0, 0.0]])
    positive = torch.tensor([[0.9, 0.1]])
    negative = torch.tensor([[0.0, 1.0]])
    print("triplet loss:", F.triplet_margin_loss(anchor, positive, negative, margin=1.0))
    print("cosine similarity:", F.cosine_similarity(anchor, positive))
    print("pairwise distance:", F.pairwise_distance(anchor, negative))

    encoder = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8))
    optimizer = torch.optim.Adam(encoder.parameters(), lr=3e-3)
    loss_fn = nn.TripletMarginLoss(margin=0.5)
    for step in range(200):
        x, labels = make_data(128)
        z = F.normalize(encoder(x), dim=1)
        distances = torch.cdist(z, z)
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        hardest_positive = distances.masked_fill(~same, -1.0).argmax(1)
        hardest_negative = distances.masked_fill(same, 10.0).argmin(1)
        loss = loss_fn(z, z[hardest_positive], z[hardest_negative])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    with torch.no_grad():
        x, labels = make_data(400)
        z = F.normalize(encoder(x), dim=1)
        print("embeddings on the unit sphere:", torch.allclose(z.norm(dim=1), torch.ones(400), atol=1e-5))
        similarity = z @ z.t()
        similarity.fill_diagonal_(-2.0)
        nearest = similarity.argmax(1)
        agreement = (labels[nearest] == labels).float().mean().item()
    print("nearest neighbour shares the class (over 0.9):", agreement > 0.9)


if __name__ == "__main__":
    main()
