"""StackDataset and ChainDataset against torch's."""
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata


def test_stack_dataset_as_torch():
    for lib, data in ((torch, tdata), (ember, edata)):
        pairs = data.StackDataset(lib.arange(3), lib.arange(3) * 2)
        named = data.StackDataset(a=lib.arange(3), b=lib.arange(3) * 2)
        assert len(pairs) == 3 and [int(v) for v in pairs[1]] == [1, 2]
        assert [[int(v) for v in s] for s in pairs.__getitems__([0, 2])] == [[0, 0], [2, 4]]
        assert {k: int(v) for k, v in named[2].items()} == {"a": 2, "b": 4}
        batches = list(data.DataLoader(named, batch_size=2))
        assert [b["b"].tolist() for b in batches] == [[0, 2], [4]]


@pytest.mark.parametrize("args, kwargs, message", [
    ((), {}, "At least one dataset should be passed"),
    ((3, 2), {}, "Size mismatch between datasets"),
    ((3,), {"b": 3}, "but both types are given"),
])
def test_stack_dataset_errors_as_torch(args, kwargs, message):
    for lib, data in ((torch, tdata), (ember, edata)):
        with pytest.raises(ValueError, match=message):
            data.StackDataset(*[lib.arange(n) for n in args], **{k: lib.arange(n) for k, n in kwargs.items()})


def test_chain_dataset_as_torch():
    for data in (tdata, edata):
        class Stream(data.IterableDataset):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return iter(range(self.n))

            def __len__(self):
                return self.n

        chained = data.ChainDataset([Stream(2), Stream(3)])
        assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
        with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
            list(data.ChainDataset([data.TensorDataset(ember.arange(2) if data is edata else torch.arange(2))]))
    assert edata.DistributedSampler is ember.utils.data.distributed.DistributedSampler
