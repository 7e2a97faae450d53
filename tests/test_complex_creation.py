"""Complex tensors made, converted, compared and saved, against torch: factories, casts, Python numbers,
NumPy arrays, legacy type names, assert_close, ember.save/load both ways and safetensors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from twins import both_raise, normalise


def plain(value):
    """Tensors as arrays (torch's lazy conjugates resolved), dtypes and strings in ember's spelling."""
    if isinstance(value, torch.Tensor):
        value = value.detach().resolve_conj().resolve_neg()
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return np.array(value.detach().numpy())
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    return normalise(value)


def same(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected, actual = plain(program(torch)), plain(program(ember))
    _agree(expected, actual)


def _agree(expected, actual):
    if isinstance(expected, np.ndarray):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-12)
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for e, a in zip(expected, actual):
            _agree(e, a)
    else:
        assert actual == expected and type(actual) is type(expected), (actual, expected)


FACTORIES = {
    "full_infers_complex": lambda L: L.full((2,), 1 + 2j),
    "full_complex128": lambda L: L.full((2, 1), 3, dtype=L.complex128),
    "full_like": lambda L: L.full_like(L.zeros(2, dtype=L.complex64), 1j),
    "full_real_from_complex_without_imag": lambda L: L.full((1,), 2 + 0j, dtype=L.float32),
    "fill_": lambda L: L.zeros(3, dtype=L.complex64).fill_(1 - 1j),
    "zeros_ones_empty_like": lambda L: (L.zeros_like(L.ones(2, dtype=L.complex64)),
                                        L.ones_like(L.zeros(2), dtype=L.complex128),
                                        L.empty_like(L.ones(2, dtype=L.cfloat)).dtype),
    "eye": lambda L: L.eye(2, 3, dtype=L.complex64),
    "linspace_complex_ends": lambda L: L.linspace(0.1, 1 + 1j, 5),
    "linspace_complex_dtype": lambda L: L.linspace(-1, 2, 4, dtype=L.complex128),
    "logspace_complex_end": lambda L: L.logspace(0, 1j, 3, base=2),
    "logspace_complex_dtype": lambda L: L.logspace(0, 2, 3, dtype=L.complex64),
    "tensor_infers": lambda L: (L.tensor([1, 2.5, 1j]), L.tensor(1j).dtype),
    "as_tensor_asarray_from_numpy": lambda L: (L.as_tensor(np.array([1j], np.complex64)),
                                               L.asarray([1j, 2]), L.from_numpy(np.array([1 + 1j, 2]))),
    "new_methods": lambda L: (L.zeros(1, dtype=L.complex64).new_zeros(2), L.ones(1, dtype=L.cdouble).new_ones(2),
                              L.zeros(1, dtype=L.complex64).new_full((2,), 1 + 1j),
                              L.zeros(1, dtype=L.complex64).new_tensor([1, 2])),
    "rand_randn_dtypes": lambda L: (L.rand(2, dtype=L.complex64).dtype, L.randn_like(L.ones(1, dtype=L.cdouble)).dtype),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_as_torch(name):
    same(FACTORIES[name])


CONVERSIONS = {
    "to": lambda L: (L.tensor([1., 2.]).to(L.complex64), L.tensor([1, 2]).to(L.cdouble)),
    "cfloat_cdouble": lambda L: (L.tensor([1., 2.]).cfloat(), L.tensor([1, 2]).cdouble()),
    "to_real_drops_imag": lambda L: (L.tensor([1.5 + 2j, -2.7 - 1j]).float(), L.tensor([2.7 - 1j, -2.7 + 1j]).long()),
    "to_bool_looks_at_both_parts": lambda L: (L.tensor([0j, 1j, 1, 0j]).bool(), L.tensor([1j]).to(L.bool)),
    "item_tolist": lambda L: (L.tensor([1 + 2j]).item(), L.tensor([[1.5 + 2j, 3]], dtype=L.complex64).tolist()),
    "numpy": lambda L: L.tensor([1 + 2j], dtype=L.complex64).numpy(),
    "python_numbers": lambda L: (complex(L.tensor(2 + 1j)), float(L.tensor(2 + 0j)), int(L.tensor(2.5 + 0j)),
                                 complex(L.tensor(2.)), bool(L.tensor(1j))),
    "type_names": lambda L: (L.zeros(1, dtype=L.complex64).type(), L.zeros(1, dtype=L.complex128).type()),
    "type_casts": lambda L: (L.zeros(1).type(L.complex64).dtype, L.zeros(1).type(f"{L.__name__}.ComplexDoubleTensor")),
    "is_complex": lambda L: (L.zeros(1, dtype=L.complex64).is_complex(), L.zeros(1).is_complex(),
                             L.is_complex(L.zeros(1, dtype=L.cdouble)), L.zeros(1, dtype=L.cfloat).is_floating_point()),
    "promotion": lambda L: (L.promote_types(L.complex64, L.float64), L.result_type(L.tensor([1.]), 1j),
                            L.can_cast(L.complex64, L.float32), L.can_cast(L.float64, L.complex64)),
    "cat_stack_promote": lambda L: (L.cat([L.zeros(1), L.ones(1, dtype=L.complex64)]),
                                    L.stack([L.zeros(1, dtype=L.float64), L.ones(1, dtype=L.complex64)])),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversions_as_torch(name):
    same(CONVERSIONS[name])


@pytest.mark.parametrize("program, error, fragment", [
    (lambda L: float(L.tensor(2 + 1j)), RuntimeError, "value cannot be converted to type double"),
    (lambda L: int(L.tensor(2 + 1j)), RuntimeError, "value cannot be converted to type int64_t"),
    (lambda L: L.tensor([1j], dtype=L.float32), TypeError, "real number, not '?complex"),
    (lambda L: L.zeros(1).new_tensor([1j, 2.]), TypeError, "real number, not '?complex"),
    (lambda L: L.linspace(0, 1j, 3, dtype=L.float32), RuntimeError, "can't be safely cast to passed dtype"),
    (lambda L: L.arange(3, dtype=L.complex64), NotImplementedError, "\"arange_cpu\" not implemented for 'ComplexFloat'"),
    (lambda L: L.arange(0, 1j), RuntimeError, "value cannot be converted to type double"),
    (lambda L: L.randint_like(L.zeros(2, dtype=L.complex64), 5), RuntimeError, "check_random_bounds handles only"),
    (lambda L: L.iinfo(L.complex64), TypeError, "iinfo\\(\\) requires an integer input type"),
], ids=["float", "int", "tensor_float", "new_tensor", "linspace_real_dtype", "arange_dtype", "arange_bound", "randint_like",
     "iinfo"])
def test_refusals_as_torch(program, error, fragment):
    both_raise(program, error, fragment)


def test_tensor_refuses_to_drop_an_imaginary_part_into_an_integer_dtype():
    with pytest.raises(TypeError, match="must be real number, not complex"):
        ember.tensor([1j], dtype=ember.int64)


def test_chalf_is_refused_with_the_dtype_to_use():
    with pytest.raises(TypeError, match="no complex32.*cfloat"):
        ember.ones(1).chalf()


def test_assert_close_compares_complex_numbers_in_the_plane():
    for L in (torch, ember):
        L.testing.assert_close(L.tensor([1 + 1j]), L.tensor([1 + 1.0000001j]))
        L.testing.assert_close(L.tensor([complex("nan+1j")]), L.tensor([complex("nan+1j")]), equal_nan=True)
        with pytest.raises(AssertionError, match="Greatest absolute difference: 0.1000"):
            L.testing.assert_close(L.tensor([1 + 1j]), L.tensor([1 + 1.1j]))
        with pytest.raises(AssertionError, match="dtype"):
            L.testing.assert_close(L.tensor([1 + 1j]), L.tensor([1.]))
    ember.testing.assert_close(1 + 2j, 1 + 2j)


# ----------------------------------------------------------------- serialization


def _saved_by(saver, loader, obj, path):
    saver.save(obj, path)
    return loader.load(path)


def test_ember_save_of_complex_tensors_loads_in_torch_and_back(tmp_path):
    z = ember.tensor([[1 + 2j, 3 - 1j], [0.5j, -2]], dtype=ember.complex64)
    obj = {"z": z, "row": z[1], "t": z.t(), "w": ember.tensor([1j, 2], dtype=ember.complex128)}
    loaded = _saved_by(ember, torch, obj, tmp_path / "a.pt")
    for key in obj:
        np.testing.assert_array_equal(plain(loaded[key]), plain(obj[key]))
        assert str(loaded[key].dtype).split(".")[-1] == str(obj[key].dtype).split(".")[-1]
    again = ember.load(tmp_path / "a.pt")
    again["row"][0] = 7j  # views still share their storage
    assert again["z"][1, 0].item() == 7j


def test_torch_save_of_complex_tensors_loads_in_ember(tmp_path):
    base = torch.randn(3, 4, dtype=torch.cdouble)
    obj = {"base": base, "col": base[:, 1], "p": torch.nn.Parameter(torch.tensor([1j, 2])),
           "conj": torch.tensor([1j, 2 + 1j]).conj(), "neg_imag": torch.tensor([1j, 2]).conj().imag}
    loaded = _saved_by(torch, ember, obj, tmp_path / "b.pt")
    for key in obj:
        np.testing.assert_array_equal(plain(loaded[key]), plain(obj[key]))
    assert isinstance(loaded["p"], ember.nn.Parameter) and loaded["p"].requires_grad


def test_safetensors_holds_complex64_and_refuses_complex128(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    z = ember.tensor([1 + 2j, -3j], dtype=ember.complex64)
    path = tmp_path / "z.safetensors"
    ember.utils.safetensors.save_file({"z": z}, path)
    np.testing.assert_array_equal(st.load_file(str(path))["z"].numpy(), z.numpy())
    np.testing.assert_array_equal(ember.utils.safetensors.load(st.save({"z": torch.tensor([1j])}))["z"].numpy(),
                                  np.array([1j], np.complex64))
    with pytest.raises(TypeError, match="'w' is complex128.*C64"):
        ember.utils.safetensors.save({"w": z.cdouble()})


def test_normal_draws_complex_samples_of_the_given_variance():
    ember.manual_seed(0)
    for sample in (ember.normal(0.0, 2.0, size=(20000,), dtype=ember.complex64),
                   ember.normal(ember.full((20000,), 1j, dtype=ember.complex64), 2.0),
                   ember.normal(ember.full((20000,), 1j, dtype=ember.complex64), ember.full((20000,), 2.0))):
        assert sample.dtype is ember.complex64
        centred = sample - sample.mean()
        assert abs(float(centred.abs().pow(2).mean()) - 4) < 0.2  # the complex variance is std ** 2
        for part in (ember.real(centred), ember.imag(centred)):
            assert abs(float(part.pow(2).mean()) - 2) < 0.1  # each part half of it
    assert abs(complex(ember.normal(ember.full((20000,), 1j), 1.0).mean()) - 1j) < 0.05


def test_make_tensor_draws_both_parts_in_range():
    values = ember.testing.make_tensor(2000, dtype=ember.complex64, device="cpu", low=-1, high=2)
    for part in (ember.real(values), ember.imag(values)):
        assert -1 <= float(part.min()) < -0.9 and 1.9 < float(part.max()) < 2


def test_casting_complex_to_real_warns_at_the_callers_line():
    for program in (lambda: ember.tensor([1j]).float(), lambda: ember.tensor(ember.tensor([1j]), dtype=ember.float64)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            program()
        (warning,) = [w for w in caught if "discards the imaginary part" in str(w.message)]
        assert warning.category is UserWarning and warning.filename == __file__
