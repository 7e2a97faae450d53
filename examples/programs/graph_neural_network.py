"""Node classification with a graph convolutional network written from scratch: a random graph with
two communities, symmetric normalisation of the adjacency with self-loops, message passing with
index_add_, and training on a few labelled nodes only."""
import torch
import torch.nn.functional as F
from torch import nn


def community_graph(n_per_class=50, p_in=0.15, p_out=0.01):
    n = 2 * n_per_class
    labels = torch.arange(n) // n_per_class
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    probs = torch.where(same, torch.tensor(p_in), torch.tensor(p_out))
    upper = torch.triu(torch.rand(n, n) < probs, diagonal=1)
    src, dst = upper.nonzero(as_tuple=True)
    edges = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])  # both directions
    return edges, labels


class GCNLayer(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.linear = nn.Linear(c_in, c_out)

    def forward(self, x, edges, n):
        loops = torch.arange(n)
        src = torch.cat([edges[0], loops])
        dst = torch.cat([edges[1], loops])
        degree = torch.zeros(n).index_add_(0, dst, torch.ones(dst.shape[0]))
        norm = degree[src].rsqrt() * degree[dst].rsqrt()
        messages = self.linear(x)[src] * norm.unsqueeze(1)
        return torch.zeros(n, messages.shape[1]).index_add_(0, dst, messages)


class GCN(nn.Module):
    def __init__(self, c_in, hidden, classes):
        super().__init__()
        self.layer1 = GCNLayer(c_in, hidden)
        self.layer2 = GCNLayer(hidden, classes)

    def forward(self, x, edges):
        n = x.shape[0]
        h = F.dropout(F.relu(self.layer1(x, edges, n)), 0.3, self.training)
        return self.layer2(h, edges, n)


def main():
    torch.manual_seed(0)
    # message passing on a path 0 - 1 - 2, explicit numbers
    layer = GCNLayer(1, 1)
    with torch.no_grad():
        layer.linear.weight.fill_(1.0)
        layer.linear.bias.zero_()
    path = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    print("one round on a path:", layer(torch.tensor([[3.0], [0.0], [0.0]]), path, 3).flatten())

    edges, labels = community_graph()
    n = labels.shape[0]
    features = torch.randn(n, 8) * 2.0 + labels.unsqueeze(1).float() * 0.3  # features barely separate the classes
    train_mask = torch.zeros(n, dtype=torch.bool)
    train_mask[torch.cat([torch.arange(5), torch.arange(50, 55)])] = True
    print("labelled nodes:", int(train_mask.sum()), "edge index:", edges.dim(), "rows,", edges.dtype)

    model = GCN(8, 16, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(150):
        model.train()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(features, edges)[train_mask], labels[train_mask])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        predicted = model(features, edges).argmax(1)
    accuracy = (predicted[~train_mask] == labels[~train_mask]).float().mean().item()
    print("accuracy on unlabelled nodes above 0.85:", accuracy > 0.85)

    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.Adam(mlp.parameters(), lr=0.01)
    for epoch in range(150):
        optimizer.zero_grad()
        F.cross_entropy(mlp(features[train_mask]), labels[train_mask]).backward()
        optimizer.step()
    with torch.no_grad():
        mlp_accuracy = (mlp(features[~train_mask]).argmax(1) == labels[~train_mask]).float().mean().item()
    print("the graph helps (GCN beats an MLP by 0.1):", accuracy > mlp_accuracy + 0.1)


if __name__ == "__main__":
    main()
