"""A recommender by matrix factorisation: user and item embeddings with biases, trained on the
observed entries of a low-rank rating matrix with Adam and weight decay, evaluated
on held-out entries, and used to rank items with topk."""
import torch
from torch import nn


class Factorization(nn.Module):
    def __init__(self, users, items, rank):
        super().__init__()
        self.user = nn.Embedding(users, rank)
        self.item = nn.Embedding(items, rank)
        self.user_bias = nn.Embedding(users, 1)
        self.item_bias = nn.Embedding(items, 1)
        for table in (self.user, self.item):
            nn.init.normal_(table.weight, std=0.1)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)

    def forward(self, users, items):
        dot = (self.user(users) * self.item(items)).sum(-1)
        return dot + self.user_bias(users).squeeze(-1) + self.item_bias(items).squeeze(-1)


def main():
    torch.manual_seed(0)
    users, items, rank = 60, 40, 3
    truth = torch.randn(users, rank) @ torch.randn(rank, items) + torch.randn(items) * 0.5
    observed = torch.rand(users, items) < 0.5
    u_idx, i_idx = observed.nonzero(as_tuple=True)
    held_u, held_i = (~observed).nonzero(as_tuple=True)
    ratings = truth[u_idx, i_idx] + 0.05 * torch.randn(len(u_idx))
    print("observed entries:", len(u_idx) + len(held_u) == users * items)

    model = Factorization(users, items, rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03, weight_decay=1e-5)
    for epoch in range(60):
        for batch in torch.randperm(len(u_idx)).split(256):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(u_idx[batch], i_idx[batch]), ratings[batch])
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        train_rmse = (model(u_idx, i_idx) - ratings).pow(2).mean().sqrt().item()
        held_rmse = (model(held_u, held_i) - truth[held_u, held_i]).pow(2).mean().sqrt().item()
        baseline = (truth[held_u, held_i] - ratings.mean()).pow(2).mean().sqrt().item()
    print("training RMSE below 0.3:", train_rmse < 0.3)
    print("held-out RMSE under a third of the mean predictor's:", held_rmse < baseline / 3)

    with torch.no_grad():
        scores = model(torch.zeros(items, dtype=torch.long), torch.arange(items))
        scores[observed[0]] = float("-inf")  # recommend only what user 0 has not rated
        top = scores.topk(5)
    print("top-5:", top.values.shape, top.indices.dtype)
    true_scores = truth[0].masked_fill(observed[0], float("-inf"))
    best_true = set(true_scores.topk(10).indices.tolist())
    print("most of the top-5 among the true top-10:", len(best_true & set(top.indices.tolist())) >= 3)


if __name__ == "__main__":
    main()
