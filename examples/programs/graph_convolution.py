"""A two-layer graph convolutional network on a made-up graph of two communities: the normalised
adjacency matrix as a sparse COO tensor, message passing with torch.sparse.mm, node ids embedded by
nn.Embedding(sparse=True) and trained with SparseAdam, the dense layers with Adam."""
import warnings

import torch
from torch import nn
from torch.nn import functional as F


def two_communities(n):
    """Two communities of n // 2 nodes: each node joined to the next two of its own, three bridges between."""
    half = n // 2
    labels = (torch.arange(n) >= half).long()
    first = torch.arange(n)
    edges = []
    for step in (1, 2):
        second = (first % half + step) % half + labels * half
        edges.append(torch.stack([first, second]))
    edges.append(torch.tensor([[0, 10, 20], [half, half + 15, n - 1]]))
    edges = torch.cat(edges, 1)
    adjacency = torch.zeros(n, n, dtype=torch.bool)
    adjacency[edges[0], edges[1]] = True
    return adjacency | adjacency.t(), labels


def normalised(adjacency):
    """D^-1/2 (A + I) D^-1/2, stored sparse."""
    n = adjacency.shape[0]
    edges = (adjacency | torch.eye(n, dtype=torch.bool)).nonzero().t()
    degree = torch.bincount(edges[0], minlength=n).float()
    weights = degree[edges[0]].rsqrt() * degree[edges[1]].rsqrt()
    return torch.sparse_coo_tensor(edges, weights, (n, n)).coalesce()


class GCN(nn.Module):
    def __init__(self, nodes, dim, hidden, classes):
        super().__init__()
        self.embed = nn.Embedding(nodes, dim, sparse=True)
        self.hidden = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, adjacency, ids):
        h = torch.sparse.mm(adjacency, self.hidden(self.embed(ids))).relu()
        return torch.sparse.mm(adjacency, self.out(h))


def main():
    warnings.simplefilter("ignore")  # torch's note that it skips the sparse invariant checks
    torch.manual_seed(0)
    adjacency, labels = two_communities(60)
    a = normalised(adjacency)
    print(a.shape, a._nnz(), a.is_coalesced(), a.layout)
    print(torch.sparse.sum(a, 1).to_dense()[:4])
    print(a.to_dense()[:3, :3])
    print(torch.sparse.mm(a, torch.arange(120.0).view(60, 2))[:3])

    ids = torch.arange(60)
    known = ids % 6 == 0
    model = GCN(60, 8, 16, 2)
    sparse_opt = torch.optim.SparseAdam(list(model.embed.parameters()), lr=0.05)
    dense_opt = torch.optim.Adam(list(model.hidden.parameters()) + list(model.out.parameters()), lr=0.02)
    for epoch in range(60):
        sparse_opt.zero_grad()
        dense_opt.zero_grad()
        loss = F.cross_entropy(model(a, ids)[known], labels[known])
        loss.backward()
        sparse_opt.step()
        dense_opt.step()
    print("loss below 0.05:", loss.item() < 0.05)
    grad = model.embed.weight.grad
    print(grad.layout, grad.is_sparse, grad._nnz(), tuple(grad.shape))
    with torch.no_grad():
        predicted = model(a, ids).argmax(1)
    print(f"accuracy on the unlabelled nodes {(predicted == labels)[~known].float().mean().item():.3f}")


if __name__ == "__main__":
    main()
