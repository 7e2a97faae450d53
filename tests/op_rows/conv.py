"""Op-table rows: convolutions, padding, folding and pooling (``ember.nn.functional``).

Their layers and the keyword forms are twinned in ``tests/nn/test_conv.py`` and ``test_pooling.py``;
these rows add the generic checks: transposed and strided inputs, empty batches, float32 and float64,
gradcheck and gradgradcheck.
"""
from op_spec import A, Err, OpSpec, S, T, s


def functional(name: str, **fixed):
    return lambda m, *args, **kwargs: getattr(m.nn.functional, name)(*args, **fixed, **kwargs)


OPS = (
    OpSpec("conv1d", functional("conv1d"),
           (s(A(2, 3, 7), A(4, 3, 3), A(4)), s(T(2, 3, 7), S(4, 3, 3)),
            s(A(0, 3, 5), A(2, 3, 2)), s(A(3, 7), A(4, 3, 3), stride=2, padding=1)),
           errors=(Err(lambda m: m.nn.functional.conv1d(m.ones(1, 4, 5), m.ones(2, 3, 3)), RuntimeError,
                       "channels"),)),
    OpSpec("conv2d", functional("conv2d"),
           (s(A(2, 3, 6, 5), A(4, 3, 3, 2), A(4)), s(T(2, 3, 5, 6), S(4, 3, 3, 2)),
            s(A(0, 3, 5, 5), A(2, 3, 2, 2)), s(A(1, 4, 6, 6), A(4, 2, 3, 3), groups=2, padding="same"),
            s(S(1, 2, 7, 7), A(3, 2, 3, 3), stride=2, dilation=2)),
           errors=(Err(lambda m: m.nn.functional.conv2d(m.ones(5, 5), m.ones(2, 3, 3, 3)), RuntimeError,
                       "input"),)),
    OpSpec("conv_transpose2d", functional("conv_transpose2d"),
           (s(A(2, 3, 4, 5), A(3, 2, 3, 2), A(2)), s(T(1, 3, 4, 4), S(3, 2, 2, 2), stride=2, output_padding=1),
            s(A(0, 2, 3, 3), A(2, 2, 2, 2))),
           errors=(Err(lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 3, 4, 4), m.ones(2, 2, 2, 2)),
                       RuntimeError, "channels"),)),
    OpSpec("pad_reflect", functional("pad", mode="reflect"),
           (s(A(2, 3, 4), (2, 1)), s(T(2, 4, 5), (1, 2, 2, 1)), s(S(2, 3, 4), (1, 1)))),
    OpSpec("pad_constant", functional("pad", value=1.5),
           (s(A(3, 4), (1, 2)), s(A(0, 3), (1, 1, 0, 2)), s(T(3, 4), (-1, 2)), s(S(3, 4), (0, 1, 1, 0)))),
    OpSpec("nn_unfold", functional("unfold"),
           (s(A(2, 3, 5, 4), (2, 3)), s(T(1, 2, 5, 5), 2, stride=2, padding=1), s(S(1, 2, 4, 4), 2, dilation=2))),
    OpSpec("max_pool2d", functional("max_pool2d"),
           (s(A(2, 3, 6, 5), 2), s(T(1, 2, 6, 6), 3, 2, 1, ceil_mode=True), s(S(2, 5, 6), (2, 3), dilation=(1, 2)),
            s(A(0, 2, 4, 4), 2))),
    OpSpec("avg_pool2d", functional("avg_pool2d"),
           (s(A(2, 3, 6, 5), 2), s(T(1, 2, 6, 6), 3, 2, 1, ceil_mode=True, count_include_pad=False),
            s(S(2, 5, 6), 2, divisor_override=3))),
    OpSpec("adaptive_avg_pool2d", functional("adaptive_avg_pool2d"),
           (s(A(2, 3, 7, 5), (3, 2)), s(T(1, 2, 6, 6), 4), s(S(2, 5, 6), 1), s(T(2, 3, 6, 6), (2, 3)),
            s(A(2, 3, 8, 4), (4, None)))),
)
