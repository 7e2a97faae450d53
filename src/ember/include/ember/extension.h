/* ember/extension.h: what a C or C++ kernel needs to take and return ember Tensors.
 *
 * A tensor crosses into a kernel without a copy: the kernel sees the memory of the tensor's NumPy array through an
 * `ember_tensor` view (data pointer, dtype, sizes, strides in elements, contiguity). The view borrows: it is valid
 * while the tensor lives, which is the whole call for an argument. Non-contiguous tensors arrive as they are, with
 * their strides; a kernel that wants dense memory asks for it (`ember_contiguous`, `Tensor::contiguous()`), which
 * copies only when the tensor is not already contiguous.
 *
 * C:   functions return 0 on success and -1 with a Python exception set (or NULL for those returning a tensor).
 * C++: `ember::Tensor`, `ember::empty`, `EMBER_CHECK` and `EMBER_DISPATCH_FLOATING_TYPES`; errors are exceptions,
 *      and pybind11 converts `ember::Tensor` arguments and results. See docs/cpp_extension.md.
 */
#ifndef EMBER_EXTENSION_H
#define EMBER_EXTENSION_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    EMBER_ANY = -1, /* accepted by ember_arg: no dtype check */
    EMBER_BOOL,
    EMBER_UINT8,
    EMBER_INT8,
    EMBER_INT16,
    EMBER_INT32,
    EMBER_INT64,
    EMBER_FLOAT16,
    EMBER_FLOAT32,
    EMBER_FLOAT64,
    EMBER_UNSUPPORTED
} ember_dtype;

typedef struct {
    PyObject *object;           /* the ember.Tensor (borrowed) */
    PyObject *array;            /* its NumPy array (borrowed: the tensor keeps it alive) */
    void *data;                 /* first element */
    ember_dtype dtype;
    int ndim;
    int64_t itemsize;           /* bytes per element */
    int64_t numel;
    const int64_t *sizes;       /* ndim sizes */
    const int64_t *byte_strides; /* ndim strides in bytes; ember_stride gives them in elements */
    int contiguous;             /* row-major and dense: data[i] is element i */
} ember_tensor;

static inline const char *ember_dtype_name(ember_dtype dtype) {
    static const char *const names[] = {"bool",    "uint8",   "int8",    "int16",  "int32",
                                        "int64",   "float16", "float32", "float64", "unsupported"};
    return dtype >= EMBER_BOOL && dtype <= EMBER_UNSUPPORTED ? names[dtype] : "any";
}

static inline int64_t ember_stride(const ember_tensor *t, int dim) { return t->byte_strides[dim] / t->itemsize; }

/* Per translation unit, looked up once: NumPy's C API, ember.Tensor and the function that wraps an array. */
static PyObject *ember__tensor_type = NULL;
static PyObject *ember__wrap = NULL;
static PyObject *ember__data_name = NULL;

static inline int ember__init(void) {
    if (ember__wrap != NULL) return 0;
    if (PyArray_API == NULL && _import_array() < 0) return -1;
    PyObject *module = PyImport_ImportModule("ember._tensor");
    if (module == NULL) return -1;
    PyObject *type = PyObject_GetAttrString(module, "Tensor");
    Py_DECREF(module);
    if (type == NULL) return -1;
    ember__data_name = PyUnicode_InternFromString("_data");
    ember__wrap = PyObject_GetAttrString(type, "_wrap");
    ember__tensor_type = type;
    return ember__wrap != NULL && ember__data_name != NULL ? 0 : -1;
}

static inline ember_dtype ember__dtype_of(PyArrayObject *array) {
    npy_intp size = PyArray_ITEMSIZE(array);
    switch (PyArray_DESCR(array)->kind) {
        case 'b': return EMBER_BOOL;
        case 'u': return size == 1 ? EMBER_UINT8 : EMBER_UNSUPPORTED;
        case 'i': return size == 1 ? EMBER_INT8 : size == 2 ? EMBER_INT16 : size == 4 ? EMBER_INT32 : EMBER_INT64;
        case 'f': return size == 2 ? EMBER_FLOAT16 : size == 4 ? EMBER_FLOAT32 : size == 8 ? EMBER_FLOAT64
                                                                                         : EMBER_UNSUPPORTED;
        default: return EMBER_UNSUPPORTED;
    }
}

static inline int ember__typenum(ember_dtype dtype) {
    static const int numbers[] = {NPY_BOOL, NPY_UINT8, NPY_INT8, NPY_INT16, NPY_INT32,
                                  NPY_INT64, NPY_FLOAT16, NPY_FLOAT32, NPY_FLOAT64};
    return dtype >= EMBER_BOOL && dtype < EMBER_UNSUPPORTED ? numbers[dtype] : -1;
}

static inline void ember__fill(PyObject *object, PyObject *array, ember_tensor *t) {
    PyArrayObject *a = (PyArrayObject *)array;
    t->object = object;
    t->array = array;
    t->data = PyArray_DATA(a);
    t->dtype = ember__dtype_of(a);
    t->ndim = PyArray_NDIM(a);
    t->itemsize = PyArray_ITEMSIZE(a);
    t->numel = PyArray_SIZE(a);
    t->sizes = (const int64_t *)PyArray_DIMS(a);
    t->byte_strides = (const int64_t *)PyArray_STRIDES(a);
    t->contiguous = PyArray_IS_C_CONTIGUOUS(a);
}

/* The view of `object`, which must be an ember.Tensor (a TypeError otherwise). */
static inline int ember_tensor_view(PyObject *object, ember_tensor *t) {
    if (ember__init() < 0) return -1;
    if (!PyObject_TypeCheck(object, (PyTypeObject *)ember__tensor_type)) {
        PyErr_Format(PyExc_TypeError, "expected an ember.Tensor, not %s", Py_TYPE(object)->tp_name);
        return -1;
    }
    PyObject *array = PyObject_GetAttr(object, ember__data_name);
    if (array == NULL) return -1;
    Py_DECREF(array);
    ember__fill(object, array, t);
    return 0;
}

/* Argument `name` of function `fn`: a tensor of dtype `expected` (or EMBER_ANY), with errors that name both. */
static inline int ember_arg(PyObject *object, const char *fn, const char *name, ember_dtype expected,
                            ember_tensor *t) {
    if (ember__init() < 0) return -1;
    if (!PyObject_TypeCheck(object, (PyTypeObject *)ember__tensor_type)) {
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be Tensor, not %s", fn, name,
                     Py_TYPE(object)->tp_name);
        return -1;
    }
    if (ember_tensor_view(object, t) < 0) return -1;
    if (expected != EMBER_ANY && t->dtype != expected) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s(): expected argument '%s' to be a %s tensor, but got %s; convert it before the call "
                     "(%s.to(ember.%s))",
                     fn, name, ember_dtype_name(expected), ember_dtype_name(t->dtype), name,
                     ember_dtype_name(expected));
        return -1;
    }
    return 0;
}

/* A TypeError unless the C function `fn` received exactly `expected` positional arguments. */
static inline int ember_check_nargs(const char *fn, Py_ssize_t nargs, Py_ssize_t expected) {
    if (nargs == expected) return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes %zd positional argument%s but %zd %s given", fn, expected,
                 expected == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
    return -1;
}

/* A new, uninitialised, contiguous tensor (a new reference, or NULL); `t` receives its view. */
static inline PyObject *ember_empty(int ndim, const int64_t *sizes, ember_dtype dtype, ember_tensor *t) {
    if (ember__init() < 0) return NULL;
    int typenum = ember__typenum(dtype);
    if (typenum < 0) {
        PyErr_Format(PyExc_ValueError, "ember_empty: cannot allocate a tensor of dtype %s", ember_dtype_name(dtype));
        return NULL;
    }
    PyObject *array = PyArray_SimpleNew(ndim, (npy_intp *)sizes, typenum);
    if (array == NULL) return NULL;
    PyObject *object = PyObject_CallOneArg(ember__wrap, array);
    if (object != NULL) ember__fill(object, array, t);
    Py_DECREF(array);
    return object;
}

static inline PyObject *ember_empty_like(const ember_tensor *like, ember_tensor *t) {
    return ember_empty(like->ndim, like->sizes, like->dtype, t);
}

/* `src` itself (a new reference) when it is contiguous, else a contiguous copy; `t` receives its view. */
static inline PyObject *ember_contiguous(const ember_tensor *src, ember_tensor *t) {
    if (src->contiguous) {
        *t = *src;
        Py_INCREF(src->object);
        return src->object;
    }
    PyObject *array = PyArray_NewCopy((PyArrayObject *)src->array, NPY_CORDER);
    if (array == NULL) return NULL;
    PyObject *object = PyObject_CallOneArg(ember__wrap, array);
    if (object != NULL) ember__fill(object, array, t);
    Py_DECREF(array);
    return object;
}

/* A module of C functions, each `EMBER_C_FUNCTION(name) { ... }` and listed with EMBER_FUNCTION:
 *     EMBER_MODULE(EMBER_FUNCTION(scale, "x * factor"), EMBER_FUNCTION(shift, "x + offset"))
 * EMBER_EXTENSION_NAME is defined by the build (load, load_inline, BuildExtension). */
#define EMBER_C_FUNCTION(fn) static PyObject *fn(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
#define EMBER_FUNCTION(fn, doc) {#fn, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, doc}
#define EMBER__PASTE(a, b) a##b
#define EMBER__INIT(name) EMBER__PASTE(PyInit_, name)
#define EMBER__QUOTE(name) #name
#define EMBER__STR(name) EMBER__QUOTE(name)
#define EMBER_MODULE(...)                                                                                     \
    static PyMethodDef ember__methods[] = {__VA_ARGS__, {NULL, NULL, 0, NULL}};                                \
    static struct PyModuleDef ember__module = {PyModuleDef_HEAD_INIT, EMBER__STR(EMBER_EXTENSION_NAME), NULL, \
                                               -1, ember__methods, NULL, NULL, NULL, NULL};                   \
    PyMODINIT_FUNC EMBER__INIT(EMBER_EXTENSION_NAME)(void) { return PyModule_Create(&ember__module); }

#ifdef __cplusplus
} /* extern "C" */

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

// hidden, as pybind11's own namespace is: ember::Tensor holds a pybind11::object
namespace __attribute__((visibility("hidden"))) ember {

using Dtype = ember_dtype;

template <typename T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr Dtype value = EMBER_BOOL; };
template <> struct dtype_of<uint8_t> { static constexpr Dtype value = EMBER_UINT8; };
template <> struct dtype_of<int8_t> { static constexpr Dtype value = EMBER_INT8; };
template <> struct dtype_of<int16_t> { static constexpr Dtype value = EMBER_INT16; };
template <> struct dtype_of<int32_t> { static constexpr Dtype value = EMBER_INT32; };
template <> struct dtype_of<int64_t> { static constexpr Dtype value = EMBER_INT64; };
template <> struct dtype_of<float> { static constexpr Dtype value = EMBER_FLOAT32; };
template <> struct dtype_of<double> { static constexpr Dtype value = EMBER_FLOAT64; };

namespace detail {
template <typename... Parts> std::string concat(const Parts &...parts) {
    std::ostringstream out;
    (void)std::initializer_list<int>{(out << parts, 0)...};
    return out.str();
}
inline void raise_if_error(int status) {
    if (status < 0) throw pybind11::error_already_set();
}
}  // namespace detail

/* A tensor handed to or made by a kernel: it holds a reference to the ember.Tensor and a view of its memory. */
class Tensor {
  public:
    Tensor() : view_() {}
    explicit Tensor(pybind11::object object) : object_(std::move(object)) {
        detail::raise_if_error(ember_tensor_view(object_.ptr(), &view_));
    }
    static Tensor steal(PyObject *object, const ember_tensor &view) {
        if (object == NULL) throw pybind11::error_already_set();
        Tensor t;
        t.object_ = pybind11::reinterpret_steal<pybind11::object>(object);
        t.view_ = view;
        return t;
    }

    /* The data as T*, after checking that T is the tensor's dtype (a RuntimeError that says what to do if not). */
    template <typename T> T *data_ptr() const {
        if (view_.dtype != dtype_of<T>::value)
            throw std::runtime_error(detail::concat("data_ptr: expected a ", ember_dtype_name(dtype_of<T>::value),
                                                    " tensor but got ", ember_dtype_name(view_.dtype),
                                                    "; convert it before the call, or dispatch on dtype() with "
                                                    "EMBER_DISPATCH_FLOATING_TYPES"));
        return static_cast<T *>(view_.data);
    }
    void *data_ptr() const { return view_.data; }
    Dtype dtype() const { return view_.dtype; }
    int64_t dim() const { return view_.ndim; }
    int64_t numel() const { return view_.numel; }
    bool is_contiguous() const { return view_.contiguous != 0; }
    int64_t size(int64_t dim) const { return view_.sizes[wrap(dim)]; }
    int64_t stride(int64_t dim) const { return ember_stride(&view_, static_cast<int>(wrap(dim))); }
    std::vector<int64_t> sizes() const { return std::vector<int64_t>(view_.sizes, view_.sizes + view_.ndim); }
    std::vector<int64_t> strides() const {
        std::vector<int64_t> out(view_.ndim);
        for (int d = 0; d < view_.ndim; ++d) out[d] = ember_stride(&view_, d);
        return out;
    }
    /* This tensor when contiguous, else a contiguous copy. */
    Tensor contiguous() const {
        ember_tensor view;
        return steal(ember_contiguous(&view_, &view), view);
    }
    const ember_tensor &view() const { return view_; }
    const pybind11::object &object() const { return object_; }

  private:
    int64_t wrap(int64_t dim) const {
        int64_t wrapped = dim < 0 ? dim + view_.ndim : dim;
        if (wrapped < 0 || wrapped >= view_.ndim)
            throw pybind11::index_error(detail::concat("Dimension out of range (expected to be in range of [",
                                                       -view_.ndim, ", ", view_.ndim - 1, "], but got ", dim, ")"));
        return wrapped;
    }
    pybind11::object object_;
    ember_tensor view_;
};

/* A new, uninitialised, contiguous tensor. */
inline Tensor empty(const std::vector<int64_t> &sizes, Dtype dtype) {
    ember_tensor view;
    return Tensor::steal(ember_empty(static_cast<int>(sizes.size()), sizes.data(), dtype, &view), view);
}
inline Tensor empty_like(const Tensor &like) { return empty(like.sizes(), like.dtype()); }
inline Tensor zeros(const std::vector<int64_t> &sizes, Dtype dtype) {
    Tensor t = empty(sizes, dtype);
    memset(t.data_ptr(), 0, static_cast<size_t>(t.numel() * t.view().itemsize));
    return t;
}

}  // namespace ember

/* A RuntimeError with the message pieces joined, unless `cond` holds: EMBER_CHECK(x.dim() == 2, "got ", x.dim()). */
#define EMBER_CHECK(cond, ...) \
    do {                       \
        if (!(cond)) throw std::runtime_error(::ember::detail::concat(__VA_ARGS__)); \
    } while (0)

/* Runs the lambda with scalar_t set to float or double after the tensor's dtype; other dtypes raise. */
#define EMBER_DISPATCH_FLOATING_TYPES(DTYPE, NAME, ...)                                                       \
    [&] {                                                                                                     \
        switch (DTYPE) {                                                                                      \
            case EMBER_FLOAT32: {                                                                             \
                using scalar_t = float;                                                                       \
                return __VA_ARGS__();                                                                         \
            }                                                                                                 \
            case EMBER_FLOAT64: {                                                                             \
                using scalar_t = double;                                                                      \
                return __VA_ARGS__();                                                                         \
            }                                                                                                 \
            default:                                                                                          \
                throw std::runtime_error(::ember::detail::concat(NAME, ": expected a float32 or float64 tensor " \
                                                                 "but got ", ember_dtype_name(DTYPE)));        \
        }                                                                                                     \
    }()

namespace pybind11 {
namespace detail {
/* ember::Tensor arguments and results cross as the ember.Tensor itself: no copy either way. */
template <> struct type_caster<ember::Tensor> {
    PYBIND11_TYPE_CASTER(ember::Tensor, const_name("ember.Tensor"));
    bool load(handle src, bool) {
        ember_tensor view;
        if (ember_tensor_view(src.ptr(), &view) < 0) {
            PyErr_Clear();
            return false;
        }
        Py_INCREF(src.ptr());
        value = ember::Tensor::steal(src.ptr(), view);
        return true;
    }
    static handle cast(const ember::Tensor &t, return_value_policy, handle) { return t.object().inc_ref(); }
};
}  // namespace detail
}  // namespace pybind11

#endif /* __cplusplus */
#endif /* EMBER_EXTENSION_H */
