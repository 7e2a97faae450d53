"""Run under mpiexec by test_mpi.py: every collective on every ReduceOp and dtype, against torch's gloo.

Each rank joins two process groups, ember's on MPI and torch's on gloo (through a file store), runs the same
call on both with the same inputs, and compares what every rank gets. The checks run on import of main().
"""
import numpy as np

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool"]
NUMPY_ONLY = ["int16"]  # gloo has no int16: NumPy computes what every rank should get
NUMPY_OPS = {"SUM": np.add, "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum,
             "BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
SHAPES = [(), (0,), (2, 3)]


def values(shape, dtype, rank, salt=0):
    """Small exact values that differ between ranks (so every reduction is exact in every dtype)."""
    rng = np.random.default_rng(1000 * rank + salt)
    data = rng.integers(1, 4, size=shape)
    return np.asarray((data % 2).astype(dtype) if dtype == "bool" else data.astype(dtype))


class Checker:
    def __init__(self, ember, torch, edist, tdist):
        self.ember, self.torch, self.edist, self.tdist = ember, torch, edist, tdist
        self.rank, self.size = edist.get_rank(), edist.get_world_size()
        self.count = 0

    def pair(self, array):
        return self.ember.from_numpy(array.copy()), self.torch.from_numpy(array.copy())

    def same(self, ours, theirs, what):
        a, b = np.asarray(ours.numpy()), np.asarray(theirs.numpy())
        if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b):
            raise AssertionError(f"rank {self.rank}: {what}: ember gave {a!r}, torch gave {b!r}")
        self.count += 1

    def both_fail_or_agree(self, what, run_ember, run_torch, outputs):
        """Both raise, or neither and every output matches."""
        errors = []
        for run in (run_ember, run_torch):
            try:
                run()
                errors.append(None)
            except (RuntimeError, ValueError, TypeError) as error:
                errors.append(error)
        if (errors[0] is None) != (errors[1] is None):
            raise AssertionError(f"rank {self.rank}: {what}: ember raised {errors[0]!r}, torch raised {errors[1]!r}")
        if errors[0] is None:
            for ours, theirs in outputs:
                self.same(ours, theirs, what)
        else:
            self.count += 1

    def numpy_reductions(self):
        e, E = self.edist, self.ember
        for dtype in NUMPY_ONLY:
            for op, combine in NUMPY_OPS.items():
                for shape in SHAPES:
                    ours = E.from_numpy(values(shape, dtype, self.rank))
                    e.all_reduce(ours, op=getattr(e.ReduceOp, op))
                    expected = values(shape, dtype, 0)
                    for k in range(1, self.size):
                        expected = combine(expected, values(shape, dtype, k))
                    self.same(ours, self.torch.from_numpy(np.asarray(expected, dtype)), f"all_reduce {dtype} {op}")

    def reductions(self):
        for dtype in DTYPES:
            for op in OPS:
                if op in ("BAND", "BOR", "BXOR") and dtype.startswith("float"):
                    continue  # neither library defines bitwise ops on floats; ember's error is checked elsewhere
                if op == "AVG" and dtype in ("float16",):
                    continue
                for shape in SHAPES:
                    self.all_reduce_and_reduce(dtype, op, shape)
                self.reduce_scatters(dtype, op)

    def all_reduce_and_reduce(self, dtype, op, shape):
        e, t = self.edist, self.tdist
        ours, theirs = self.pair(values(shape, dtype, self.rank))
        self.both_fail_or_agree(f"all_reduce {dtype} {op} {shape}",
                                lambda: e.all_reduce(ours, op=getattr(e.ReduceOp, op)),
                                lambda: t.all_reduce(theirs, op=getattr(t.ReduceOp, op)), [(ours, theirs)])
        if op == "AVG":
            return  # gloo's reduce has no AVG
        ours, theirs = self.pair(values(shape, dtype, self.rank, 1))
        root = self.size - 1
        e.reduce(ours, dst=root, op=getattr(e.ReduceOp, op))
        t.reduce(theirs, dst=root, op=getattr(t.ReduceOp, op))
        if self.rank == root:
            self.same(ours, theirs, f"reduce {dtype} {op} {shape}")

    def reduce_scatters(self, dtype, op):
        """reduce_scatter (uneven pieces) against all_reduce of each piece, reduce_scatter_tensor likewise."""
        if op == "AVG":
            return
        e, t = self.edist, self.tdist
        pieces = [values((i + 1,), dtype, self.rank, 10 + i) for i in range(self.size)]
        out = self.ember.from_numpy(np.zeros(self.rank + 1, dtype))
        e.reduce_scatter(out, [self.ember.from_numpy(p) for p in pieces], op=getattr(e.ReduceOp, op))
        expected = [self.torch.from_numpy(p.copy()) for p in pieces]
        for piece in expected:
            t.all_reduce(piece, op=getattr(t.ReduceOp, op))
        self.same(out, expected[self.rank], f"reduce_scatter {dtype} {op}")
        whole = values((self.size * 2, 3), dtype, self.rank, 20)
        out = self.ember.from_numpy(np.zeros((2, 3), dtype))
        e.reduce_scatter_tensor(out, self.ember.from_numpy(whole), op=getattr(e.ReduceOp, op))
        expected = self.torch.from_numpy(whole.copy())
        t.all_reduce(expected, op=getattr(t.ReduceOp, op))
        self.same(out, expected[2 * self.rank:2 * self.rank + 2], f"reduce_scatter_tensor {dtype} {op}")

    def movements(self):
        """broadcast, all_gather (uneven), all_gather_into_tensor, gather, scatter, all_to_all in every dtype."""
        e, t, E, T = self.edist, self.tdist, self.ember, self.torch
        n, r = self.size, self.rank
        for dtype in DTYPES:
            for shape in SHAPES:
                ours, theirs = self.pair(values(shape, dtype, r, 30))
                e.broadcast(ours, src=n - 1)
                t.broadcast(theirs, src=n - 1)
                self.same(ours, theirs, f"broadcast {dtype} {shape}")
                ours_in, theirs_in = self.pair(values(shape, dtype, r, 40))
                ours_out = [E.from_numpy(np.zeros(shape, dtype)) for _ in range(n)]
                theirs_out = [T.from_numpy(np.zeros(shape, dtype)) for _ in range(n)]
                e.all_gather(ours_out, ours_in)
                t.all_gather(theirs_out, theirs_in)
                for a, b in zip(ours_out, theirs_out):
                    self.same(a, b, f"all_gather {dtype} {shape}")
            self.uneven_and_rooted(dtype)

    def uneven_and_rooted(self, dtype):
        e, t, E, T = self.edist, self.tdist, self.ember, self.torch
        n, r = self.size, self.rank
        # all_gather with a different size on each rank, into non-contiguous outputs
        mine = values((r + 1, 2), dtype, r, 50)
        outs = [E.from_numpy(np.zeros((2, i + 1), dtype)).t() for i in range(n)]
        e.all_gather(outs, E.from_numpy(mine))
        for i, out in enumerate(outs):
            self.same(out, T.from_numpy(values((i + 1, 2), dtype, i, 50)), f"all_gather uneven {dtype}")
        ours, theirs = self.pair(values((4,), dtype, r, 60))
        whole_e, whole_t = E.from_numpy(np.zeros(4 * n, dtype)), T.from_numpy(np.zeros(4 * n, dtype))
        e.all_gather_into_tensor(whole_e, ours)
        t.all_gather_into_tensor(whole_t, theirs)
        self.same(whole_e, whole_t, f"all_gather_into_tensor {dtype}")
        gathered_e = [E.from_numpy(np.zeros(i + 1, dtype)) for i in range(n)] if r == 0 else None
        e.gather(E.from_numpy(values((r + 1,), dtype, r, 70)), gathered_e, dst=0)
        if r == 0:
            for i, piece in enumerate(gathered_e):
                self.same(piece, T.from_numpy(values((i + 1,), dtype, i, 70)), f"gather uneven {dtype}")
        got = E.from_numpy(np.zeros(r + 2, dtype))
        src_pieces = [E.from_numpy(values((i + 2,), dtype, n - 1, 80 + i)) for i in range(n)]
        e.scatter(got, src_pieces if r == n - 1 else None, src=n - 1)
        self.same(got, T.from_numpy(values((r + 2,), dtype, n - 1, 80 + r)), f"scatter uneven {dtype}")
        sends = [E.from_numpy(values((i + r + 1,), dtype, r, 90 + i)) for i in range(n)]
        receives = [E.from_numpy(np.zeros(i + r + 1, dtype)) for i in range(n)]
        e.all_to_all(receives, sends)
        for i, piece in enumerate(receives):
            self.same(piece, T.from_numpy(values((r + i + 1,), dtype, i, 90 + r)), f"all_to_all uneven {dtype}")
        ours_in, theirs_in = self.pair(values((n * (n + 1) // 2, 2), dtype, r, 110))
        ours_out = E.from_numpy(np.zeros((n * (r + 1), 2), dtype))
        theirs_out = T.from_numpy(np.zeros((n * (r + 1), 2), dtype))
        e.all_to_all_single(ours_out, ours_in, [r + 1] * n, list(range(1, n + 1)))
        t.all_to_all_single(theirs_out, theirs_in, [r + 1] * n, list(range(1, n + 1)))
        self.same(ours_out, theirs_out, f"all_to_all_single uneven {dtype}")

    def point_to_point_and_objects(self):
        e, E, T = self.edist, self.ember, self.torch
        n, r = self.size, self.rank
        for dtype in DTYPES:
            if r == 0:
                works = [e.isend(E.from_numpy(values((3,), dtype, peer, 100)), dst=peer) for peer in range(1, n)]
                for w in works:
                    w.wait()
                    assert w.is_completed()
            else:
                box = E.from_numpy(np.zeros(3, dtype))
                assert e.recv(box) == 0  # from any rank: the sender is returned
                self.same(box, T.from_numpy(values((3,), dtype, r, 100)), f"send/recv {dtype}")
        objects = [None] * n
        e.all_gather_object(objects, {"rank": r, "name": "x" * r})
        assert objects == [{"rank": i, "name": "x" * i} for i in range(n)], objects
        sent = [r, "from", r] if r == 1 else [None, None, None]
        e.broadcast_object_list(sent, src=1)
        assert sent == [1, "from", 1], sent
        self.count += 2

    def async_work_and_grad(self):
        e, E = self.edist, self.ember
        n, r = self.size, self.rank
        t = E.full((1000,), float(r))
        work = e.all_reduce(t, async_op=True)
        assert work.wait() is True and work.is_completed()
        assert float(t[0]) == sum(range(n))
        leaf = E.ones(3, requires_grad=True)
        e.all_reduce(leaf)  # as torch: a leaf that requires grad is reduced in place, autograd does not see it
        assert leaf.requires_grad and leaf.grad_fn is None and float(leaf.detach()[0]) == n
        import ember.distributed.nn.functional as F
        x = E.tensor([1.0, 2.0], dtype=E.float64, requires_grad=True)
        y = F.all_reduce(x * (r + 1))
        (y * y).sum().backward()
        total = sum(k + 1 for k in range(n)) * np.array([1.0, 2.0])
        expected = 2 * total * n * (r + 1)  # each rank's loss sees the sum; its gradient comes back summed
        assert np.allclose(x.grad.numpy(), expected), (x.grad, expected)
        g = e.new_group([0, n - 1])
        if r in (0, n - 1):
            t = E.tensor([float(r)])
            e.all_reduce(t, group=g)
            assert float(t[0]) == n - 1 and e.get_world_size(g) == 2
        else:
            assert e.get_rank(g) == -1 and e.all_reduce(E.ones(1), group=g) is None
        e.barrier()
        self.count += 4


def main():
    from worlds import ember_and_torch_worlds  # beside this file, which mpiexec runs as a script

    with ember_and_torch_worlds() as (ember, torch):
        import ember.distributed as edist
        import torch.distributed as tdist
        checker = Checker(ember, torch, edist, tdist)
        checker.reductions()
        checker.numpy_reductions()
        checker.movements()
        checker.point_to_point_and_objects()
        checker.async_work_and_grad()
    print(f"rank {checker.rank}: {checker.count} checks passed", flush=True)


if __name__ == "__main__":
    main()
