"""A recommender on implicit feedback: each user is the weighted bag of the items they rated
(nn.EmbeddingBag with mode="sum" and per_sample_weights, in both the offsets and the padded 2-D form),
trained with a BPR loss on sampled negatives and SparseAdam for the sparse embeddings; the
item-item co-occurrence graph is a sparse COO matrix used in torch.sparse.mm to smooth the scores."""
import torch
import torch.nn.functional as F
from torch import nn

USERS, ITEMS, GROUPS = 60, 40, 4


def make_ratings(generator):
    """Users like items of their own group: each rates 5 to 8 items, mostly from that group."""
    group_of_user = torch.arange(USERS) % GROUPS
    group_of_item = torch.arange(ITEMS) % GROUPS
    rated, weights = [], []
    for user in range(USERS):
        count = int(torch.randint(5, 9, (1,), generator=generator))
        own = (group_of_item == group_of_user[user]).nonzero().squeeze(1)
        picks = own[torch.randperm(len(own), generator=generator)[:count - 1]]
        stray = torch.randint(0, ITEMS, (1,), generator=generator)
        items = torch.cat([picks, stray]).unique()
        rated.append(items)
        weights.append(torch.randint(1, 6, (len(items),), generator=generator).float() / 5)
    return rated, weights, group_of_user, group_of_item


class BagRecommender(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.user_bag = nn.EmbeddingBag(ITEMS, dim, mode="sum", sparse=True)
        self.items = nn.Embedding(ITEMS, dim, sparse=True)
        self.item_bias = nn.Embedding(ITEMS, 1, sparse=True)
        nn.init.normal_(self.user_bag.weight, std=0.1)
        nn.init.normal_(self.items.weight, std=0.1)
        nn.init.zeros_(self.item_bias.weight)

    def users(self, flat, offsets, weights):
        return self.user_bag(flat, offsets, per_sample_weights=weights)

    def score(self, users, items):
        return (users * self.items(items)).sum(-1) + self.item_bias(items).squeeze(-1)


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(2)
    rated, weights, group_of_user, group_of_item = make_ratings(generator)
    flat, flat_weights = torch.cat(rated), torch.cat(weights)
    offsets = torch.tensor([0] + [len(r) for r in rated[:-1]]).cumsum(0)
    print("ratings:", len(flat), "offsets:", offsets[:5].tolist(), offsets.dtype)

    model = BagRecommender()
    # the offsets form and the padded 2-D form (padding_idx-free: pad with a weight of zero) agree
    width = max(len(r) for r in rated)
    padded = torch.stack([F.pad(r, (0, width - len(r))) for r in rated])
    padded_weights = torch.stack([F.pad(w, (0, width - len(w))) for w in weights])
    with torch.no_grad():
        a = model.users(flat, offsets, flat_weights)
        b = model.user_bag(padded, per_sample_weights=padded_weights)
    print("user vectors:", a.shape, "both forms agree:", torch.allclose(a, b, atol=1e-6))

    optimizer = torch.optim.SparseAdam(list(model.parameters()), lr=0.02)
    running = 0.0
    for epoch in range(60):
        positive = torch.stack([r[torch.randint(0, len(r), (1,), generator=generator)] for r in rated]).squeeze(1)
        negative = torch.randint(0, ITEMS, (USERS,), generator=generator)
        vectors = model.users(flat, offsets, flat_weights)
        margin = model.score(vectors, positive) - model.score(vectors, negative)
        loss = -F.logsigmoid(margin).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
        if epoch % 20 == 19:  # a negative drawn from the user's own group is no negative: the loss stays noisy
            print(f"epochs {epoch - 18}-{epoch + 1}: mean BPR loss {running / 20:.4f}")
            running = 0.0
    grad = model.items.weight.grad
    print("sparse gradients:", grad.layout, grad.is_sparse, model.user_bag.weight.grad.layout)
    print("loss grad_fn:", type(loss.grad_fn).__name__)

    with torch.no_grad():
        vectors = model.users(flat, offsets, flat_weights)
        scores = vectors @ model.items.weight.T + model.item_bias.weight.T
    top = scores.topk(5, dim=1).indices
    hit_rate = (group_of_item[top] == group_of_user[:, None]).float().mean()
    print(f"top-5 items from the user's own group: {hit_rate.item():.4f}")

    # an item-item co-occurrence graph, row-normalised, smooths the scores over similar items
    pairs = torch.cat([torch.cartesian_prod(r, r) for r in rated])
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    graph = torch.sparse_coo_tensor(pairs.T, torch.ones(len(pairs)), (ITEMS, ITEMS), check_invariants=True).coalesce()
    degree = torch.sparse.sum(graph, dim=1).to_dense().clamp(min=1)
    print("graph:", graph.shape, graph._nnz(), "edges, max multiplicity", int(graph.values().max()))
    normalised = torch.sparse_coo_tensor(graph.indices(), graph.values() / degree[graph.indices()[0]], graph.shape,
                                         check_invariants=True)
    smoothed = 0.5 * scores + 0.5 * torch.sparse.mm(normalised, scores.T).T
    print("sparse.mm matches the dense product:",
          torch.allclose(torch.sparse.mm(normalised, scores.T), normalised.to_dense() @ scores.T, atol=1e-5))
    top = smoothed.topk(5, dim=1).indices
    print(f"after smoothing: {(group_of_item[top] == group_of_user[:, None]).float().mean().item():.4f}")
    print("row sums of the normalised graph:", torch.sparse.sum(normalised, dim=1).to_dense()[:4])


if __name__ == "__main__":
    main()
