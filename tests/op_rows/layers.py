"""Op-table rows: the functional activations and normalizations of ``nn.functional``."""
from op_spec import A, Err, FLOATS, OpSpec, S, T, UNARY, s


def functional(name: str):
    """``lib.nn.functional.<name>(*args, **kwargs)``."""
    return lambda m, *args, **kwargs: getattr(m.nn.functional, name)(*args, **kwargs)


def activation(name: str, *extra, away_from=(0.0,), samples=UNARY, node: str | None = None, **options) -> OpSpec:
    """A row for an elementwise activation, with its options (``extra``) as a further sample.

    ``node`` names the last node of ember's composite where torch records the op as one node.
    """
    op = functional(name)
    samples = samples + tuple(s(A(3, 4), *args) if isinstance(args, tuple) else s(A(3, 4), **args) for args in extra)
    if node is not None:
        options.update(grad_fn=dict.fromkeys(range(len(samples)), node), note=COMPOSITE)
    return OpSpec(f"F_{name}", op, samples, away_from=away_from, dtypes=FLOATS, **options)


COMPOSITE = "a composite of ember ops, so its last node is not torch's single node"


NORM_SAMPLES = (s(A(3, 4), [4]), s(A(2, 3, 4), (3, 4)), s(A(0, 4), [4]), s(T(3, 4), [4]), s(S(3, 4), [4]))

OPS = (
    activation("relu6", away_from=(0.0, 6.0), domain=(-2.0, 8.0)),
    activation("leaky_relu", (0.2,)),
    activation("elu", (0.5,)),
    activation("celu", (2.0,)),
    activation("selu"),
    activation("gelu", {"approximate": "tanh"}),
    activation("silu"),
    activation("mish"),
    activation("softplus", (2.0, 1.0), away_from=(0.5,)),
    activation("softsign"),
    activation("softshrink", (1.0,), away_from=(-1.0, -0.5, 0.5, 1.0)),
    activation("hardshrink", (1.0,), away_from=(-1.0, -0.5, 0.5, 1.0)),
    activation("tanhshrink"),
    activation("threshold", samples=(s(A(3, 4), 0.5, -1.0), s(A(), 0.5, 2.0), s(A(0, 3), 0.0, 1.0),
                                     s(T(3, 4), 0.5, 1.0), s(S(2, 3), -0.5, 0.0)), away_from=(-0.5, 0.0, 0.5)),
    activation("hardtanh", (-0.5, 1.5), away_from=(-1.0, -0.5, 1.0, 1.5)),
    activation("hardswish", domain=(-4.0, 4.0), away_from=(-3.0, 3.0)),
    activation("logsigmoid"),
    activation("glu", samples=(s(A(3, 4)), s(A(4, 3), 0), s(A(0, 4)), s(T(3, 4), 1), s(S(2, 4), -1)),
               errors=(Err(lambda m: m.nn.functional.glu(m.ones(2, 3)), RuntimeError, "Halving dimension"),)),
    activation("softmin", samples=(s(A(3, 4), 1), s(A(), 0), s(A(0, 3), 1), s(T(3, 4), 0), s(S(2, 3), -1))),
    OpSpec("F_layer_norm", functional("layer_norm"), NORM_SAMPLES, dtypes=FLOATS,
           errors=(Err(lambda m: m.nn.functional.layer_norm(m.ones(2, 3), [4]), RuntimeError, "normalized_shape"),)),
    OpSpec("F_rms_norm", functional("rms_norm"), NORM_SAMPLES, dtypes=FLOATS, grad_fn={3: "MulBackward0"},
           note="torch records a transposed input's rms_norm ending in a clone, ember in the product",
           errors=(Err(lambda m: m.nn.functional.rms_norm(m.ones(2, 3), [4]), RuntimeError, "normalized_shape"),)),
    OpSpec("F_group_norm", functional("group_norm"), (s(A(2, 4, 3), 2), s(T(4, 6), 2), s(A(0, 4, 2), 4)),
           dtypes=FLOATS, grad_fn={2: "UnsafeViewBackward0"},
           note="an empty input is normalised by a composite of ember ops, its last node not torch's single node",
           errors=(Err(lambda m: m.nn.functional.group_norm(m.ones(2, 3, 4), 2), RuntimeError,
                       "divisible by num_groups"),)),
)
