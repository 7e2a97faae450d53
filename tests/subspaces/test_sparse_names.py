"""ember.sparse's legacy types, spsolve and semi-structured sparsity against torch.sparse's on a CPU."""
import warnings

import pytest
import torch

import ember

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
          "CharTensor", "ByteTensor"]


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def _described(t):
    t = t.coalesce()
    return str(t.dtype).split(".")[1], str(t.layout).split(".")[1], tuple(t.shape), \
        t.indices().tolist(), t.values().tolist()


@pytest.mark.parametrize("name", LEGACY)
@pytest.mark.parametrize("args", ["nothing", "sizes", "size", "indices_values", "indices_values_size"])
def test_legacy_constructors_as_torch(name, args):
    results = []
    for lib in (torch, ember):
        kind = getattr(lib.sparse, name)
        given = {"nothing": (), "sizes": (2, 3), "size": (lib.Size([4]),),
                 "indices_values": (lib.tensor([[0, 2]]), lib.tensor([1.0, 5.0])),
                 "indices_values_size": (lib.tensor([[0, 2]]), lib.tensor([1, 5]), lib.Size([4]))}[args]
        if lib is torch:  # torch warns once a process (from C++), so only the first test would see it
            results.append(_described(_quiet(lambda: kind(*given))))
            continue
        with pytest.warns(UserWarning, match="is deprecated"):
            results.append(_described(kind(*given)))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_isinstance_as_torch(name):
    def answers(lib):
        sparse = _quiet(lambda: getattr(lib.sparse, name)(2))
        return [isinstance(value, getattr(lib.sparse, kind))
                for value in (sparse, sparse.to_dense(), lib.ones(2)) for kind in LEGACY]

    assert answers(ember) == answers(torch)


def test_legacy_constructor_refuses_dense_data_as_torch():
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.sparse.FloatTensor(lib.ones(2))


@pytest.mark.parametrize("layout", ["csr", "coo"])
def test_spsolve_has_no_cpu_kernel_as_torch(layout):
    for lib in (torch, ember):
        a = lib.tensor([[4.0, 1.0], [1.0, 3.0]])
        a = _quiet(a.to_sparse_csr) if layout == "csr" else a.to_sparse()
        with pytest.raises(NotImplementedError, match="Sparse" if layout == "coo" else "SparseCsrCPU"):
            lib.sparse.spsolve(a, lib.tensor([1.0, 2.0]))


@pytest.mark.parametrize("make", [
    lambda lib: lib.sparse.to_sparse_semi_structured(lib.ones(64, 64)),
    lambda lib: lib.sparse.to_sparse_semi_structured(lib.ones(64, 64, dtype=lib.float16)),
    lambda lib: lib.sparse.SparseSemiStructuredTensorCUTLASS.from_dense(lib.ones(64, 64)),
    lambda lib: lib.sparse.SparseSemiStructuredTensorCUSPARSELT.from_dense(lib.ones(64, 64)),
])
def test_semi_structured_refuses_cpu_tensors_as_torch(make):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="Only CUDA tensors are currently supported"):
            make(lib)


def test_semi_structured_transposed_warns_as_torch():
    for lib in (torch, ember):
        with pytest.warns(FutureWarning, match="transpose"), pytest.raises(RuntimeError):
            lib.sparse.to_sparse_semi_structured(lib.ones(64, 64), transposed=True)
    assert issubclass(ember.sparse.SparseSemiStructuredTensorCUTLASS, ember.sparse.SparseSemiStructuredTensor)
    assert issubclass(ember.sparse.SparseSemiStructuredTensor, ember.Tensor)
