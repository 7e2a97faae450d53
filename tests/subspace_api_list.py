"""The public names of torch's sub-namespaces that ember has, as ``bench/api_coverage.py`` counts them (what
a module makes, not what it imports): ``tests/test_api_coverage.py`` fails if one of them goes missing.

Each entry is a dotted path below ``torch``/``ember`` and the names, space-separated.
"""

SUBSPACES = {
    "cpu": (
        "Event Stream StreamContext current_device current_stream device_count get_capabilities is_available "
        "is_initialized set_device stream synchronize"
    ),
    "autograd": (
        "DeviceType Function NestedIOFunction ProfilerActivity ProfilerConfig ProfilerEvent ProfilerState "
        "SavedTensor Variable backward detect_anomaly enable_grad "
        "enforce_grad_layout_policy grad gradcheck gradgradcheck has_torch_function inference_mode "
        "is_multithreading_enabled is_view_replay_enabled kineto_available no_grad set_detect_anomaly "
        "set_grad_enabled set_multithreading_enabled variable"
    ),
    "autograd.graph": (
        "GradientEdge Node allow_mutation_on_saved_tensors disable_saved_tensors_hooks get_gradient_edge "
        "increment_version region_activation_memory_budget register_multi_grad_hook save_on_cpu "
        "saved_tensors_hooks set_override_stale_capture_stream set_warn_on_accumulate_grad_stream_mismatch"
    ),
    "autograd.functional": "hessian hvp jacobian jvp vhp vjp",
    "autograd.forward_ad": "UnpackedDualTensor dual_level enter_dual_level exit_dual_level make_dual unpack_dual",
    "library": (
        "Library custom_op define fallthrough_kernel get_ctx get_kernel impl impl_abstract infer_schema "
        "opcheck register_autocast register_autograd register_fake register_kernel register_torch_dispatch "
        "register_vmap triton_op wrap_triton"
    ),
    "sparse": (
        "BFloat16Tensor ByteTensor CharTensor DoubleTensor FloatTensor HalfTensor IntTensor LongTensor "
        "ShortTensor SparseSemiStructuredTensor SparseSemiStructuredTensorCUSPARSELT "
        "SparseSemiStructuredTensorCUTLASS addmm as_sparse_gradcheck check_sparse_tensor_invariants "
        "log_softmax mm sampled_addmm softmax spdiags spsolve sum to_sparse_semi_structured"
    ),
    "nn.init": (
        "calculate_gain constant constant_ dirac dirac_ eye eye_ kaiming_normal kaiming_normal_ "
        "kaiming_uniform kaiming_uniform_ normal normal_ ones_ orthogonal orthogonal_ sparse sparse_ "
        "trunc_normal_ uniform uniform_ xavier_normal xavier_normal_ xavier_uniform xavier_uniform_ zeros_"
    ),
    "nn.utils": (
        "clip_grad_norm clip_grad_norm_ clip_grad_value_ clip_grads_with_norm_ "
        "convert_conv2d_weight_memory_format convert_conv3d_weight_memory_format fuse_conv_bn_eval "
        "fuse_conv_bn_weights fuse_linear_bn_eval fuse_linear_bn_weights get_total_norm parameters_to_vector "
        "remove_spectral_norm remove_weight_norm skip_init spectral_norm vector_to_parameters weight_norm"
    ),
    "nn.utils.rnn": (
        "PackedSequence PackedSequence_ bind invert_permutation pack_padded_sequence pack_sequence "
        "pad_packed_sequence pad_sequence unpack_sequence unpad_sequence"
    ),
    "optim": (
        "ASGD Adadelta Adafactor Adagrad Adam AdamW Adamax LBFGS Muon NAdam Optimizer RAdam RMSprop Rprop SGD "
        "SparseAdam swap_in_optimizer_params_and_state"
    ),
    "optim.lr_scheduler": (
        "ChainedScheduler ConstantLR CosineAnnealingLR CosineAnnealingWarmRestarts CyclicLR ExponentialLR "
        "LRScheduler LambdaLR LinearLR MultiStepLR MultiplicativeLR OneCycleLR PolynomialLR ReduceLROnPlateau "
        "SequentialLR StepLR"
    ),
    "utils.data": (
        "BatchSampler ChainDataset ConcatDataset DataLoader Dataset DistributedSampler IterableDataset "
        "RandomSampler Sampler SequentialSampler StackDataset Subset SubsetRandomSampler TensorDataset "
        "WeightedRandomSampler default_collate default_convert get_worker_info random_split"
    ),
    "utils.checkpoint": (
        "CheckpointError CheckpointFunction CheckpointPolicy DefaultDeviceType GraphExecGroup SavedTensor "
        "SelectiveCheckpointContext check_backward_validity checkpoint checkpoint_sequential "
        "create_selective_checkpoint_contexts detach_variable get_device_states noop_context_fn "
        "set_checkpoint_debug_enabled set_checkpoint_early_stop set_device_states"
    ),
    "distributions": (
        "AbsTransform AffineTransform Bernoulli Beta Binomial CatTransform Categorical Cauchy Chi2 "
        "ComposeTransform ContinuousBernoulli CorrCholeskyTransform CumulativeDistributionTransform Dirichlet "
        "Distribution ExpTransform Exponential ExponentialFamily FisherSnedecor Gamma GeneralizedPareto "
        "Geometric Gumbel HalfCauchy HalfNormal Independent IndependentTransform InverseGamma Kumaraswamy "
        "LKJCholesky Laplace LogNormal LogisticNormal LowRankMultivariateNormal LowerCholeskyTransform "
        "MixtureSameFamily Multinomial MultivariateNormal NegativeBinomial Normal OneHotCategorical "
        "OneHotCategoricalStraightThrough Pareto Poisson PositiveDefiniteTransform PowerTransform "
        "RelaxedBernoulli RelaxedOneHotCategorical ReshapeTransform SigmoidTransform SoftmaxTransform "
        "SoftplusTransform StackTransform StickBreakingTransform StudentT TanhTransform Transform "
        "TransformedDistribution Uniform VonMises Weibull Wishart biject_to identity_transform kl_divergence "
        "register_kl transform_to"
    ),
    "func": (
        "debug_unwrap functional_call functionalize grad grad_and_value hessian jacfwd jacrev jvp linearize "
        "rearrange replace_all_batch_norm_modules_ stack_module_state vjp vmap"
    ),
    "random": "fork_rng get_rng_state initial_seed manual_seed seed set_rng_state thread_safe_generator",
    "testing": "assert_allclose assert_close make_tensor",
    "overrides": (
        "BaseTorchFunctionMode TorchFunctionMode enable_reentrant_dispatch get_default_nowrap_functions "
        "get_ignored_functions get_overridable_functions get_testing_overrides handle_torch_function "
        "has_torch_function has_torch_function_unary has_torch_function_variadic is_tensor_like "
        "is_tensor_method_or_property redispatch_function resolve_name wrap_torch_function"
    ),
    "backends.cpu": "get_cpu_capability",
    "backends.mkl": "is_available verbose",
    "backends.mkldnn": "is_acl_available is_available",
    "backends.nnpack": "flags is_available set_flags",
    "backends.openmp": "is_available",
    "backends.opt_einsum": "flags get_opt_einsum is_available set_flags",
}
