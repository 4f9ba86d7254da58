"""The interpreter's inference steps that the fixtures show only as a whole: each step alone.

Helpers judged by their callers, device flags followed along both paths, duck-typed modules,
aliases through helpers and views. Each test pairs the case that must flag with the look-alike
that must not.
"""

from __future__ import annotations

import pytest
from running import failing_line

from flake8_detach import check_source
from flake8_detach.settings import Settings

# The opt-in codes too: a caller-dependent `.numpy()` is DET111 (DET101's claim about unseen callers).
PREVIEW = Settings(preview=True)


def lines(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in check_source(source, PREVIEW)]


HELPER = "import torch\n\n\ndef show(t):\n    return t.numpy()\n\n\n"


def test_helper_without_callers_is_caller_dependent_and_says_so() -> None:
    (diagnostic,) = check_source(HELPER, PREVIEW)
    assert (diagnostic.line, diagnostic.code) == (5, "DET111")
    assert "it depends on the caller" in diagnostic.message


def test_helper_is_judged_by_what_its_calls_pass() -> None:
    no_grad = HELPER + "with torch.no_grad():\n    out = torch.nn.Linear(2, 2)(torch.ones(2))\nshow(out)\nshow(torch.zeros(2))\n"
    assert lines(no_grad) == []
    grad = HELPER + "show(torch.nn.Linear(2, 2)(torch.ones(2)))\nshow(torch.zeros(2))\n"
    (diagnostic,) = check_source(grad)
    assert diagnostic.line == 5 and diagnostic.message.endswith("(the value is passed by the call on line 8)")


def test_helper_called_from_a_function_defined_later_waits_for_that_call() -> None:
    source = HELPER + "def main():\n    with torch.no_grad():\n        show(torch.nn.Linear(2, 2)(torch.ones(2)))\n"
    assert lines(source) == []


def test_helper_that_escapes_as_a_callback_stays_caller_dependent() -> None:
    source = HELPER + "show(torch.zeros(2))\nresults = list(map(show, [torch.zeros(2)]))\n"
    (diagnostic,) = check_source(source, PREVIEW)
    assert (diagnostic.line, diagnostic.code) == (5, "DET111")


def test_decorated_helper_and_star_call_are_caller_dependent() -> None:
    decorated = "import functools\nimport torch\n\n\n@functools.lru_cache\ndef show(t):\n    return t.numpy()\n\n\nshow(torch.zeros(2))\n"
    assert lines(decorated) == [(7, "DET111")]
    starred = HELPER + "args = [torch.zeros(2)]\nshow(*args)\n"
    assert lines(starred) == [(5, "DET111")]


def test_callable_parameter_is_as_unknown_as_the_parameter() -> None:
    source = "import torch\n\n\ndef apply(fn, x):\n    return fn(x).numpy()\n"
    (diagnostic,) = check_source(source, PREVIEW)
    assert (diagnostic.line, diagnostic.code) == (5, "DET111")
    called = source + "\n\napply(torch.sigmoid, torch.zeros(2))\n"
    assert lines(called) == []


GPU_FLAG = (
    "import torch\nuse_gpu = torch.cuda.is_available()\nnet, x = torch.nn.Linear(3, 2), torch.randn(4, 3)\n"
    "if use_gpu:\n    net.cuda(); x = x.cuda()\nwith torch.no_grad():\n    scores = net(x)\n"
)


def test_device_flag_correlates_the_move_and_the_conversion() -> None:
    assert lines(GPU_FLAG + "a = scores.numpy() if not use_gpu else scores.cpu().numpy()\n") == []
    assert lines(GPU_FLAG + "if use_gpu:\n    scores = scores.cpu()\nb = scores.numpy()\n") == []
    assert lines(GPU_FLAG + "c = scores.numpy()\n") == [(8, "DET104")]
    # The flag must be the same one: another test says nothing about where net went.
    assert lines(GPU_FLAG + "ready = True\nd = scores.numpy() if not ready else scores.cpu().numpy()\n") == [(9, "DET104")]


GAN_FLAG = (
    "import torch\nfrom torch import nn\n\n\nclass GAN:\n    def __init__(self, args):\n"
    "        self.gpu_mode = args.gpu_mode\n        self.G = nn.Linear(3, 3)\n        self.z = torch.rand(2, 3)\n"
    "        if self.gpu_mode:\n            self.G.cuda()\n            self.z = self.z.cuda()\n\n"
    "    def show(self):\n        with torch.no_grad():\n            samples = self.G(self.z)\n"
)


@pytest.mark.parametrize(("show", "flagged"), [
    ("        if self.gpu_mode:\n            return samples.cpu().numpy()\n        return samples.numpy()\n", False),
    ("        if not self.gpu_mode:\n            return samples.numpy()\n", False),
    ("        return samples.numpy()\n", True),
    ("        if self.gpu_mode:\n            return samples.numpy()\n", True),
    ("        if self.ready:\n            return samples.cpu().numpy()\n        return samples.numpy()\n", True),
])
def test_a_test_a_gpu_move_is_made_under_is_a_device_flag_whatever_its_name(show: str, flagged: bool) -> None:
    """`if self.gpu_mode: self.G.cuda()`: the test is a device flag by use, and what was moved
    under it (a field, a module moved in place) lives on the GPU only where it holds."""
    source = GAN_FLAG + show
    assert lines(source) == ([(source.count("\n"), "DET104")] if flagged else [])


def test_a_negated_device_flag_guards_what_its_false_branch_moves() -> None:
    source = ("import torch\nfrom torch import nn\n\n\ndef run(args, x):\n    net = nn.Linear(3, 3)\n"
              "    net = net.cuda() if not args.no_cuda else net\n    with torch.no_grad():\n"
              "        out = net(x)\n    if args.no_cuda:\n        print(out.numpy())\n"
              "    print(out.numpy())\n")
    assert lines(source) == [(12, "DET104")]


def test_flag_names_and_comparisons_are_device_flags() -> None:
    for flag in ("args.cuda", "train_on_gpu", 'DEVICE != "cpu"'):
        source = (
            f"import torch\nflag = {flag}\nx = torch.zeros(2)\nif flag:\n    x = x.cuda()\n"
            "y = x.numpy() if not flag else x.cpu().numpy()\n"
        ) if flag.startswith("DEVICE") else (
            f"import torch\nx = torch.zeros(2)\nif {flag}:\n    x = x.cuda()\n"
            f"y = x.numpy() if not {flag} else x.cpu().numpy()\n"
        )
        assert lines(source) == [], flag
    # `DEVICE == "cpu"` is true where no GPU is used: the flag's sense is what its branches say.
    # Moved where `on_cpu` is false, `x` is on the CPU where it is true, and on the GPU where not.
    negative = (
        'import torch\non_cpu = DEVICE == "cpu"\nx = torch.zeros(2)\nif on_cpu:\n    pass\nelse:\n'
        "    x = x.cuda()\ny = x.numpy() if on_cpu else x.cpu().numpy()\n"
    )
    assert lines(negative) == []
    assert lines(negative.replace("if on_cpu else", "if not on_cpu else")) == [(8, "DET104")]


def test_tensor_device_tests_refine_the_tested_tensor() -> None:
    source = "import torch\nx = torch.zeros(2).cuda()\n"
    assert lines(source + "a = x.cpu().numpy() if x.is_cuda else x.numpy()\n") == []
    assert lines(source + 'if x.device.type == "cpu":\n    b = x.numpy()\n') == []
    assert lines(source + "if x.is_cuda:\n    c = x.numpy()\n") == [(4, "DET104")]


def test_requires_grad_guard_in_an_expression() -> None:
    source = "import torch\nout = torch.nn.Linear(2, 2)(torch.ones(2))\n"
    assert lines(source + "a = out.detach().numpy() if out.requires_grad else out.numpy()\n") == []
    assert lines(source + "b = out.numpy() if out.requires_grad else out.detach().numpy()\n") == [(3, "DET101")]


def test_duck_typed_module_needs_module_only_methods_or_a_call() -> None:
    head = "import torch\n\n\ndef evaluate(model, x):\n"
    assert lines(head + "    model.eval()\n    return model(x).numpy()\n") == [(6, "DET101")]
    assert lines(head + "    for p in model.parameters():\n        p.data.zero_()\n") == [(6, "DET103")]
    # train() is also a trainer's: evidence only together with a call.
    assert lines(head + "    model.train()\n    return model.fc.weight.numpy()\n") == []
    # pandas' DataFrame.eval takes an expression: not a module's eval().
    pandas = "import torch\n\n\ndef evaluate(frame):\n    frame.eval('a + b')\n    return frame.x.data\n"
    assert lines(pandas) == []


@pytest.mark.parametrize("made", ["get_model(cfg)", "get_model(cfg).to(device)", "get_model(cfg).cuda()"])
def test_a_factory_s_object_moved_to_a_device_is_still_duck_typed(made: str) -> None:
    """pytorch-semseg's validate.py: `model = get_model(...).to(device)`, `model.eval()`,
    `model(images).data`. `.to` and `.cuda` are a tensor's and a module's, so the moved object is
    as unknown as before, and `.eval()` still says it is a module."""
    source = (
        "import torch\nfrom registry import get_model\n\n\ndef validate(cfg, loader):\n"
        "    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        f"    model = {made}\n    model.eval()\n    for images, labels in loader:\n"
        "        outputs = model(images.to(device))\n        pred = outputs.data.max(1)[1].cpu().numpy()\n"
    )
    assert lines(source) == [(11, "DET103")]
    # Without the module-only method nothing says what the object is.
    assert lines(source.replace("    model.eval()\n", "")) == []


def test_plain_class_instances_are_not_duck_typed() -> None:
    source = (
        "import torch\n\n\nclass Model:\n    def eval(self):\n        return self\n\n\n"
        "def run(model):\n    model.eval()\n    return model.weight.data\n\n\nrun(Model())\n"
    )
    assert lines(source) == []


def test_loader_batches_are_tensors_without_grad() -> None:
    source = (
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader([])\n"
        "for x, y in loader:\n    a = y.data\n    b = x.numpy()\n"
    )
    assert lines(source) == [(5, "DET103")]


@pytest.mark.parametrize("wrap", ["tqdm(loader)", "tqdm.tqdm(loader)", "auto.tqdm(loader)", "tqdm(iterable=loader)"])
def test_a_progress_bar_yields_the_batches_it_wraps(wrap: str) -> None:
    source = (
        "import torch\nimport tqdm\nfrom tqdm import auto, tqdm\nfrom torch.utils.data import DataLoader\n"
        f"loader = DataLoader([])\nfor x, y in {wrap.replace('tqdm.tqdm', 'tqdm')}:\n    a = y.data\n    b = x.numpy()\n"
    )
    assert lines(source) == [(7, "DET103")]


def test_a_progress_bar_of_something_else_yields_nothing_known() -> None:
    source = "import torch\nfrom tqdm import tqdm\nfor y in tqdm(range(3)):\n    a = y.data\n"
    assert lines(source) == []


HOOKED = (
    "import torch\nfrom torch import nn\n\n\nclass Stats:\n    def __init__(self, model):\n"
    "        for layer in model.modules():\n            layer.{register}(self.hook)\n\n"
    "    def hook(self, module, first, second=None):\n        self.a = {read}\n\n"
    "    def other(self, module, first):\n        self.b = first[0].data\n\n\n"
    "Stats(nn.Linear(2, 2))\n"
)


@pytest.mark.parametrize(("register", "read", "expected"), [
    # A forward pre-hook gets the inputs as a tuple of tensors; `other` is no hook and stays unknown.
    ("register_forward_pre_hook", "first[0].data", [(11, "DET103")]),
    # A forward hook's output: a tensor whose grad the model's calls decide (DET111, not DET101).
    ("register_forward_hook", "second.data", [(11, "DET103")]),
    ("register_forward_hook", "second.numpy()", [(11, "DET111")]),
    ("register_forward_hook", "second.detach().numpy()", []),
    # A backward hook's gradients: tensors that do not require grad (create_graph unset).
    ("register_full_backward_hook", "second[0].data", [(11, "DET103")]),
    ("register_full_backward_hook", "first", []),
    ("register_forward_pre_hook", "module.weight.data", [(11, "DET103")]),
])
def test_a_method_registered_as_a_hook_gets_what_torch_passes(register: str, read: str,
                                                              expected: list[tuple[int, str]]) -> None:
    assert lines(HOOKED.format(register=register, read=read)) == expected


def test_a_method_of_an_instance_registered_outside_its_class_is_a_hook_too() -> None:
    source = HOOKED.format(register="register_forward_pre_hook", read="first[0].data").replace(
        "layer.register_forward_pre_hook(self.hook)", "pass")
    assert lines(source + "stats = Stats(nn.Linear(2, 2))\n") == []
    hooked = source + "stats = Stats(nn.Linear(2, 2))\nnn.Linear(2, 2).register_forward_pre_hook(stats.hook)\n"
    assert lines(hooked) == [(11, "DET103")]


def test_a_method_not_registered_keeps_its_parameters_unknown() -> None:
    source = HOOKED.format(register="register_forward_pre_hook", read="first[0].data").replace("(self.hook)", "(print)")
    assert lines(source) == []


def test_items_of_a_returned_tuple_are_what_the_call_passed() -> None:
    source = (
        "import torch\n\n\nclass Chain:\n    def __init__(self, steps):\n"
        "        self.steps = steps\n\n    def __call__(self, a, b):\n        for step in self.steps:\n"
        "            a, b = step(a, b)\n        return a, b\n\n\n"
        "def scale(a, b):\n    return a * 2, b * 2\n\n\n"
    )
    quiet = source + "x, y = Chain([scale])(torch.zeros(2), torch.ones(2))\nprint(x.numpy(), y.numpy())\n"
    assert lines(quiet) == []
    grad = source + "w = torch.nn.Linear(2, 2).weight\nx, y = Chain([scale])(w, w)\nprint(x.numpy())\n"
    assert lines(grad) == [(20, "DET101")]


def test_a_module_hinted_on_one_path_becomes_one_where_only_a_module_fits() -> None:
    # `load_state_dict` in the `try` hints a module (trainers have it too); `.parameters()` after
    # the join of the `try` and its `except` says it is one, so its call gives a module's output.
    source = (
        "import importlib\nimport torch\n\nfactory = importlib.import_module('models')\n"
        "net = factory.build()\nnet.apply(print)\ntry:\n    net.load_state_dict(torch.load('w.pth'))\n"
        "except OSError:\n    net = net.apply(print)\n"
        "optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\nfor epoch in range(2):\n"
        "    net = net.train()\n    out = net(torch.ones(2))\n    a = out.cpu().data\n"
    )
    assert lines(source) == [(15, "DET103")]
    assert lines(source.replace("net.parameters()", "[]")) == []  # a hint alone is no module


CAPTUM = (
    "import torch\nfrom captum.attr import DeepLift, IntegratedGradients, Saliency\n"
    "model = torch.nn.Linear(4, 2)\nx = torch.randn(2, 4, requires_grad=True)\nplain = torch.randn(2, 4)\n"
)


@pytest.mark.parametrize(("call", "expected"), [
    ("IntegratedGradients(model).attribute(x, target=0)", [(6, "DET101")]),  # grad when the input has it
    ("IntegratedGradients(model).attribute(plain, target=0)", []),
    ("DeepLift(model).attribute(plain, target=0)", [(6, "DET101")]),  # always: captum makes the input require grad
    ("Saliency(model).attribute(x, target=0)", []),  # gradient magnitudes: no grad
    ("IntegratedGradients(model).attribute((x, plain), target=0)[0]", [(6, "DET101")]),  # one per input
    ("IntegratedGradients(model).attribute((x, plain), target=0)[1]", []),
    ("IntegratedGradients(model).attribute(x, return_convergence_delta=True)[0]", [(6, "DET101")]),
    ("IntegratedGradients(model).attribute(x, return_convergence_delta=True)[1]", []),
])
def test_captum_attributions_require_grad_as_the_library_table_says(call: str, expected: list[tuple[int, str]]) -> None:
    assert lines(CAPTUM + f"a = {call}.numpy()\n") == expected
    assert lines(CAPTUM + f"with torch.no_grad():\n    a = {call}.numpy()\n") == []


def test_alias_through_a_helper_and_views() -> None:
    source = (
        "import numpy as np\nimport torch\n\n\ndef to_torch(a):\n    return torch.from_numpy(a)\n\n\n"
        "images = np.ones((2, 3))\n"
    )
    assert lines(source + "t = to_torch(images).T[0]\nt += 1\nprint(images)\n") == [(11, "DET105")]
    assert lines(source + "t = to_torch(images).float()\nt += 1\nprint(images)\n") == []
    assert lines(source + "t = to_torch(images)[[0]]\nt += 1\nprint(images)\n") == []


def test_module_buffers_are_tensors_that_do_not_require_grad() -> None:
    source = "import torch\nbn = torch.nn.BatchNorm1d(3)\n"
    assert lines(source + "a = bn.running_mean.numpy()\nb = bn.weight.numpy()\n") == [(4, "DET101")]
    assert lines(source + "bn.running_var.data.fill_(1)\n") == [(3, "DET103")]


def test_instances_dispatch_to_their_class_methods_with_the_constructor_arguments() -> None:
    source = (
        "import numpy as np\nimport torch\n\n\nclass Client:\n    def __init__(self, net):\n"
        "        self.net = net\n\n    def score(self, x):\n        return self.net(x)\n\n\n"
        "client = Client(torch.nn.Linear(2, 2))\n"
    )
    assert lines(source + "np.mean([client.score(torch.ones(2))])\n") == [(14, "DET106")]
    assert lines(source + "with torch.no_grad():\n    np.mean([client.score(torch.ones(2))])\n") == []


def test_calling_an_instance_of_a_module_class_is_a_forward_pass_not_a_new_instance() -> None:
    source = (
        "import matplotlib.pyplot as plt\nimport torch\n\n\nclass Net(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(2, 2)\n\n"
        "    def forward(self, x):\n        return self.fc(x)\n\n\nmodel = Net()\n"
        "with torch.inference_mode():\n    preds = model(torch.ones(2))\nplt.plot(preds)\n"
    )
    assert lines(source) == []
    assert lines(source + "plt.plot(model(torch.ones(2)))\n") == [(18, "DET106")]
    # A module class with no parameters gives back what its input holds: no grad here (it runs).
    identity = source.replace("        self.fc = torch.nn.Linear(2, 2)\n", "").replace("self.fc(x)", "x")
    assert lines(identity + "plt.plot(model(torch.ones(2)))\n") == []


FORWARD_READS_DATA = (
    "import torch\n\n\nclass Classifier(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = torch.nn.Linear(4, 2)\n\n    def forward(self, x, lengths):\n"
    "        order = lengths.data.tolist()\n        return self.fc(x)\n\n\nclassifier = Classifier()\n"
)


@pytest.mark.parametrize("call, flagged", [
    # The call passes a tensor: `.data` in `forward` is on a tensor (PyTorchZeroToAll's RNN classifier).
    ("classifier(torch.zeros(2, 4), torch.LongTensor([1, 2]))\n", [(10, "DET103")]),
    # Through a field holding the instance, called in a method.
    (("class Runner:\n    def __init__(self, model):\n        self.model = model\n\n    def step(self):\n"
      "        return self.model(torch.zeros(2, 4), torch.tensor([1, 2]))\n\n\nRunner(classifier).step()\n"),
     [(10, "DET103")]),
    # Lists of lengths, as many RNN examples pass them: `.data` of a list is no tensor's.
    ("classifier(torch.zeros(2, 4), [1, 2])\n", []),
    # No call: `forward`'s parameter is of unknown origin, as before.
    ("", []),
])
def test_calling_a_module_instance_runs_forward_with_what_the_call_passes(call: str, flagged: list) -> None:
    assert lines(FORWARD_READS_DATA + call) == flagged


def test_forward_run_by_a_call_writes_fields_in_the_call_s_grad_mode() -> None:
    """A field `forward` fills is as the calls fill it: with grad on, the cached output needs
    grad; the output the module hands back is still the module's (grad where grad is on)."""
    source = (
        "import torch\n\n\nclass Probe(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 2)\n        self.seen = []\n\n    def forward(self, x):\n"
        "        self.seen.append(x)\n        return self.fc(x)\n\n\nprobe = Probe()\n"
    )
    grad_input = "probe(torch.ones(2, requires_grad=True))\nprobe.seen[0].numpy()\n"
    assert lines(source + grad_input) == [(17, "DET101")]
    # Without grad at the call the file's own pass adds nothing; `forward`'s analysis for callers
    # the file does not show (any code may call a method) still makes the opt-in DET111.
    assert lines(source + "probe(torch.ones(2))\nprobe.seen[0].numpy()\n") == [(17, "DET111")]
    assert lines(source + "out = probe(torch.ones(2))\nout.numpy()\n") == [(17, "DET101")]


def test_a_branch_that_returns_does_not_reach_the_code_after_it() -> None:
    head = "import torch\n\n\ndef to_numpy(t):\n"
    assert lines(head + "    if t.requires_grad:\n        return t.detach().numpy()\n    return t.numpy()\n") == []
    assert lines(head + "    if t.requires_grad:\n        print(t)\n    return t.numpy()\n") == [(7, "DET111")]
    assert lines(head + "    if t.is_cuda:\n        raise ValueError(t)\n    return t.cuda().cpu().numpy()\n") == [(7, "DET111")]


def test_isinstance_with_a_torch_class_says_what_the_value_is() -> None:
    head = "import torch\nfrom torch import nn\n\n\ndef init(m):\n"
    assert lines(head + "    if isinstance(m, (nn.Conv2d, nn.Linear)):\n        m.weight.data.normal_()\n") == [(7, "DET103")]
    assert lines(head + "    if isinstance(m, nn.modules.batchnorm._BatchNorm):\n        m.running_mean.data.zero_()\n") == [(7, "DET103")]
    assert lines(head + "    if isinstance(m, nn.Parameter):\n        return m.numpy()\n    return m\n") == [(7, "DET101")]
    assert lines(head + "    if isinstance(m, torch.Tensor):\n        m.data.zero_()\n") == [(7, "DET103")]
    # Not a torch class: the `.data` is the box's own field.
    assert lines(head + "    if isinstance(m, dict) and m.data:\n        pass\n") == []


def test_outside_isinstance_of_torch_tensor_the_value_is_no_tensor() -> None:
    """`if isinstance(a, torch.Tensor): a = a.detach().numpy()` leaves an array either way
    (pytorch-grad-cam's get_cam_image); only the base class says so, not `nn.Parameter`."""
    head = ("import numpy as np\nimport torch\n\nnet = torch.nn.Linear(3, 3)\n\n\ndef cam(a):\n")
    call = "\n\ncam(net(torch.ones(3)))\n"
    converted = "    if isinstance(a, torch.Tensor):\n        a = a.detach().numpy()\n    return np.maximum(a, 0)\n"
    assert lines(head + converted + call) == []
    early = "    if not isinstance(a, torch.Tensor):\n        return np.maximum(a, 0)\n    return np.maximum(a, 0)\n"
    assert lines(head + early + call) == [(10, "DET106")]
    parameter = "    if isinstance(a, torch.nn.Parameter):\n        return a\n    return np.maximum(a, 0)\n"
    assert lines(head + parameter + call) == [(10, "DET106")]
    exec(compile(head + converted + call, "<isinstance>", "exec"), {})  # noqa: S102 - it runs
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(head + early + call, "<isinstance>", "exec"), {})  # noqa: S102


def test_torch_is_tensor_narrows_as_isinstance_does() -> None:
    """`if torch.is_tensor(vec): vec = vec.detach().cpu().numpy()` (a GCN notebook's
    color_from_vec) leaves an array either way; `if not torch.is_tensor(vec):` keeps the tensor."""
    head = ("import numpy as np\nimport torch\n\nnet = torch.nn.Linear(3, 3)\n\n\ndef color(vec):\n")
    call = "\n\ncolor(net(torch.ones(3)))\n"
    converted = "    if torch.is_tensor(vec):\n        vec = vec.detach().cpu().numpy()\n    return np.median(vec)\n"
    assert lines(head + converted + call) == []
    kept = "    if not torch.is_tensor(vec):\n        vec = torch.as_tensor(vec)\n    return np.median(vec)\n"
    assert lines(head + kept + call) == [(10, "DET106")]
    exec(compile(head + converted + call, "<is_tensor>", "exec"), {})  # noqa: S102 - it runs
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(head + kept + call, "<is_tensor>", "exec"), {})  # noqa: S102


def test_weight_of_an_unknown_parameter_is_as_unknown_as_the_parameter() -> None:
    head = "import torch\n\n\ndef weights(model):\n"
    (diagnostic,) = check_source(head + "    return model.weight.numpy()\n", PREVIEW)
    assert (diagnostic.line, diagnostic.code) == (5, "DET111")
    # Other attributes of a configuration object stay unknown, not tensors.
    assert lines(head + "    return (torch.zeros(3) * model.scale).numpy()\n") == []
    # With a caller in the file, the caller decides.
    called = head + "    return model.weight.numpy()\n\n\nweights(torch.nn.Linear(2, 2))\n"
    assert lines(called) == [(5, "DET101")]


def test_attribute_from_a_factory_called_with_a_tensor_is_a_submodule() -> None:
    source = (
        "import torch\nfrom torch import nn\nfrom timm.layers import create_conv2d\n\n\nclass Block(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.conv = create_conv2d(3, 3, 3)\n\n"
        "    def reparam(self, kernel):\n        self.conv.weight.data = kernel\n\n"
        "    def forward(self, x):\n        return self.conv({arg})\n"
    )
    assert lines(source.format(arg="x")) == [(12, "DET103")]
    assert lines(source.format(arg="'text'")) == []


def test_weight_data_of_an_unknown_parameter_is_a_caller_dependent_write() -> None:
    source = "import torch\n\n\ndef reparam(block, kernel):\n    block.conv.weight.data = kernel\n"
    (diagnostic,) = check_source(source)
    assert diagnostic.code == "DET103" and "depends on the caller" in diagnostic.message
    # Judged by the caller when there is one: a plain object's `weight` is no parameter.
    called = source + "\n\nclass Box:\n    pass\n\n\nbox = Box()\nreparam(box, 1)\n"
    assert lines(called) == []


def test_out_argument_of_a_torch_function_writes_in_place() -> None:
    source = "import numpy as np\nimport torch\n\na = np.ones(3)\nt = torch.from_numpy(a)\n"
    assert lines(source + "torch.add(t, 1, out=t)\nprint(a)\n") == [(6, "DET105")]
    assert lines(source + "u = torch.add(t, 1)\nprint(a)\n") == []


def test_instance_fields_and_properties_are_read_through_the_class() -> None:
    source = (
        "import numpy as np\nimport torch\n\n\nclass Client:\n    def __init__(self):\n"
        "        self.net = torch.nn.Linear(2, 2)\n\n    @property\n    def loss(self):\n"
        "        return self.net(torch.ones(2)).sum()\n\n\nclient = Client()\n"
    )
    assert lines(source + "np.mean([client.loss])\n") == [(15, "DET106")]
    assert lines(source + "client.net.weight.numpy()\n") == [(15, "DET101")]
    assert lines(source + "np.mean([client.loss.item()])\n") == []


def test_rnn_fed_a_packed_sequence_returns_one() -> None:
    source = (
        "import torch\nfrom torch.nn.utils import rnn as rnn_utils\nrnn = torch.nn.RNN(2, 2)\n"
        "packed = rnn_utils.pack_sequence([torch.ones(3, 2)])\noutput_packed, hidden = rnn(packed)\n"
    )
    assert lines(source + "a = output_packed.data[[0]]\nb = hidden.data\n") == [(7, "DET103")]


def test_data_of_an_object_not_shown_to_be_a_tensor_is_not_flagged() -> None:
    """What follows `.data` shows the field is a tensor, not the object: a Dataset's `.data` is one."""
    head = "import torch\nfrom torchvision import datasets\n"
    assert lines(head + "mnist = datasets.MNIST('.')\nmnist.data.numpy()\nmnist.data.add_(1)\n") == []
    assert lines(head + "def show(batch):\n    batch.data.cpu().numpy()\n    batch.data = batch.other.detach()\n") == []
    dataset = (
        "import torch\nfrom torch.utils.data import Dataset\n\n\nclass Digits(Dataset):\n"
        "    def __init__(self):\n        self.data = torch.zeros(2, dtype=torch.uint8)\n\n\n"
    )
    assert lines(dataset + "digits = Digits()\ndigits.data.numpy()\ndigits.data.view(2).mul_(1)\n") == []
    # The object itself shown to be a tensor: flagged, reads and writes.
    assert lines(head + "x = torch.ones(2)\nx.data.numpy()\nx.data.add_(1)\n") == [(4, "DET103"), (5, "DET103")]


def test_a_chain_of_views_after_data_ending_in_a_write_is_a_write() -> None:
    head = "import torch\nx = torch.ones(3, requires_grad=True)\n"
    for write in ("x.data.view(3).add_(1)", "x.data.t()[0] = 1", "x.data.cpu().float().zero_()",
                  "torch.mul(x, 2, out=x.data)", "x.data.squeeze()[0] += 1"):
        [diagnostic] = check_source(head + write + "\n")
        assert "in-place write through .data" in diagnostic.message, write
    for read in ("a = x.data.view(3).numpy()", "a = x.data.view(3)", "print(x.data.t().sum())"):
        [diagnostic] = check_source(head + read + "\n")
        assert diagnostic.message.startswith("DET103 .data is the legacy untracked view"), read


def test_evidence_by_use_makes_an_unknown_object_a_tensor_for_data() -> None:
    """`.grad` read in the same scope (a hand-written optimizer step), or `.parameters()` of a
    field the file cannot see into: the `.data` is Tensor.data. A `.grad` read in another scope,
    or no such use, is no evidence."""
    optimizer = (
        "import torch\n\n\nclass MyAdam(torch.optim.Optimizer):\n    def step(self, closure=None):\n"
        "        for group in self.param_groups:\n            for p in group['params']:\n"
        "                grad = p.grad.data\n                p.data.add_(-group['lr'] * grad)\n"
    )
    assert lines(optimizer) == [(8, "DET103"), (9, "DET103")]
    elsewhere = "import torch\n\n\ndef values(items):\n    return [i.data for i in items]\n\n\ndef grads(items):\n    return [i.grad for i in items]\n"
    assert lines(elsewhere) == []
    fields = "import torch\n\n\nclass A:\n    def sync(self):\n        for p in self.net.parameters():\n            print(p.data)\n"
    assert lines(fields) == [(7, "DET103")]
    assert lines(fields.replace("self.net.parameters()", "self.net.items()")) == []
    # a tensor's in-place method on its `.data` is evidence of its own (tests/test_uses.py)
    assert lines(fields.replace("self.net.parameters()", "self.net.items()").replace("print(p.data)", "p.data.zero_()")) == [
        (7, "DET103")]


@pytest.mark.parametrize(("use", "flagged"), [
    ("outs.append(labels.cpu().detach().numpy())", True),  # a tensor-only method after same-kind ones
    ("outs.append(labels.numpy())", True),
    ("outs.append(labels.unsqueeze(0))", True),
    ("outs.append(labels.cpu())", False),  # modules and PackedSequences have `.cpu()` too
    ("outs.append(labels.data.numpy())", False),  # a Dataset's `.data` may be a tensor: no evidence on `labels`
    ("outs.append(np.asarray(labels))", False),
])
def test_a_batch_used_as_only_a_tensor_can_be_is_a_tensor_for_data(use: str, flagged: bool) -> None:
    """`for x, labels in loader:` of a loader the file cannot see into: `labels.cpu().detach()` in
    the same function says `labels` is a tensor, so its `.data` is Tensor.data."""
    source = ("import numpy as np\nimport torch\n\n\ndef evaluate(loader, device):\n    outs = []\n"
              "    for x, labels in loader:\n        labels = labels.to(device)\n"
              "        if labels.data.dtype != torch.long:\n            print(labels.dtype)\n"
              f"        {use}\n    return outs\n")
    assert [found for found in lines(source) if found[1] == "DET103"] == ([(9, "DET103")] if flagged else [])


def test_a_branch_that_returns_inside_a_with_block_does_not_fall_through() -> None:
    """yolov5's AutoShape.forward: `if isinstance(ims, torch.Tensor): with autocast(): return ...`;
    below it `ims` is no tensor, so `im.data` of its elements is an ndarray's buffer."""
    source = (
        "import numpy as np\nimport torch\n\n\ndef forward(ims, model):\n    if isinstance(ims, torch.Tensor):\n"
        "        with torch.autocast('cpu'):\n            return model(ims)\n    for im in list(ims):\n"
        "        print(im.data.contiguous)\n"
    )
    assert lines(source) == []
    falls_through = source.replace("            return model(ims)\n", "            model(ims)\n")
    assert lines(falls_through) == [(10, "DET103")]


def test_a_reparametrised_module_is_the_module_it_was_given() -> None:
    """`nn.utils.weight_norm(layer)` returns `layer` with parameters `weight_g`/`weight_v`
    (dino's DINOHead writes `self.last_layer.weight_g.data.fill_(1)`)."""
    source = ("import torch\nfrom torch import nn\nfrom torch.nn.utils import spectral_norm\n\n"
              "head = nn.utils.weight_norm(nn.Linear(3, 3, bias=False))\n"
              "head.weight_g.data.fill_(1)\n"
              "critic = spectral_norm(nn.Linear(3, 3))\n"
              "critic.weight_orig.data.zero_()\n")
    assert lines(source) == [(6, "DET103"), (8, "DET103")]
    namespace: dict[str, object] = {}
    exec(compile(source, "<reparametrised>", "exec"), namespace)  # noqa: S102
    assert namespace["head"].weight_g.requires_grad and namespace["critic"].weight_orig.requires_grad  # type: ignore[attr-defined]


def test_a_closure_in_a_method_writes_the_instances_fields() -> None:
    """pytorch-grad-cam's gradient hook: `def store(grad): self.gradients = [grad] + ...` inside a
    method, read in another class's method."""
    source = ("import torch\n\n\nclass Store:\n    def __init__(self):\n        self.grads = []\n\n"
              "    def watch(self, output):\n        def keep(grad):\n            self.grads = [grad.detach()] + self.grads\n\n"
              "        output.register_hook(keep)\n\n\nclass Cam:\n    def __init__(self):\n        self.store = Store()\n\n"
              "    def run(self):\n        return [g.data for g in self.store.grads]\n")
    assert lines(source) == [(20, "DET103")]
    shadowed = source.replace("def keep(grad):", "def keep(grad, self=None):")  # not the instance
    assert lines(shadowed) == []


_OWN_AUTOGRAD = '''\
import torch


class Value:
    def __init__(self, data, _children=()):
        self.data = data
        self.grad = 0.0
        self._prev = set(_children)


def draw(nodes):
    for n in nodes:
        print(n.data, n.grad)


def sgd(params):
    for p in params:
        p.data += -0.01 * p.grad


x = torch.ones(2, requires_grad=True)
x.data.zero_()
'''


def test_a_file_with_its_own_data_and_grad_class_reads_grad_as_no_evidence() -> None:
    """micrograd's `Value` (a held-out review's false positive, in a notebook that imports torch
    to compare): where a class of the file has `data` and `grad` fields, `n.grad` does not make
    `n` a tensor. A known tensor's `.data` is still flagged; a class with `grad` alone (a hook's
    store) changes nothing."""
    assert lines(_OWN_AUTOGRAD) == [(22, "DET103")]
    without_class = _OWN_AUTOGRAD.replace("self.data = data\n", "self.value = data\n")
    assert lines(without_class) == [(13, "DET103"), (18, "DET103"), (22, "DET103")]


_NARROWING_TESTS = {
    # name: (test, body, other branch, what is done with `out`, the codes found: none, or one on that line)
    "not_a_tensor": ("not torch.is_tensor(v)", "np.asarray(v)", "v.detach().numpy()", "out", []),
    "isinstance_tensor": ("isinstance(v, torch.Tensor)", "v.detach().numpy()", "np.asarray(v)", "out", []),
    "isinstance_module": ("isinstance(m, nn.Linear)", "m(x)", "x", "out.numpy()", ["DET101"]),
}


@pytest.mark.parametrize("case", sorted(_NARROWING_TESTS))
def test_if_statements_and_if_expressions_read_a_test_alike(case: str) -> None:
    """`a if test else b` narrows names as `if test: ... else: ...` does (guards.branch_narrowings,
    one place for both): each pair gives the same diagnostics, and the expected ones."""
    test, body, orelse, use, expected = _NARROWING_TESTS[case]
    header = ("import numpy as np\nimport torch\nfrom torch import nn\n\n\n"
              "def run(flag, m):\n    x = torch.ones(3)\n"
              "    v = nn.Linear(3, 3)(x) if flag else np.zeros(3)\n")
    statement = header + f"    if {test}:\n        out = {body}\n    else:\n        out = {orelse}\n    return {use}\n"
    expression = header + f"    out = {body} if {test} else {orelse}\n    return {use}\n"
    for source in (statement, expression):
        found = check_source(source)
        assert [d.code for d in found] == expected, (case, source)
        assert all(d.line == source.count("\n") for d in found)


def test_a_call_that_passes_a_gpu_tensor_without_grad_is_no_grad_evidence() -> None:
    """dlwpt's check_nodule_fp_rate.py: a method gets a mask computed under no_grad on the GPU
    and converts it with `.cpu().numpy()`. The call's note (it passes a GPU tensor) joined with
    the method's analysis for callers the file does not show is no DET101: only DET111's claim."""
    source = (
        "import torch\n\n\nclass App:\n    def __init__(self):\n"
        "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
        "    def main(self):\n        with torch.no_grad():\n"
        "            mask = torch.nn.Linear(2, 2).to(self.device)(torch.ones(2, device=self.device)) > 0\n"
        "        return self.cluster(mask)\n\n    def cluster(self, mask):\n        return mask.cpu().numpy()\n\n\n"
        "App().main()\n"
    )
    assert [d.code for d in check_source(source)] == []
    assert lines(source) == [(14, "DET111")]
    grad = source.replace("with torch.no_grad():", "if True:").replace(" > 0\n", "\n")  # an output with grad
    assert [(d.line, d.code) for d in check_source(grad)] == [(14, "DET101")]


def test_a_loop_that_breaks_at_once_binds_its_target_to_the_first_element() -> None:
    """`for features, targets in test_loader: break` (stat453's notebooks) takes one batch: the
    name no longer holds what it held before (a tensor on the GPU from the training loop)."""
    head = (
        "import matplotlib.pyplot as plt\nimport torch\nnet = torch.nn.Linear(2, 2)\n"
        "loader = torch.utils.data.DataLoader(torch.ones(4, 2), batch_size=2)\nfeatures = net(torch.ones(2))\n"
    )
    assert lines(head + "for features in loader:\n    break\nplt.plot(features[0])\n") == []
    # A loop that may run zero times and does not stop at once: the old value may be left.
    assert lines(head + "for features in loader:\n    print(features)\nplt.plot(features[0])\n") == [(8, "DET106")]


@pytest.mark.parametrize("loaded", ["generator = torch.load('g.pt')", "generator, critic = torch.load('gan.pt')"])
def test_a_loaded_model_called_through_forward_is_a_model(loaded: str) -> None:
    """FastCampus's GAN notebooks: `generator.forward(z)` of what `torch.load` gave (alone or
    unpacked from a saved list) is a call of the model, as `generator(z)` is."""
    source = f"import torch\n{loaded}\nz = torch.ones(2)\nfake = generator.forward(z)\nprint(fake.data)\n"
    assert lines(source) == [(5, "DET103")]
    # Not called: a checkpoint's entries say nothing.
    assert lines(f"import torch\n{loaded}\nprint(generator.data)\n") == []


def test_a_method_no_tensor_has_gives_nothing_known() -> None:
    """overlapping-community-detection: `coo = matrix.tocoo()` under `sp.issparse(matrix)` of a
    helper some calls pass a tensor: no tensor has `.tocoo()`, so where it runs `matrix` is a
    SciPy matrix, and `coo.data` its values array, no tensor's legacy attribute."""
    helper = (
        "import scipy.sparse as sp\nimport torch\n\n\ndef values(matrix):\n    if sp.issparse(matrix):\n"
        "        coo = matrix.tocoo()\n        return torch.FloatTensor(coo.data)\n    return matrix.data\n\n\n"
        "values(torch.ones(2, 2, requires_grad=True))\nvalues(sp.eye(2))\n"
    )
    assert lines(helper) == [(9, "DET103")]
    # A tensor's own method keeps the tensor: `.t()` is one, and so is a private one (`._values()`).
    assert lines(helper.replace("matrix.tocoo()", "matrix.t()")) == [(8, "DET103"), (9, "DET103")]
    assert lines(helper.replace("matrix.tocoo()", "matrix._values()")) == [(8, "DET103"), (9, "DET103")]


def test_nonlocal_and_context_manager_values_and_record_unpacking() -> None:
    """Three constructs the carrier matrix found lost (tests/test_heap.py has them in every
    combination): a `nonlocal` write, what a `@contextmanager` generator yields to `as`, and a
    namedtuple instance unpacked."""
    head = "import collections\nimport contextlib\nimport torch\nnet = torch.nn.Linear(2, 2)\nx = torch.ones(2)\n"
    nonlocal_write = (
        "def outer():\n    kept = None\n\n    def keep():\n        nonlocal kept\n        kept = net(x)\n\n"
        "    keep()\n    return kept\n\n\nprint(outer().numpy())\n"
    )
    assert lines(head + nonlocal_write) == [(17, "DET101")]
    assert lines(head + nonlocal_write.replace("kept = net(x)", "kept = net(x).detach()")) == []
    managed = "@contextlib.contextmanager\ndef opened():\n    yield net(x)\n\n\nwith opened() as held:\n    print(held.numpy())\n"
    assert lines(head + managed) == [(12, "DET101")]
    assert lines(head + managed.replace("yield net(x)", "yield net(x).detach()")) == []
    record = "Pair = collections.namedtuple('Pair', 'out n')\nout, n = Pair(net(x), 0)\nprint(out.numpy())\nprint(n)\n"
    assert lines(head + record) == [(8, "DET101")]
    assert lines(head + record.replace("Pair(net(x), 0)", "Pair(0, net(x))")) == []


def test_zip_of_starred_rows_keeps_the_columns_apart() -> None:
    """RL-Adventure's replay buffers: `batch = zip(*samples)` of (state, action, ...) tuples; the
    states column holds the NumPy observations, not the actions (a tensor on the GPU)."""
    head = (
        "import numpy as np\nimport torch\nnet = torch.nn.Linear(2, 2).cuda()\n"
        "rows = [(np.ones(2), net(torch.ones(2).cuda()))]\n"
    )
    assert lines(head + "states, outs = zip(*rows)\nprint(np.concatenate(states))\n") == []
    assert lines(head + "states, outs = zip(*rows)\nprint(np.concatenate(outs))\n") == [(6, "DET106")]
    assert lines(head + "columns = list(zip(*rows))\nprint(np.concatenate(columns[1]))\n") == [(6, "DET106")]


def test_a_partial_of_a_function_of_the_file_calls_it_with_its_bound_arguments_first() -> None:
    head = "import functools\nimport torch\nnet = torch.nn.Linear(2, 2)\n\n\ndef scaled(factor, t):\n    return t * factor\n\n\n"
    assert lines(head + "double = functools.partial(scaled, 2)\nprint(double(net(torch.ones(2))).numpy())\n") == [(11, "DET101")]
    # The bound argument is the grad tensor; the call passes a plain number.
    bound = "double = functools.partial(scaled, t=net(torch.ones(2)))\nprint(double(2).numpy())\n"
    assert lines(head + bound) == [(11, "DET101")]
    assert lines(head + "double = functools.partial(scaled, 2)\nprint(double(torch.ones(2)).numpy())\n") == []


@pytest.mark.parametrize("spelling", [
    "import pytorch_lightning as pl\n\n\nclass Net(pl.LightningModule):",
    "from lightning.pytorch import LightningModule\n\n\nclass Net(LightningModule):",
    "from transformers import PreTrainedModel\n\n\nclass Net(PreTrainedModel):",
])
def test_a_subclass_of_a_library_module_base_is_a_model(spelling: str) -> None:
    """`class Net(pl.LightningModule)` is an nn.Module (semantics.LIBRARY_MODULE_BASES, checked by
    scripts/check_module_bases.py): its output requires grad, and its `predict_step` is a method
    of the class, not a submodule's call."""
    source = (f"import torch\n{spelling}\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = torch.nn.Linear(2, 1)\n\n    def forward(self, x):\n        return self.fc(x)\n\n"
              "    def predict_step(self, x):\n        with torch.no_grad():\n            return self.fc(x).numpy()\n\n\n"
              "net = Net()\nprint(net(torch.ones(2)).numpy(), net.predict_step(torch.ones(2)).sum())\n")
    (diagnostic,) = check_source(source, PREVIEW)
    assert diagnostic.code == "DET101" and diagnostic.line == source.count("\n")
    plain = source.replace(spelling.rsplit("(", 1)[1], "object):")
    assert lines(plain) == []  # a plain class: what calling it gives is not known


def test_a_normalisation_layer_without_its_parameters_passes_grad_through_only() -> None:
    """`nn.BatchNorm1d(n, affine=False)` holds no parameter (dtypes.AFFINE_SWITCHES, checked by
    scripts/check_dtype_facts.py): its output of a batch needs no grad; with them it does."""
    source = ("import torch\nfrom torch import nn\nimport matplotlib.pyplot as plt\n\n"
              "norm = nn.BatchNorm1d(2, affine=False)\nplt.hist(norm(torch.rand(8, 2))[:, 0])\n")
    assert lines(source) == []
    assert lines(source.replace(", affine=False", "")) == [(6, "DET106")]
    assert lines(source.replace("BatchNorm1d(2, affine=False)", "InstanceNorm1d(2)")) == []
    assert lines(source.replace("BatchNorm1d(2, affine=False)", "InstanceNorm1d(2, affine=True)")) == [(6, "DET106")]


@pytest.mark.parametrize("test", [
    "type(boxes).__name__ != 'ndarray'",
    "not type(boxes).__name__ == 'ndarray'",
    "type(boxes) is not np.ndarray",
    "type(boxes) != np.ndarray",
])
def test_an_exact_type_test_narrows_its_name(test: str) -> None:
    """`if type(boxes).__name__ != "ndarray": boxes = boxes.detach().cpu().numpy()`: past the `if`,
    boxes is an array on both paths (guards.exact_type_narrowing); `==` says nothing of the body."""
    source = ("import numpy as np\nimport torch\n\n\ndef post(boxes):\n"
              f"    if {test}:\n        boxes = boxes.detach().cpu().numpy()\n    return np.maximum(boxes, 0)\n\n\n"
              "post(torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()))\n")
    assert lines(source) == []
    opposite = source.replace(f"if {test}:", "if type(boxes).__name__ == 'list':")
    assert lines(opposite) == [(8, "DET106")]


def test_an_isinstance_test_names_a_module_class_through_a_file_alias() -> None:
    """`BatchNorm2d = nn.BatchNorm2d` at the top (its only binding): `isinstance(m, BatchNorm2d)`
    over `self.modules()` keeps `m` a module, so `m.weight.data` is a Parameter's; a class held by
    a parameter (`norm_layer`) narrows nothing. A plain class of the file makes an object of
    unknown kind no tensor, but a module for which the test holds stays a module (its class
    derives from both: a mixin)."""
    source = ("import torch\nimport torch.nn as nn\nBatchNorm2d = nn.BatchNorm2d\n\n\n"
              "class Net(nn.Module):\n    def __init__(self, norm_layer=None):\n        super().__init__()\n"
              "        self.bn = BatchNorm2d(3)\n        for m in self.modules():\n"
              "            if isinstance(m, BatchNorm2d):\n                m.weight.data.fill_(1)\n"
              "            elif isinstance(m, norm_layer):\n                m.bias.data.zero_()\n")
    assert lines(source) == [(12, "DET103"), (14, "DET103")]
    local = source.replace("BatchNorm2d = nn.BatchNorm2d\n", "class BatchNorm2d:\n    weight = None\n")
    assert [line for line, _ in lines(local)] == [13, 15]
    unknown = ("import torch\n\n\nclass Box:\n    data = None\n\n\n"
               "def f(m):\n    if isinstance(m, Box):\n        return m.weight.data\n")
    assert lines(unknown) == []


def test_a_method_that_freezes_its_module_freezes_the_instance() -> None:
    """`model.freeze()` whose body sets `requires_grad = False` on every `self.parameters()`:
    the output of a frozen model of an input without grad needs no detach (DET102 is silent), as
    after `model.requires_grad_(False)`; a method that thaws one of them freezes nothing."""
    source = ("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def forward(self, x):\n"
              "        return self.fc(x)\n\n    def freeze(self):\n        for p in self.parameters():\n"
              "            p.requires_grad = False\n        self.eval()\n\n\n"
              "net = Net()\nnet.freeze()\nprint(net(torch.ones(2)).cpu().detach().numpy())\n")
    assert lines(source) == []
    thawing = source.replace("        self.eval()\n", "        self.fc.weight.requires_grad = True\n")
    assert lines(thawing) == [(21, "DET102")]
    assert lines(source.replace("net.freeze()\n", "")) == [(20, "DET102")]


def test_torchaudio_transforms_hold_no_parameter() -> None:
    """`torchaudio.transforms.Resample(...)` keeps buffers only (semantics.PARAMETER_FREE_LIBRARY_MODULES,
    read in torchaudio 2.11.0's source): its output of an input without grad needs no detach."""
    source = ("import numpy as np\nimport torch\nimport torchaudio\n\n"
              "resample = torchaudio.transforms.Resample(8000, 16000)\nprint(np.asarray(resample(torch.ones(1, 80))))\n")
    assert lines(source) == []
    grad = source.replace("torch.ones(1, 80)", "torch.ones(1, 80, requires_grad=True)")
    assert lines(grad) == [(6, "DET106")]


@pytest.mark.parametrize("body", ["...", "pass", "raise NotImplementedError", "return ...",
                                  '"""Subclasses compute it."""\n        return'])
def test_a_module_whose_forward_returns_nothing_gives_no_tensor(body: str) -> None:
    """A template's `forward` (a course's "fill this in" cell) returns None: `.numpy()` of its
    call fails with AttributeError, not the grad error DET101 claims. Its subclass's
    `forward` that returns a value is an ordinary module call again."""
    source = ("import torch\nfrom torch import nn\n\n\nclass Act(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n    def forward(self, x):\n"
              f"        {body}\n\n\nprint(Act()(torch.ones(2)).numpy())\n")
    assert lines(source) == []
    filled = source.replace("print(Act()", "class Filled(Act):\n    def forward(self, x):\n"
                                           "        return self.fc(x)\n\n\nprint(Filled()")
    assert lines(filled) == [(filled.count("\n"), "DET101")]


def test_a_branch_switched_off_by_a_constant_test_is_not_analysed() -> None:
    """`if True: ... else:` / `if 0:` (code switched off by hand): the dead branch makes no claim
    about runtime, and binds nothing that flows on."""
    source = ("import torch\n\nw = torch.ones(3, requires_grad=True)\nif True:\n    v = w.detach()\nelse:\n"
              "    v = w\n    print(w.data)\nif 0:\n    print(w.numpy())\nprint(v.numpy())\nif not False:\n"
              "    print(w.data)\n")
    assert lines(source) == [(13, "DET103")]


def test_a_conditional_expression_with_a_known_test_runs_one_branch() -> None:
    """`loss.item() if torch.__version__ >= "0.4" else loss.data[0]` and `x if True else y`: the
    other branch never runs on the torch the rules speak of, and gives the expression nothing."""
    source = ("import torch\n\nw = torch.ones(3, requires_grad=True)\n"
              "a = w.sum().item() if torch.__version__ >= \"0.4\" else w.data[0]\n"
              "b = w.detach() if True else w\nprint(b.numpy())\n"
              "c = w if 0 else w.detach()\nprint(c.numpy())\n")
    assert lines(source) == []
    live = source.replace("if True", "if a").replace("if 0", "if a")
    assert lines(live) == [(6, "DET101"), (8, "DET101")]


def test_a_torch_functions_count_keywords_carry_no_grad() -> None:
    """`F.one_hot(target, num_classes=model.n_classes)`: the class count is no tensor, whatever
    the module attribute read for it is taken to be (semantics.SCALAR_KEYWORDS)."""
    source = ("import torch\nimport torch.nn.functional as F\nfrom sklearn.metrics import roc_auc_score\n\n\n"
              "def evaluate(model, target, probs):\n    model.train()\n    onehot = F.one_hot(target.long(), "
              "num_classes=model.n_classes)\n    return roc_auc_score(onehot, probs.detach().cpu())\n\n\n"
              "evaluate(torch.nn.Linear(2, 2), torch.tensor([0, 1]), torch.rand(2, 2))\n")
    assert lines(source) == []
    assert lines(source.replace("num_classes=model.n_classes", "model.weight")) != []


def test_a_call_on_self_runs_the_overrides_of_the_files_subclasses() -> None:
    """`self._net_filter(out)` in a base class whose own `_net_filter` is a template: for an
    instance of the subclass that overrides it (`self` may be one), the override runs."""
    source = ("import torch\nfrom torch import nn\n\n\nclass Agent:\n    def __init__(self, model):\n"
              "        self.model = model\n\n    def _net_filter(self, out):\n        ...\n\n"
              "    @torch.no_grad()\n    def act(self, x):\n        q = self._net_filter(self.model(x))\n"
              "        return q.data.cpu().numpy()\n\n\nclass DQNAgent(Agent):\n    def _net_filter(self, out):\n"
              "        return out\n\n\nprint(DQNAgent(nn.Linear(3, 2)).act(torch.ones(3)))\n")
    assert lines(source) == [(15, "DET103")]
    assert lines(source.replace("        return out\n", "        return None\n")) == []


INDEXED = """import torch
from torch import nn


class SkipGram(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.embeddings = nn.ModuleList()
        for size in sizes:
            self.embeddings.append(nn.Embedding(size, 4))

    def save(self):
        return self.embeddings.weight.cpu().data.numpy()

    def first(self):
        return self.embeddings[0].weight.cpu().data.numpy()
"""


def test_a_module_list_has_no_weight() -> None:
    """recsys-nlp-graph's `save_embeddings`: `.weight` of an nn.ModuleList raises AttributeError,
    so nothing reaches `.data` (line 13); its members do have one (line 16)."""
    assert [(d.line, d.code) for d in check_source(INDEXED)] == [(16, "DET103")]
    torch = pytest.importorskip("torch")
    for container in (torch.nn.ModuleList([torch.nn.Linear(2, 2)]), torch.nn.ParameterList([torch.nn.Parameter(torch.ones(1))])):
        assert not hasattr(container, "weight") and not hasattr(container, "bias")


ITERATOR = """import torch


class Batches:
    def __init__(self, rows):
        self.rows = rows
        self.index = 0

    def _to_tensor(self, row):
        return torch.LongTensor(row), torch.tensor(row, dtype=torch.float32, requires_grad=True)

    def __next__(self):
        if self.index >= len(self.rows):
            raise StopIteration
        self.index += 1
        return self._to_tensor(self.rows[self.index - 1])

    def __iter__(self):
        return self


for x, weights in Batches([[1, 2]]):
    print(weights.numpy())
for i, (x, weights) in enumerate(Batches([[1, 2]])):
    print(x.numpy(), next(Batches([[3]]))[1].numpy())
"""


def test_an_iterator_class_gives_what_its_next_returns() -> None:
    """A data iterator (`__iter__` returns the object, `__next__` a batch): a for loop,
    `enumerate` and `next` give the batch (Chinese-Text-Classification's `DatasetIterater`)."""
    assert [(d.line, d.code) for d in check_source(ITERATOR)] == [(23, "DET101"), (25, "DET101")]
    pytest.importorskip("torch")
    assert failing_line(ITERATOR) == 23
    assert failing_line(ITERATOR.replace("weights.numpy()", "weights.detach().numpy()")) == 25
