"""What PyTorch, NumPy and Python calls do to the facts we track.

Tables here are the single place where the analysis knows library behaviour;
the interpreter walks the code, these functions say what each call returns.
"""

from __future__ import annotations

import re

from . import numpy_sinks
from .placement import on_the_cpu
from .values import DTYPES, EMPTY, TENSOR_FLOW, Flag, Value, passed_device

# Custom autograd functions (torch 2.13: `torch.autograd.Function`, exported from
# `torch.autograd.function`). Autograd runs their `forward` with grad off and their `backward` with
# grad set to `create_graph`; the first parameter of each is the context, whose `saved_tensors`
# (`saved_variables` in old code) are the tensors `save_for_backward` kept; `backward` gets one
# gradient tensor per output. Checked: tests/test_autograd_functions.py.
AUTOGRAD_FUNCTION_BASES = frozenset({
    "torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction",
})
AUTOGRAD_FUNCTION_METHODS = frozenset({"forward", "backward", "setup_context", "jvp", "vjp"})
AUTOGRAD_SAVED = frozenset({"saved_tensors", "saved_variables"})
GRAD_CONTEXT_DISABLE = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})
INFERENCE_MODE = frozenset({"torch.inference_mode", "torch.autograd.grad_mode.inference_mode"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})

# torch.* factories: a fresh tensor whose requires_grad/device come from keywords.
FACTORIES = frozenset(
    """tensor as_tensor asarray zeros ones empty full rand randn randint randperm arange range
    linspace logspace eye zeros_like ones_like empty_like full_like rand_like randn_like
    randint_like normal bernoulli multinomial poisson Tensor FloatTensor DoubleTensor
    LongTensor IntTensor BoolTensor HalfTensor ByteTensor complex polar tril_indices
    triu_indices empty_strided sparse_coo_tensor sparse_csr_tensor make_tensor Variable""".split()
)
# Backward hooks: methods that register a function the autograd engine calls during a backward
# pass, and what it passes (checked on torch 2.13). The engine runs hooks with grad mode set to
# `create_graph` (off unless a higher-order graph is built), so a gradient it passes has no grad:
# "gradient" is a gradient of the receiver (its device and dtype), "gradients" a tuple of them,
# "module" the module the hook is registered on, "itself" the receiver (a parameter whose .grad
# was just accumulated: it still requires grad). A function passed here is judged by this call,
# not as a callback with unknown callers.
BACKWARD_HOOKS: dict[str, tuple[str, ...]] = {
    "register_hook": ("gradient",),  # Tensor.register_hook(fn): fn(grad)
    "register_post_accumulate_grad_hook": ("itself",),  # fn(param)
    "register_full_backward_hook": ("module", "gradients", "gradients"),  # fn(module, grad_in, grad_out)
    "register_backward_hook": ("module", "gradients", "gradients"),
    "register_full_backward_pre_hook": ("module", "gradients"),  # fn(module, grad_out)
}
# Forward hooks: the module's `__call__` calls them around `forward`, in the grad mode of that
# call, with the positional inputs as a tuple ("inputs") and what `forward` returned ("output"),
# tensors on the module's device (torch 2.13, `with_kwargs=False`). Whether they require grad
# depends on the grad mode of the model's calls and on the layers before, as for a parameter
# whose callers are not known.
FORWARD_HOOKS: dict[str, tuple[str, ...]] = {
    "register_forward_pre_hook": ("module", "inputs"),  # fn(module, args)
    "register_forward_hook": ("module", "inputs", "output"),  # fn(module, args, output)
}

# torch.nn modules with no parameters: their output requires grad only if an input does, and
# has their input's dtype (the inputs' promoted, for a loss of two tensors): a bfloat16 input
# gives a bfloat16 output, a float64 one a float64 output (each checked on torch 2.13, CPU, by
# scripts/check_dtype_facts.py).
PARAMETER_FREE_MODULES = frozenset(
    """L1Loss MSELoss CrossEntropyLoss NLLLoss SmoothL1Loss HuberLoss KLDivLoss BCEWithLogitsLoss BCELoss
    SoftMarginLoss ReLU ReLU6 LeakyReLU ELU SELU CELU GELU SiLU Mish Tanh Sigmoid Softmax LogSoftmax
    Softplus Softsign Hardswish Hardsigmoid Hardtanh Tanhshrink Dropout Dropout2d AlphaDropout Identity
    Flatten MaxPool2d AvgPool2d AdaptiveAvgPool2d AdaptiveMaxPool2d MaxPool1d AvgPool1d AdaptiveAvgPool1d
    AdaptiveMaxPool1d MaxPool3d AdaptiveAvgPool3d AdaptiveMaxPool3d LPPool1d LPPool2d ZeroPad1d ZeroPad2d
    ZeroPad3d ReflectionPad1d ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d
    ReplicationPad3d ConstantPad1d ConstantPad2d ConstantPad3d CircularPad1d CircularPad2d CircularPad3d
    Softmin LogSigmoid Hardshrink Softshrink GLU RReLU Softmax2d Threshold Upsample UpsamplingNearest2d
    UpsamplingBilinear2d PixelShuffle PixelUnshuffle ChannelShuffle Dropout1d Dropout3d FeatureAlphaDropout""".split()
)
# Results that never require grad (integer or boolean tensors, and `histc`'s counts).
NO_GRAD_RESULTS = frozenset(
    """argmax argmin argsort eq ne gt lt ge le greater less equal not_equal isnan isinf
    isfinite isclose nonzero bincount searchsorted bucketize long int bool byte short char
    any all logical_and logical_or logical_not logical_xor count_nonzero histc""".split()
)  # each checked on torch 2.13 by tests/test_tensor_methods.py (`unique` of a float tensor does require grad)
# Tensor methods whose arguments are sizes, dimensions, shapes or integer indices, never values
# that flow into the result: `buf.view(B, T)` of an int64 tensor is int64 and requires grad only
# if `buf` does, whatever `B` is (`gather`/`index_select` take an index tensor: no grad through it).
SHAPE_ARGUMENT_METHODS = frozenset(
    """view reshape expand repeat permute transpose swapaxes swapdims squeeze unsqueeze flatten
    unflatten narrow select movedim moveaxis roll flip fliplr flipud rot90 tile chunk split
    tensor_split unbind t contiguous unfold diagonal triu tril index_select gather masked_select
    repeat_interleave""".split()
)
# Keyword parameters of torch functions that take sizes, counts, flags or names, never a tensor
# whose grad or device flows into the result: `F.one_hot(t, num_classes=model.n_classes)` is as
# `t` is, whatever the attribute read for the count is taken to be.
SCALAR_KEYWORDS = frozenset(
    """dim dims num_classes keepdim dtype size mode p eps reduction ignore_index label_smoothing k
    largest sorted align_corners scale_factor padding stride kernel_size dilation groups diagonal
    descending stable num_samples replacement correction unbiased decimals chunks sections
    split_size_or_sections repeats output_size inplace negative_slope approximate start_dim
    end_dim layout pin_memory memory_format generator""".split()
)
# Reductions that return (values, indices) when given a dimension.
VALUES_INDICES = frozenset({"max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin"})
# Methods and attributes whose result is a plain Python object, not a tensor.
NON_TENSOR_METHODS = frozenset(
    """item tolist size dim numel nelement element_size data_ptr is_contiguous stride
    storage_offset get_device is_floating_point is_complex equal allclose backward
    register_hook type_as_str __len__ __repr__ __str__ __format__ untyped_storage""".split()
)
NON_TENSOR_ATTRIBUTES = frozenset(
    """shape dtype ndim requires_grad is_cuda is_leaf grad_fn names layout is_sparse
    is_quantized is_meta output_nr _version""".split()
)
SHAPE_PRESERVING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# Module methods that return the module itself (and move it when they move devices).
MODULE_SELF_METHODS = frozenset(
    """to cuda cpu half float double bfloat16 train eval requires_grad_ type share_memory
    apply xpu mps""".split()
)
MODULE_NON_OUTPUT_METHODS = frozenset(
    """zero_grad load_state_dict register_buffer register_parameter register_module add_module
    register_forward_hook register_forward_pre_hook register_full_backward_hook
    register_backward_hook named_modules named_children extra_repr __repr__ state_dict
    get_submodule get_parameter get_buffer""".split()
)
# Method names too common to tell a project class's method from a library object's where the
# receiver's class is unknown (`optimizer.step()`, `logging.info(...)`, `writer.add_scalar(...)`):
# besides tensors', modules' and Python's builtin types' methods (analysis/project.py).
COMMON_METHOD_NAMES = frozenset(
    """step zero_grad backward forward train eval update add append extend insert pop remove
    clear copy get set put keys values items log info debug warning warn error critical exception
    write read readline close open flush run start stop join reset fit predict predict_proba
    transform fit_transform inverse_transform score sample save load dump dumps loads plot show
    savefig add_scalar add_scalars add_image add_images add_histogram add_figure add_text
    add_graph parse_args add_argument format encode decode split strip replace lower upper
    send recv submit result cuda cpu to item numpy tolist apply call build setup teardown
    init initialize next""".split()
)
# Classes under torch.nn that are not modules.
NN_NON_MODULE_CLASSES = frozenset({"Parameter", "UninitializedParameter", "PackedSequence", "Buffer"})
PACKED_SEQUENCE_FUNCTIONS = frozenset({"pack_padded_sequence", "pack_sequence", "PackedSequence"})
# Libraries whose model constructors return nn.Modules: the documented API of torchvision
# (`torchvision.models.resnet18(...)`) and timm (`timm.create_model(...)`), neither installed here;
# `torch.hub.load` checked on torch 2.13 (it returns what the hub entry point builds, a model).
MODEL_FACTORIES = ("torchvision.models.", "timm.create_model", "torch.hub.load")
# Modules whose every public member a computed name may pick (`getattr(models, args.arch)`)
# builds an nn.Module: torch.nn's layer classes, torchvision's model builders.
MODULE_NAMESPACES = frozenset({"torch.nn", "torchvision.models"})
# torchvision's detection models (Faster/Mask/Keypoint R-CNN, RetinaNet, FCOS, SSD) return, in eval
# mode, one dict per image; these keys hold int64 tensors, which cannot require grad (torch refuses
# requires_grad on integer dtypes): `pred[0]["labels"].cpu().numpy()` is safe where `["boxes"]` is
# not. Read in torchvision 0.28.0's source (roi_heads.py: `torch.arange`; retinanet.py, fcos.py:
# `topk_idxs % num_classes`; ssd.py: `full_like(..., dtype=torch.int64)`) and its documented
# output (`labels (Int64Tensor[N])`); not run: no torchvision build here matches the local torch.
DETECTION_MODELS = "torchvision.models.detection."
DETECTION_INTEGER_KEYS = frozenset({repr("labels")})  # as constant_key spells a key
# Loaders whose result is a whole model (an nn.Module or a ScriptModule, called like one). Checked
# on torch 2.13: `torch.load` of a pickled module gives that module (weights_only=False), and of a
# state dict a dict, which is never called as a model; `torch.jit.load` gives a
# RecursiveScriptModule (an nn.Module subclass), whose outputs require grad when its parameters do.
MODEL_LOADERS = frozenset({"torch.jit.load", "torch.hub.load"})
# `torch.load` gives whatever was pickled: a whole model, but more often a checkpoint dict, a state
# dict or tensors of results (DETR's plot_utils reads eval arrays with it). Its result is a model
# only where the file calls it as one (Flag.MODULE_HINT): indexing it is not reading a module.
CHECKPOINT_LOADERS = frozenset({"torch.load", "torch.serialization.load"})
# `<Class>.from_pretrained(...)`: the documented API of transformers, diffusers and
# timm/torchvision-style libraries (not installed here); tokenizers and configs share the name, so
# the class's own name decides (see pretrained_gives_model).
PRETRAINED_LOADERS = frozenset({"from_pretrained"})
# Library modules that hold no parameter (buffers at most): their output requires grad only
# through their input. torchaudio's transforms, read in torchaudio 2.11.0's source
# (`transforms/_transforms.py`, `_multi_channel.py`: `register_buffer` only; not run: no
# torchaudio build here matches the local torch); PitchShift is left out (a lazy kernel
# parameter).
PARAMETER_FREE_LIBRARY_MODULES = frozenset(
    f"torchaudio.transforms.{name}" for name in """AddNoise AmplitudeToDB ComputeDeltas Convolve Deemphasis
    Fade FFTConvolve FrequencyMasking GriffinLim InverseMelScale InverseSpectrogram LFCC Loudness MFCC MVDR
    MelScale MelSpectrogram MuLawDecoding MuLawEncoding PSD Preemphasis RNNTLoss RTFMVDR Resample
    SlidingWindowCmn SoudenMVDR SpecAugment SpectralCentroid Spectrogram Speed SpeedPerturbation
    TimeMasking TimeStretch Vad Vol""".split()
)
PRETRAINED_NON_MODELS = ("Tokenizer", "Processor", "Config", "FeatureExtractor", "ImageProcessor", "Scheduler")


def pretrained_gives_model(qualified: str) -> bool:
    """`AutoModel.from_pretrained`, `BertModel.from_pretrained`; not `AutoTokenizer.from_pretrained`."""
    owner, _, last = qualified.rpartition(".")
    return last in PRETRAINED_LOADERS and bool(owner) and not owner.rsplit(".", 1)[-1].endswith(PRETRAINED_NON_MODELS)


def is_optimizer_class(qualified: str | None) -> bool:
    """`torch.optim.Adam`, `torch.optim.optimizer.Optimizer`: a class whose instances keep the
    parameters they were given in `param_groups` (not `torch.optim.lr_scheduler.*`, `swa_utils.*`)."""
    if qualified is None or not qualified.startswith("torch.optim.") or ".lr_scheduler." in qualified:
        return False
    owner, _, last = qualified.rpartition(".")
    return last[:1].isupper() and owner in ("torch.optim", "torch.optim.optimizer") or (
        owner.startswith("torch.optim.") and owner.rsplit(".", 1)[-1] == last.lower())


# The standard library's random draws from a sequence: one element (`random.choice(pairs)`), or a
# list of them (`random.sample(pairs, k)`, `random.choices(pairs, k=k)`), by the sequence's
# parameter name (Python 3.11).
ELEMENT_DRAWS = {"random.choice": ("seq", False), "random.sample": ("population", True),
                 "random.choices": ("population", True), "secrets.choice": ("seq", False)}

PASSTHROUGH_FUNCTIONS = frozenset({"torch.compile", "torch.jit.script", "torch.jit.trace", "copy.deepcopy", "copy.copy"}) | {
    # Reparametrisations return the module they were given, with new parameters (`weight_g`,
    # `weight_v`, `weight_orig`, `parametrizations.weight.original`): checked on torch 2.13.
    f"torch.nn.utils.{name}" for name in (
        "weight_norm", "spectral_norm", "parametrizations.weight_norm", "parametrizations.spectral_norm",
        "parametrizations.orthogonal", "parametrize.register_parametrization")
}

_DEVICE_NAME = re.compile(r"(?:^|_)(?:dev|device|devices)(?:$|_)", re.IGNORECASE)
_GPU_STRING = re.compile(r"^(?:cuda|mps|xpu|hpu|xla|meta|privateuseone|mtia)(?::\d+)?$")


def is_device_name(identifier: str) -> bool:
    """`device`, `DEVICE`, `dev`, `train_device`: conventional names of a device variable."""
    return bool(_DEVICE_NAME.search(identifier))


def string_device(text: str) -> Value:
    """The device a string literal names, if it names one."""
    text = text.strip()
    if text == "cpu" or text.startswith("cpu:"):
        return Value(Flag.CPU_SPEC)
    if _GPU_STRING.match(text):
        return Value(Flag.DEVICE_SPEC)
    return EMPTY


def device_move(target: Value, current: Value) -> Value:
    """The flags after ``current.to(target)`` (or a ``device=`` keyword)."""
    if target.has(Flag.DEVICE_SPEC) or target.has(Flag.DEVICE) and target.is_tensor_like:
        moved = current.moved_to_device()
        # `.to(device)` under `if use_gpu:` with `device` itself flag-dependent keeps the flag.
        return moved if target.device_if is None or not target.has(Flag.DEVICE) else moved.guarded_by(target.device_if)
    if target.has(Flag.CPU_SPEC):
        return on_the_cpu(current)
    if target.flags & ~DTYPES or not target.flags:
        # A place the file cannot read (`.to(device)` of a parameter), or another tensor's (`.to(t)`):
        # wherever it is, it may not be the CPU.
        return current.with_flags(remove=Flag.ON_CPU)
    return current  # a dtype (`.to(torch.float64)`): the same device


# Base classes of other libraries that subclass torch.nn.Module and hold no parameters of their
# own, under every name their packages export them by: a class deriving from one is a model.
# Each checked (issubclass, and no parameter on an instance where one can be made) by
# scripts/check_module_bases.py on pytorch_lightning and lightning 2.6.6, transformers 5.24.0 and
# diffusers 0.42.1.
LIBRARY_MODULE_BASES = frozenset({
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule",
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule",
    "transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel",
    "diffusers.ModelMixin", "diffusers.models.ModelMixin", "diffusers.models.modeling_utils.ModelMixin",
})


def is_nn_module_class(qualified: str, private: bool = False) -> bool:
    """`torch.nn.Linear`, `torch.nn.modules.conv.Conv2d`: a torch.nn class that is a Module; and
    the base classes of LIBRARY_MODULE_BASES (`pl.LightningModule`).

    With `private`, also torch's own base classes such as `_BatchNorm` and `_ConvNd`.
    """
    if not qualified.startswith("torch.nn."):
        return qualified in LIBRARY_MODULE_BASES
    last = qualified.rsplit(".", 1)[-1]
    if private:
        last = last.lstrip("_")
    return last[:1].isupper() and last not in NN_NON_MODULE_CLASSES


def integer_result(value: Value) -> Value:
    """An integer/bool tensor derived from ``value``: same device, never requires grad."""
    if not value.flags & TENSOR_FLOW:
        return EMPTY
    return Value(Flag.TENSOR | passed_device(value)).with_device_of(value)


def values_indices(value: Value) -> Value:
    part = value.tensor_part()
    return Value(part.flags, items=(part, integer_result(value)), origin=part.origin)


# NumPy functions that convert a tensor argument through `Tensor.__array__` (so `.numpy()`), which
# of them give a tensor back for a tensor without grad (NumPy's `__array_wrap__`: a fix keeps the
# tensor, `np.exp(x.detach())`), whose result may share the argument's memory (a fix must copy),
# and which convert only a list of tensors (`np.sum(t)` calls `Tensor.sum(axis=...)` and fails
# otherwise for any tensor): measured on every public NumPy function by
# scripts/check_numpy_sinks.py, which writes numpy_sinks.py.
NUMPY_CONVERTING = numpy_sinks.CONVERTING
NUMPY_TENSOR_RESULTS = numpy_sinks.TENSOR_RESULTS
NUMPY_SHARING_CONVERTERS = numpy_sinks.SHARING
NUMPY_REDUCTIONS = numpy_sinks.REDUCTIONS
# Converted only where the argument is a 0-dim tensor (`np.arange(lo, hi)` of reductions' results).
NUMPY_SCALAR_CONVERTING = numpy_sinks.SCALAR_CONVERTING
NUMPY_SCALAR_ITEM_SAME = numpy_sinks.SCALAR_ITEM_SAME  # of those, `.item()` gives the same result
# Plotting functions of matplotlib.pyplot, and the same methods on an Axes.
PLOTTING = frozenset(
    """plot scatter imshow hist hist2d bar barh errorbar fill_between fill_betweenx step stem
    contour contourf pcolormesh pcolor matshow boxplot violinplot semilogx semilogy loglog
    stackplot hexbin quiver pie axhline axvline""".split()
)
# Methods that move a tensor to a device (`.to` only when its argument is a device).
DEVICE_MOVES = frozenset({"cpu", "cuda", "to"})
AXES_FACTORIES = frozenset({"gca", "subplot", "axes", "add_subplot", "add_axes", "twinx", "twiny"})
PANDAS_CONVERTING = frozenset({"pandas.DataFrame", "pandas.Series"})


# scikit-learn metrics that call `np.asarray` (through `check_array`/`column_or_1d`) on their
# arguments: each raised the requires-grad RuntimeError for a tensor that requires grad on
# scikit-learn 1.9.1 / torch 2.13 (scripts/check_sink_facts.py). `train_test_split` does not
# convert (it indexes), so it is not here.
SKLEARN_METRICS = frozenset(
    """roc_auc_score average_precision_score log_loss brier_score_loss mean_squared_error
    mean_absolute_error r2_score explained_variance_score precision_recall_curve roc_curve
    accuracy_score confusion_matrix f1_score precision_score recall_score classification_report
    balanced_accuracy_score matthews_corrcoef cohen_kappa_score jaccard_score hamming_loss
    zero_one_loss silhouette_score""".split()
)
# Methods of a scikit-learn estimator (an instance of a class under `sklearn.`) that validate
# their arguments with `check_array`: the same RuntimeError, checked on LogisticRegression,
# LinearRegression, KMeans, PCA, TSNE and StandardScaler (scikit-learn 1.9.1).
SKLEARN_CONVERTING_METHODS = frozenset(
    {"fit", "predict", "predict_proba", "score", "fit_predict", "fit_transform", "transform"}
)
# seaborn functions whose data arguments go through `np.asarray` / pandas: the same RuntimeError
# on seaborn 0.13.2 / pandas 3.1.1 (`regplot` fails on a tensor with an unrelated IndexError).
SEABORN_PLOTTING = frozenset(
    """lineplot scatterplot histplot kdeplot barplot boxplot violinplot ecdfplot stripplot displot
    relplot heatmap clustermap""".split()
)
# Not sinks, though they take arrays: `PIL.Image.fromarray` reads `__array_interface__`, which a
# tensor lacks (AttributeError for every tensor, Pillow 13.0.0), and OpenCV's functions reject any
# tensor in overload resolution (cv2.error, opencv-python-headless 5.0.0): neither calls
# `Tensor.__array__`, so neither fails as DET106 says.


def converting_kind(qualified: str) -> str | None:
    """'convert', 'reduce' (a list of tensors only) or 'scalar' (a 0-dim tensor only) for a library
    function that turns a tensor into an ndarray."""
    if qualified.startswith("numpy."):
        name = qualified[len("numpy."):]
        if name in NUMPY_CONVERTING:
            return "convert"
        if name in NUMPY_REDUCTIONS:
            return "reduce"
        if name in NUMPY_SCALAR_CONVERTING:
            return "scalar"
        return None
    if qualified.startswith("matplotlib.pyplot.") and qualified.rsplit(".", 1)[-1] in PLOTTING:
        return "convert"
    if qualified in PANDAS_CONVERTING:
        return "convert"
    if qualified.startswith("sklearn.metrics.") and qualified.rsplit(".", 1)[-1] in SKLEARN_METRICS:
        return "convert"
    if qualified.startswith("seaborn.") and qualified.rsplit(".", 1)[-1] in SEABORN_PLOTTING:
        return "convert"
    return None

# Classes whose instances are tensors (an isinstance check against anything else is evidence
# that the value is not one).
TENSOR_CLASSES = frozenset({"Tensor", "Parameter", "UninitializedParameter", "Buffer", "FloatTensor",
                            "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor", "HalfTensor",
                            "ByteTensor", "Variable", "DTensor", "FakeTensor", "FunctionalTensor"})

# Decorators that make a method a property: reading the attribute runs it (the libcst walk's
# syntax.is_property and the project summaries' _is_property read the same table).
PROPERTY_DECORATORS = frozenset({"property", "functools.cached_property", "cached_property"})

# Tensor classes whose instances require grad unless told otherwise.
PARAMETER_CLASSES = frozenset({"Parameter", "UninitializedParameter"})

# Methods of a tensor that code does not call on an nn.Module: on `model.fc.weight`
# (a submodule or a parameter, as far as the file shows) they settle it as a parameter. NumPy
# arrays have many of them too; the methods no object but a tensor has are uses.TENSOR_ONLY_RESULTS
# and uses.TENSOR_ONLY_USES.
TENSOR_NOT_MODULE_METHODS = NON_TENSOR_METHODS | NO_GRAD_RESULTS | frozenset(
    """detach detach_ numpy clone contiguous view view_as reshape t transpose permute squeeze
    unsqueeze flatten sum mean norm abs exp log sigmoid tanh""".split()
)
# Of those, the ones no nn.Module has either (a module has `.float()`, `.cpu()`, `.to()`): called on
# a value taken for a module, they show it is a tensor.
NO_MODULE_METHODS = TENSOR_NOT_MODULE_METHODS - MODULE_SELF_METHODS

# In-place methods of ndarrays (tensors spell theirs with a trailing underscore).
NDARRAY_IN_PLACE = frozenset({"fill", "sort", "put", "partition", "resize", "itemset", "setfield"})


def writes_in_place(method: str) -> bool:
    """`t.add_(1)`, `a.fill(0)`: the method writes into its receiver."""
    return method in NDARRAY_IN_PLACE or (method.endswith("_") and not method.startswith("_"))


# Calls whose result says whether a GPU is there: a name bound to one is a device flag.
GPU_AVAILABILITY = frozenset({"torch.cuda.is_available", "torch.backends.mps.is_available",
                              "torch.xpu.is_available", "torch.mps.is_available"})


def uses_gpu_comparison(equal: bool | None, left: Value, right: Value) -> bool:
    """`DEVICE != "cpu"` or `device == "cuda"`: a comparison that is true where a GPU is used.

    `equal` is True for `==`/`is`, False for `!=`/`is not`, None for any other operator.
    """
    if equal is None:
        return False
    sides = left.flags | right.flags
    if not sides & (Flag.DEVICE_SPEC | Flag.CPU_SPEC):
        return False
    names_cpu = bool(left.flags & Flag.CPU_SPEC and not left.flags & Flag.DEVICE_SPEC
                     or right.flags & Flag.CPU_SPEC and not right.flags & Flag.DEVICE_SPEC)
    return names_cpu != equal


# Methods only an nn.Module has: a parameter of unknown origin given one of them is a module.
MODULE_ONLY_METHODS = frozenset(
    """eval parameters named_parameters modules named_modules children named_children buffers
    named_buffers register_forward_hook register_forward_pre_hook register_full_backward_hook
    get_submodule""".split()
)
# Methods a module shares with trainers and optimizers: evidence only together with a call.
MODULE_LIKE_METHODS = frozenset({"train", "zero_grad", "state_dict", "load_state_dict"})
# Iterating one of these yields batches: tensors that do not require grad (and live on the CPU).
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# Captum's attribution methods whose `.attribute(...)` result requires grad (captum 0.9.0, torch
# 2.13, checked with a linear and a convolutional model): "always" (the result multiplies gradients
# by the input or a layer's activation, which captum makes require grad), "input" (only when the
# input requires grad). The others (Saliency, GradientShap, Occlusion, NoiseTunnel, the ablations,
# LayerIntegratedGradients, ...) give tensors without grad, and none does under torch.no_grad().
CAPTUM_GRAD_ATTRIBUTIONS: dict[str, str] = {
    "IntegratedGradients": "input", "DeepLift": "always", "DeepLiftShap": "always", "InputXGradient": "always",
    "LayerConductance": "always", "LayerGradCam": "always", "LayerDeepLift": "always",
    "LayerGradientXActivation": "always",
}
# Progress bars that yield the elements of the iterable they wrap, unchanged (tqdm 4.70.1:
# `tqdm(iterable)` iterates `iterable`; each front re-exports the same class).
ITERABLE_WRAPPERS = frozenset({"tqdm.tqdm", "tqdm.std.tqdm", "tqdm.auto.tqdm", "tqdm.autonotebook.tqdm",
                               "tqdm.notebook.tqdm", "tqdm.rich.tqdm", "tqdm.asyncio.tqdm"})
# Views of a dataset whose items are the dataset's own (torch 2.13): a `Subset`, and the list of
# them `random_split` returns.
DATASET_SUBSETS = frozenset({"torch.utils.data.Subset", "torch.utils.data.dataset.Subset"})
DATASET_SPLITS = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})
# Datasets whose items are the tensors they were given, one row each (torch 2.13).
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})

# `<project class>.load_from_checkpoint(path)`: classmethods that libraries (Lightning, transformers,
# diffusers) give a model class, returning an instance of the class they are called on.
ALTERNATE_CONSTRUCTORS = frozenset({"load_from_checkpoint", "from_pretrained", "from_config"})

# Buffers of torch.nn's normalisation layers: tensors a module holds that never require grad.
MODULE_BUFFERS = frozenset({"running_mean", "running_var", "num_batches_tracked"})
# A module's attributes that are neither parameters nor submodules: nn.Module's and PyTorch
# Lightning's LightningModule's properties (read in lightning 2.6.6's core/module.py and
# mixins/hparams_mixin.py): `self.hparams.warmup` is a hyperparameter, not a parameter's field.
NON_PARAMETER_MODULE_ATTRIBUTES = frozenset(
    """training device dtype hparams hparams_initial trainer fabric current_epoch global_step
    global_rank local_rank on_gpu automatic_optimization strict_loading logger loggers""".split()
)

# Attributes that hold a module's parameters: on a value of unknown origin, as unknown as it is.
PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})
# Containers whose members are named "0", "1", ...: `layers.weight` raises AttributeError (torch
# 2.13; a ModuleDict or a Sequential built from names may hold a member called so).
INDEX_NAMED_CONTAINERS = frozenset({"ModuleList", "ParameterList"})
