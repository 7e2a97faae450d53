"""The tensor API ember promises: every name here exists as ``ember.<name>`` (or, for a few, only as a Tensor
method, as in torch), ``ember.linalg.<name>`` or ``ember.special.<name>``. ``test_api_coverage.py`` reads it.

Kept as data, by family, in the order the families are documented.
"""

CREATION = """
tensor as_tensor from_numpy zeros ones full empty zeros_like ones_like full_like empty_like rand_like randn_like
randint_like arange linspace logspace eye rand randn randint randperm normal bernoulli multinomial poisson
manual_seed seed initial_seed get_rng_state set_rng_state Generator
"""
POINTWISE = """
abs neg sign sgn add sub mul div true_divide floor_divide remainder fmod pow float_power reciprocal
exp exp2 expm1 log log2 log10 log1p sqrt rsqrt square
sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh deg2rad rad2deg
sigmoid logit erf erfc erfinv lgamma digamma polygamma i0 sinc
floor ceil round trunc frac
clamp clip maximum minimum fmax fmin where
lerp addcmul addcdiv hypot logaddexp logaddexp2 nan_to_num xlogy copysign heaviside
bitwise_left_shift bitwise_right_shift
"""
COMPARISON = """
eq ne lt le gt ge equal allclose isclose isnan isinf isposinf isneginf isfinite isin
logical_and logical_or logical_not logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not
"""
REDUCTIONS = """
sum nansum mean nanmean prod amax amin aminmax max min argmax argmin var std var_mean std_mean norm logsumexp
cumsum cumprod cummax cummin logcumsumexp any all median nanmedian mode quantile nanquantile kthvalue topk sort
argsort msort count_nonzero unique unique_consecutive bincount histc searchsorted bucketize
"""
SHAPE_AND_INDEXING = """
reshape view view_as flatten unflatten squeeze unsqueeze permute transpose swapaxes swapdims t adjoint movedim
moveaxis
cat concat concatenate stack hstack vstack dstack column_stack split tensor_split chunk unbind
expand expand_as broadcast_to broadcast_tensors broadcast_shapes repeat tile repeat_interleave flip fliplr flipud
roll rot90
gather scatter scatter_add scatter_reduce index_select index_add index_copy index_fill index_put masked_fill
masked_scatter masked_select take take_along_dim put
narrow select tril triu tril_indices triu_indices diag diag_embed diagonal diagflat meshgrid nonzero argwhere clone
contiguous as_strided unfold
"""
PRODUCTS = """
matmul mm bmm mv dot vdot inner outer ger addmm addmv addbmm baddbmm einsum tensordot kron cross trace cdist
chain_matmul
"""
LINALG = """
norm vector_norm matrix_norm inv pinv det slogdet solve lstsq cholesky qr svd svdvals eig eigh eigvalsh matrix_rank
matrix_power matrix_exp multi_dot cross vecdot diagonal
"""
SPECIAL = """
expit logit erf erfc erfinv gammaln digamma psi polygamma xlogy xlog1py entr sinc softmax log_softmax logsumexp
i0 i0e i1 i1e ndtr ndtri log_ndtr round
"""
TYPES_AND_UTILITIES = """
to type type_as float double half long int short bool byte char is_floating_point is_complex is_tensor is_nonzero
numel get_default_dtype set_default_dtype promote_types result_type can_cast finfo iinfo item tolist numpy
"""
TENSOR_ONLY = "apply_ map_ new_tensor new_zeros new_ones new_full new_empty"
"""Tensor methods the list names on their own (they have no function)."""

TOP_LEVEL = (CREATION + POINTWISE + COMPARISON + REDUCTIONS + SHAPE_AND_INDEXING + PRODUCTS
             + TYPES_AND_UTILITIES).split()
"""Names of ``ember``'s namespace (as in torch, a few of them, like ``unfold`` and ``to``, are Tensor methods
only: where torch has no function of the name, the method is what counts)."""
