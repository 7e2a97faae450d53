"""ember.utils.data against torch.utils.data: datasets, samplers, collation and the DataLoader."""
import collections

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import assert_same, both, both_raise, to_numpy


def _pairs(lib, n=10):
    return lib.utils.data.TensorDataset(lib.arange(float(n)), lib.arange(n))


def _dicts(value):
    """Dicts as sorted (key, value) lists, so that twins can compare them."""
    if isinstance(value, dict):
        return [(k, _dicts(v)) for k, v in sorted(value.items())]
    if isinstance(value, (tuple, list)):
        return [_dicts(v) for v in value]  # as a list: twins compare the items (the container's type is checked apart)
    return to_numpy(value)


# ---- datasets

def test_tensor_dataset_rows_and_length():
    both(lambda lib: (_pairs(lib)[3], len(_pairs(lib)), _pairs(lib)[2:4]))


def test_tensor_dataset_refuses_tensors_with_different_row_counts():
    both_raise(lambda lib: lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4)), AssertionError,
               "Size mismatch between tensors")


def test_concat_dataset_indexes_across_parts_and_from_the_end():
    def program(lib):
        data = _pairs(lib, 3) + _pairs(lib, 4)
        return len(data), data.cumulative_sizes, [data[i] for i in (0, 2, 3, 6, -1, -7)]

    both(program)


def test_concat_dataset_refuses_an_index_before_its_start_and_no_datasets():
    both_raise(lambda lib: (_pairs(lib, 2) + _pairs(lib, 2))[-5], ValueError, "length")
    both_raise(lambda lib: lib.utils.data.ConcatDataset([]), AssertionError, "should not be an empty iterable")


def test_subset_reads_its_indices_in_order():
    both(lambda lib: [s for s in lib.utils.data.Subset(_pairs(lib), [5, 1, 5])])


@pytest.mark.filterwarnings("ignore:.*has length 0")  # as torch: [1, 0] reads as fractions, and warns
@given(n=st.integers(0, 30), cut=st.integers(0, 30))
def test_random_split_of_counts_is_a_partition(n, cut):
    cut = min(cut, n)
    parts = ember.utils.data.random_split(range(n), [cut, n - cut])
    assert [len(p) for p in parts] == [cut, n - cut]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(n))


@pytest.mark.filterwarnings("ignore:.*(Length of split|has length 0)")
@pytest.mark.parametrize("fractions", [[0.5, 0.5], [0.33, 0.33, 0.34], [0.1, 0.9], [1.0], [0.25, 0.25, 0.25, 0.25]])
@pytest.mark.parametrize("n", [0, 1, 7, 10, 11])
def test_random_split_of_fractions_gives_torchs_lengths(fractions, n):
    both(lambda lib: [len(p) for p in lib.utils.data.random_split(range(n), fractions)])


def test_random_split_warns_of_an_empty_split_from_fractions():
    with pytest.warns(UserWarning, match="index 1 has length 0"):
        ember.utils.data.random_split(range(1), [0.5, 0.5])


def test_random_split_refuses_lengths_that_do_not_add_up():
    both_raise(lambda lib: lib.utils.data.random_split(range(10), [3, 3]), ValueError, "")


def test_random_split_is_reproducible_with_a_generator():
    def split(seed):
        return [p.indices for p in ember.utils.data.random_split(range(9), [4, 5],
                                                                 generator=ember.Generator().manual_seed(seed))]

    assert split(3) == split(3)
    assert split(3) != split(4)


def test_a_dataset_without_getitem_or_iter_says_what_to_define():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        ember.utils.data.Dataset()[0]
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(ember.utils.data.IterableDataset())


# ---- samplers

@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n, size", [(10, 3), (9, 3), (0, 2), (2, 5)])
def test_batch_sampler_groups_and_counts_as_torch(n, size, drop_last):
    both(lambda lib: (list(lib.utils.data.BatchSampler(range(n), size, drop_last)),
                      len(lib.utils.data.BatchSampler(range(n), size, drop_last))))


@pytest.mark.parametrize("size", [0, -1, 2.0, True])
def test_batch_sampler_refuses_a_batch_size_that_is_not_a_positive_int(size):
    both_raise(lambda lib: lib.utils.data.BatchSampler(range(3), size, False), ValueError,
               "batch_size should be a positive integer value")


def test_random_sampler_draws_a_permutation_each_pass_reproducibly():
    sampler = ember.utils.data.RandomSampler(range(20))
    ember.manual_seed(1)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    ember.manual_seed(1)
    assert list(sampler) == first


def test_random_sampler_with_more_samples_than_data_repeats_whole_permutations():
    drawn = list(ember.utils.data.RandomSampler(range(4), num_samples=10))
    assert sorted(drawn[:4]) == sorted(drawn[4:8]) == [0, 1, 2, 3] and len(drawn) == 10


def test_random_sampler_with_replacement_stays_in_range():
    drawn = list(ember.utils.data.RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}


def test_random_sampler_errors_as_torch():
    both_raise(lambda lib: lib.utils.data.RandomSampler(range(3), num_samples=0), ValueError,
               "num_samples should be a positive integer value")
    both_raise(lambda lib: lib.utils.data.RandomSampler(range(3), replacement=1), TypeError,
               "replacement should be a boolean value")


def test_subset_random_sampler_gives_each_index_once():
    assert sorted(ember.utils.data.SubsetRandomSampler([7, 3, 9])) == [3, 7, 9]


def test_weighted_random_sampler_never_draws_a_zero_weight():
    drawn = list(ember.utils.data.WeightedRandomSampler([0.0, 1.0, 3.0], 200))
    assert len(drawn) == 200 and 0 not in drawn and drawn.count(2) > drawn.count(1)


@pytest.mark.parametrize("weights, count, replacement", [
    ([-1.0, 1.0], 1, True), ([0.0, 0.0], 1, True), ([float("nan"), 1.0], 1, True), ([float("inf"), 1.0], 1, False),
    ([0.0, 1.0, 0.0], 5, False),
], ids=str)
def test_weighted_random_sampler_raises_torchs_error_when_read(weights, count, replacement):
    messages = []
    for lib in (torch, ember):
        sampler = lib.utils.data.WeightedRandomSampler(weights, count, replacement=replacement)  # (no error yet)
        with pytest.raises(RuntimeError) as error:
            list(sampler)
        messages.append(str(error.value))
    assert messages[1] == messages[0]


def test_weighted_random_sampler_without_replacement_ends_with_the_weightless_indices_as_torch():
    for lib in (torch, ember):
        drawn = list(lib.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0, 0.0, 2.0, 0.0], 6, replacement=False))
        assert sorted(drawn[:2]) == [1, 4] and sorted(drawn[2:]) == [0, 2, 3, 5]


def test_weighted_random_sampler_without_replacement_draws_each_index_once():
    drawn = list(ember.utils.data.WeightedRandomSampler(ember.tensor([1.0, 2.0, 3.0]), 3, replacement=False))
    assert sorted(drawn) == [0, 1, 2]


# ---- collation

Point = collections.namedtuple("Point", "x y")

COLLATED = {
    "tensors": lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    "0-d tensors": lambda lib: [lib.tensor(1), lib.tensor(2)],
    "ints": lambda lib: [1, 2, 3],
    "bools": lambda lib: [True, False],
    "floats": lambda lib: [1.5, 2.0],
    "ints then a float": lambda lib: [1, 2.5],
    "numpy arrays": lambda lib: [np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)],
    "numpy scalars": lambda lib: [np.float64(1.0), np.float64(2.0)],
    "numpy int32 scalars": lambda lib: [np.int32(1), np.int32(2)],
    "strings": lambda lib: ["a", "b"],
    "tuples": lambda lib: [(1, 2.0, "a"), (3, 4.0, "b")],
    "lists": lambda lib: [[1, 2], [3, 4]],
    "namedtuples": lambda lib: [Point(1, 2.0), Point(3, 4.0)],
    "dicts": lambda lib: [{"x": lib.ones(2), "y": 1}, {"x": lib.zeros(2), "y": 2}],
    "nested": lambda lib: [({"a": [1, 2]}, lib.ones(1)), ({"a": [3, 4]}, lib.zeros(1))],
}


@pytest.mark.parametrize("name", COLLATED)
def test_default_collate_as_torch(name):
    def program(lib):
        batch = lib.utils.data.default_collate(COLLATED[name](lib))
        return type(batch).__name__, _dicts(batch)

    both(program)


def test_default_collate_keeps_a_namedtuple_type():
    assert type(ember.utils.data.default_collate([Point(1, 2), Point(3, 4)])) is Point


@pytest.mark.parametrize("batch", [[[1, 2], [3]], [object(), object()], [1j, 2j],
                                   [np.array(["a"]), np.array(["b"])]])
def test_default_collate_errors_as_torch(batch):
    error = RuntimeError if isinstance(batch[0], list) else TypeError
    both_raise(lambda lib: lib.utils.data.default_collate(batch), error, "")


def test_default_convert_turns_numpy_into_tensors_inside_containers():
    both(lambda lib: _dicts(lib.utils.data.default_convert(
        {"a": np.arange(3), "b": (np.float32(2.0), "s"), "c": [np.zeros(2)]})))


# ---- the DataLoader

@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (4, True), (10, False),
                                                   (20, True)])
def test_loader_batches_in_order_as_torch(batch_size, drop_last):
    def program(lib):
        loader = lib.utils.data.DataLoader(_pairs(lib), batch_size=batch_size, drop_last=drop_last)
        return len(loader), list(loader)

    both(program)


def test_loader_without_batching_yields_samples_converted():
    both(lambda lib: list(lib.utils.data.DataLoader(_pairs(lib, 3), batch_size=None)))
    both(lambda lib: list(lib.utils.data.DataLoader([np.ones(2), np.zeros(2)], batch_size=None)))


def test_loader_with_a_batch_sampler_or_a_sampler():
    def program(lib):
        data = _pairs(lib, 6)
        by_batches = lib.utils.data.DataLoader(data, batch_sampler=[[0, 5], [2]])
        by_sampler = lib.utils.data.DataLoader(data, sampler=[4, 1, 3], batch_size=2)
        return list(by_batches), list(by_sampler), len(by_sampler)

    both(program)


def test_loader_with_a_collate_fn_and_a_plain_list_dataset():
    both(lambda lib: list(lib.utils.data.DataLoader(list(range(5)), batch_size=2, collate_fn=lambda b: sum(b))))


def test_loader_shuffles_a_new_order_each_pass_reproducibly():
    loader = ember.utils.data.DataLoader(_pairs(ember, 12), batch_size=5, shuffle=True)
    ember.manual_seed(0)
    first = [b[1].tolist() for b in loader]
    second = [b[1].tolist() for b in loader]
    assert [len(b) for b in first] == [5, 5, 2]
    assert sorted(sum(first, [])) == list(range(12)) and first != second
    ember.manual_seed(0)
    assert [b[1].tolist() for b in loader] == first


def test_loader_shuffle_takes_its_own_generator():
    def order(seed):
        loader = ember.utils.data.DataLoader(range(8), batch_size=8, shuffle=True,
                                             generator=ember.Generator().manual_seed(seed))
        return next(iter(loader)).tolist()

    assert order(5) == order(5) != order(6)


class _Stream:
    """An IterableDataset of 0..n-1, built on either library."""

    @staticmethod
    def of(lib, n=5, with_len=False):
        class Stream(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(n))

        if with_len:
            Stream.__len__ = lambda self: n
        return Stream()


@pytest.mark.parametrize("batch_size, drop_last", [(None, False), (1, False), (2, False), (2, True), (5, True)])
def test_loader_reads_a_stream_in_its_order(batch_size, drop_last):
    def program(lib):
        loader = lib.utils.data.DataLoader(_Stream.of(lib, with_len=True), batch_size=batch_size,
                                           drop_last=drop_last)
        return list(loader), len(loader)

    both(program)


def test_loader_of_a_stream_without_len_has_no_len():
    both_raise(lambda lib: len(lib.utils.data.DataLoader(_Stream.of(lib), batch_size=2)), TypeError, "len")


@pytest.mark.parametrize("options, fragment", [
    ({"shuffle": True}, "expected unspecified shuffle option"),
    ({"sampler": [0, 1]}, "expected unspecified sampler option"),
    ({"batch_sampler": [[0]]}, "expected unspecified batch_sampler option"),
])
def test_loader_of_a_stream_refuses_an_order(options, fragment):
    both_raise(lambda lib: lib.utils.data.DataLoader(_Stream.of(lib), **options), ValueError, fragment)


@pytest.mark.parametrize("options, fragment", [
    ({"shuffle": True, "sampler": [0]}, "sampler option is mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 3}, "batch_sampler option is mutually exclusive"),
    ({"batch_sampler": [[0]], "drop_last": True}, "batch_sampler option is mutually exclusive"),
    ({"batch_size": None, "drop_last": True}, "mutually exclusive with drop_last"),
    ({"batch_size": 0}, "batch_size should be a positive integer value"),
    ({"num_workers": -1}, "num_workers option should be non-negative"),
    ({"timeout": -1}, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, "prefetch_factor option could only be specified in multiprocessing"),
    ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
])
def test_loader_option_errors_as_torch(options, fragment):
    both_raise(lambda lib: lib.utils.data.DataLoader(_pairs(lib), **options), ValueError, fragment)


def test_loader_defaults_as_torch():
    def program(lib):
        loader = lib.utils.data.DataLoader(_pairs(lib))
        return (loader.batch_size, loader.drop_last, loader.num_workers, type(loader.sampler).__name__,
                type(loader.batch_sampler).__name__, loader.collate_fn.__name__)

    both(program)


# ---- worker processes
# The twin cases run torch's workers only where its pass runs to the end: an iterator of torch's that is
# dropped early (or kept by persistent workers) shuts its workers down from a garbage collection that may
# come in any later test, and may take 10 s there. Those cases compare with torch's output, written out.

class _Faulty:
    """A dataset of 0..n-1 whose item ``bad`` raises a KeyError, built on either library."""

    @staticmethod
    def of(lib, n=7, bad=5):
        class Faulty(lib.utils.data.Dataset):
            def __len__(self):
                return n

            def __getitem__(self, i):
                if i == bad:
                    raise KeyError(f"no item {i}")
                return i

        return Faulty()


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (None, False)])
def test_workers_give_the_batches_in_order_as_torch(batch_size, drop_last):
    def program(lib):
        loader = lib.utils.data.DataLoader(_pairs(lib), batch_size=batch_size, drop_last=drop_last, num_workers=2)
        return len(loader), list(loader)

    both(program)
    loader = ember.utils.data.DataLoader(_pairs(ember), batch_size=batch_size, drop_last=drop_last, num_workers=2)
    assert len(iter(loader)) == len(loader)


def test_workers_shuffle_as_the_main_process_does():
    data = _pairs(ember, 12)
    orders = []
    for workers in (0, 2):
        ember.manual_seed(3)
        orders.append([b[1].tolist() for b in ember.utils.data.DataLoader(data, batch_size=5, shuffle=True,
                                                                          num_workers=workers)])
    assert orders[0] == orders[1]


def test_each_worker_knows_itself_and_the_main_process_is_no_worker():
    def program(lib):
        class Who(lib.utils.data.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                info = lib.utils.data.get_worker_info()
                return info.id, info.num_workers, info.dataset is self

        return list(lib.utils.data.DataLoader(Who(), batch_size=None, num_workers=2)), \
            lib.utils.data.get_worker_info()

    both(program)


def test_worker_init_fn_runs_in_each_worker_before_it_loads():
    def program(lib):
        class Stamped(lib.utils.data.Dataset):
            stamp = None

            def __len__(self):
                return 4

            def __getitem__(self, i):
                return Stamped.stamp

        def init(worker_id):
            Stamped.stamp = worker_id * 10

        return list(lib.utils.data.DataLoader(Stamped(), batch_size=None, num_workers=2, worker_init_fn=init))

    both(program)


def test_workers_are_seeded_apart_and_reproducibly():
    class Draw(ember.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return ember.rand(()).item()

    def draws():
        ember.manual_seed(5)
        return list(ember.utils.data.DataLoader(Draw(), batch_size=None, num_workers=2))

    first = draws()
    assert first == draws()
    assert first[0] != first[1]  # workers 0 and 1 have different seeds


@pytest.mark.parametrize("batch_size", [None, 2, 3])
def test_a_stream_read_by_workers_comes_round_robin_as_torch(batch_size):
    def program(lib):
        class Shards(lib.utils.data.IterableDataset):
            def __iter__(self):
                info = lib.utils.data.get_worker_info()
                return iter(range(info.id, 11, info.num_workers))

        return list(lib.utils.data.DataLoader(Shards(), batch_size=batch_size, num_workers=2))

    both(program)


def test_an_endless_stream_read_by_workers_stops_when_the_reader_does():
    import itertools

    class Endless(ember.utils.data.IterableDataset):
        def __iter__(self):
            return itertools.count()

    batches = itertools.islice(ember.utils.data.DataLoader(Endless(), batch_size=2, num_workers=2), 5)
    assert [b.tolist() for b in batches] == [[0, 1], [0, 1], [2, 3], [2, 3], [4, 5]]  # torch's: each worker a copy


def test_an_error_in_a_worker_is_raised_in_the_main_process_with_its_traceback():
    with pytest.raises(KeyError) as info:  # torch's words: "Caught KeyError in DataLoader worker process 0."
        list(ember.utils.data.DataLoader(_Faulty.of(ember), batch_size=2, num_workers=2))
    message = str(info.value)
    assert message.startswith("Caught KeyError in DataLoader worker process 0.\nOriginal Traceback")
    assert "__getitem__" in message and "no item 5" in message


def test_a_slow_worker_times_out_with_torchs_message():
    # ember alone: torch's own shutdown after a timeout sometimes waits 10 s for its worker
    class Slow(ember.utils.data.Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            import time
            time.sleep(0.6)  # longer than the timeout; short, as the worker is joined after the error
            return i

    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.2 seconds"):
        list(ember.utils.data.DataLoader(Slow(), num_workers=1, timeout=0.2))


@pytest.mark.parametrize("options, error, fragment", [
    ({"num_workers": 2, "prefetch_factor": -1}, ValueError, "prefetch_factor option should be non-negative"),
    ({"num_workers": 2, "timeout": -1}, ValueError, "timeout option should be non-negative"),
])
def test_worker_option_errors_as_torch(options, error, fragment):
    both_raise(lambda lib: lib.utils.data.DataLoader(_pairs(lib), **options), error, fragment)


def test_worker_option_defaults_as_torch():
    both(lambda lib: [(loader.prefetch_factor, loader.multiprocessing_context) for loader in (
        lib.utils.data.DataLoader(_pairs(lib)), lib.utils.data.DataLoader(_pairs(lib), num_workers=2))])


def test_persistent_workers_serve_every_pass_and_drop_what_an_abandoned_pass_left():
    loader = ember.utils.data.DataLoader(_pairs(ember, 7), batch_size=2, num_workers=2, persistent_workers=True)
    expected = [[b.tolist() for b in batch] for batch in ember.utils.data.DataLoader(_pairs(ember, 7), batch_size=2)]
    first = iter(loader)
    assert [b.tolist() for b in next(first)] == expected[0]  # a pass abandoned early: its prefetched batches
    second = iter(loader)  # must not leak into the next
    assert second is first  # as torch: the one iterator, started again
    for _ in range(2):
        assert [[b.tolist() for b in batch] for batch in loader] == expected


def test_persistent_workers_start_a_stream_again_each_pass():
    class Shards(ember.utils.data.IterableDataset):
        def __iter__(self):
            info = ember.utils.data.get_worker_info()
            return iter(range(info.id, 7, info.num_workers))

    loader = ember.utils.data.DataLoader(Shards(), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in range(2):
        assert [b.tolist() for b in loader] == [[0, 2], [1, 3], [4, 6], [5]]  # torch's, round robin


def test_a_training_loop_over_a_loader_learns_a_line():
    ember.manual_seed(0)
    x = ember.linspace(-1, 1, 64).unsqueeze(1)
    data = ember.utils.data.TensorDataset(x, 3 * x - 1)
    model = ember.nn.Linear(1, 1)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(30):
        for inputs, targets in ember.utils.data.DataLoader(data, batch_size=16, shuffle=True):
            optimizer.zero_grad()
            ember.nn.functional.mse_loss(model(inputs), targets).backward()
            optimizer.step()
    assert abs(model.weight.item() - 3) < 0.05 and abs(model.bias.item() + 1) < 0.05


def test_randperm_as_torch():
    both(lambda lib: (sorted(lib.randperm(6).tolist()), lib.randperm(0), lib.randperm(4).dtype == lib.int64,
                      lib.randperm(3, dtype=lib.float64).dtype == lib.float64,
                      lib.randperm(3, dtype=lib.float32, requires_grad=True).requires_grad))
    both_raise(lambda lib: lib.randperm(-1), RuntimeError, "negative dimension")
    both_raise(lambda lib: lib.randperm(129, dtype=lib.int8), RuntimeError, "")
    both_raise(lambda lib: lib.randperm(2050, dtype=lib.float16), RuntimeError, "cannot be greater than 2049")
    both_raise(lambda lib: lib.randperm(3, dtype=lib.bool), NotImplementedError, "")
    both_raise(lambda lib: lib.randperm(3.0), TypeError, "")
    both_raise(lambda lib: lib.randperm(3, dtype=lib.int64, requires_grad=True), RuntimeError,
               "floating point")
    assert sorted(ember.randperm(128, dtype=ember.int8).tolist()) == list(range(128))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 13), batch_size=st.one_of(st.none(), st.integers(1, 5)), drop_last=st.booleans(),
       workers=st.integers(0, 3), prefetch=st.integers(1, 3), stream=st.booleans())
def test_any_loader_gives_torchs_batches(n, batch_size, drop_last, workers, prefetch, stream):
    drop_last = drop_last and batch_size is not None

    def batches(lib, num_workers):
        if stream:
            class Counting(lib.utils.data.IterableDataset):
                def __iter__(self):
                    info = lib.utils.data.get_worker_info()
                    return iter(range(n) if info is None else range(info.id, n, info.num_workers))

            data = Counting()
        else:
            data = _pairs(lib, n)
        options = {"num_workers": num_workers, "prefetch_factor": prefetch} if num_workers else {}
        return [to_numpy(b) for b in lib.utils.data.DataLoader(data, batch_size=batch_size, drop_last=drop_last,
                                                               **options)]

    # torch in process (see the note above on its workers); a stream split over workers comes round robin,
    # each worker's share batched apart, as torch's workers give it
    if stream and workers:
        expected = _round_robin(_shards(n, workers, batch_size, drop_last))
    else:
        expected = batches(torch, 0)
    assert_same(expected, batches(ember, workers))


def _shards(n: int, workers: int, batch_size, drop_last: bool) -> list:
    """Each worker's batches of its share of range(n), as torch's workers make them."""
    shards = []
    for w in range(workers):
        items = list(range(w, n, workers))
        if batch_size is None:
            shards.append(items)  # unbatched, each sample comes as it is
            continue
        cut = [items[i:i + batch_size] for i in range(0, len(items), batch_size)]
        shards.append([np.array(c) for c in cut if len(c) == batch_size or not drop_last])
    return shards


def _round_robin(shards: list) -> list:
    out, position = [], 0
    while any(position < len(s) for s in shards):
        out += [s[position] for s in shards if position < len(s)]
        position += 1
    return out


def _counted_stream(lib):
    """An IterableDataset of 0..6 that tells its length."""
    methods = {"__iter__": lambda self: iter(range(7)), "__len__": lambda self: 7}
    return type("CountedStream", (lib.utils.data.IterableDataset,), methods)()


@pytest.mark.parametrize("drop_last", [False, True])
def test_an_iterator_of_the_loader_has_its_length_and_gives_its_batches(drop_last):
    def program(lib):
        batches = iter(lib.utils.data.DataLoader(_pairs(lib), batch_size=3, drop_last=drop_last))
        return len(batches), next(batches), len(list(batches)), iter(batches) is batches
    both(program, prepare=lambda out: (out[0], to_numpy(out[1]), out[2], out[3]))
    # (torch's iterator of a stream asks its stand-in sampler for a length, and fails)
    stream = iter(ember.utils.data.DataLoader(_counted_stream(ember), batch_size=2, drop_last=drop_last))
    assert len(stream) == (3 if drop_last else 4) == len(list(stream))


@pytest.mark.parametrize("name", ["batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                  "persistent_workers"])
def test_the_batching_attributes_are_settled_at_construction_as_torchs(name):
    both_raise(lambda lib: setattr(lib.utils.data.DataLoader(_pairs(lib), batch_size=2), name, None), ValueError,
               f"^{name} attribute should not be set after DataLoader is initialized$")
    loader = ember.utils.data.DataLoader(_pairs(ember), batch_size=2)
    loader.collate_fn = lambda batch: len(batch)  # (the others stay free, as in torch)
    assert list(loader)[0] == 2


def _batch_reader(lib):
    """A dataset whose __getitems__ (one call per batch) answers differently from its __getitem__."""
    methods = {"__len__": lambda self: 5, "__getitem__": lambda self, i: ("single", i),
               "__getitems__": lambda self, indices: [("batch", i) for i in indices]}
    return type("BatchReader", (lib.utils.data.Dataset,), methods)()


@pytest.mark.parametrize("wrap", [lambda lib, d: d, lambda lib, d: lib.utils.data.Subset(d, [4, 3, 2, 1]),
                                  lambda lib, d: lib.utils.data.StackDataset(d, d),
                                  lambda lib, d: lib.utils.data.StackDataset(a=d, b=lib.arange(5))],
                         ids=["plain", "subset", "stack", "stack_of_dicts"])
def test_a_loader_reads_a_batch_through_getitems_as_torch(wrap):
    both(lambda lib: list(lib.utils.data.DataLoader(wrap(lib, _batch_reader(lib)), batch_size=2)), prepare=_dicts)


def test_adding_streams_chains_them_as_torch():
    def program(lib):
        stream = type("Stream", (lib.utils.data.IterableDataset,), {"__iter__": lambda self: iter(range(3))})
        chained = stream() + stream()
        return type(chained).__name__, list(chained)
    both(program, prepare=lambda out: out)


class _Tags(list):
    """A list subclass whose constructor takes no contents."""

    def __init__(self, *tags):
        super().__init__(tags)


def test_mutable_containers_keep_their_type_in_a_batch_as_torch():
    for lib in (torch, ember):
        batch = lib.utils.data.default_collate([collections.defaultdict(list, a=1), collections.defaultdict(list, a=2)])
        assert type(batch) is collections.defaultdict and batch.default_factory is list
        assert batch["a"].tolist() == [1, 2]
        tags = lib.utils.data.default_collate([_Tags(1, 2), _Tags(3, 4)])
        assert type(tags) is _Tags and [t.tolist() for t in tags] == [[1, 3], [2, 4]]
        converted = lib.utils.data.default_convert(collections.defaultdict(int, a=np.arange(2)))
        assert type(converted) is collections.defaultdict and converted.default_factory is int
