from __future__ import annotations

from collections.abc import Iterator

from ..analysis.facts import Facts
from ..diagnostics import Finding
from ..fixing.rewrites import NO_SHARING, conversion_sharing, insert_cpu
from .base import Invalid, Rule, call_site_note, method_name, method_receiver, passes_force


class NumpyOnDeviceTensor(Rule):
    code = "DET104"
    name = "numpy-on-device-tensor"
    message = ".numpy() on a tensor that may live on a GPU raises TypeError; call .cpu() first"
    what_it_does = (
        "Flags `.numpy()` with no `.cpu()` before it on a value the file shows may live on a GPU: "
        "it went through `.cuda()`, `.to(device)`, a `device=` argument, or is the output of a "
        "model moved to a device. Guards are followed: a move under `if use_gpu:` (a name bound to "
        "`torch.cuda.is_available()` or `DEVICE != \"cpu\"`, or called `use_gpu`, `args.cuda`, "
        "`train_on_gpu`) holds only where the flag is true, so `x.numpy() if not use_gpu else "
        "x.cpu().numpy()` and a move back under the same flag are clean; `t.is_cuda` and "
        "`t.device.type == \"cpu\"` tests put `t` on the CPU in their branch. A helper's parameter "
        "named as a device (`device`, `dev`) may be a GPU for callers the file does not show; a call "
        "that leaves it to a default naming one (`device=\"cpu\"`) moves to that default. What only "
        "runs without a GPU compute is not flagged: where a tensor made on the CPU meets one on the "
        "device in `torch.mm`, `@`, `F.linear` or a `Linear`/`Conv2d`/`LSTM` layer, a run with the GPU "
        "raises there (two devices), so the result and everything computed from it is on the CPU "
        "where it exists (analysis/placement.py)."
    )
    why_bad = (
        "A NumPy array must live in host memory; a CUDA tensor's storage is on the GPU. PyTorch "
        "does not copy behind your back, so `.numpy()` raises `TypeError: can't convert cuda:0 "
        "device type tensor to numpy`. `.detach()` leaves the tensor where it is, and `torch.no_grad()` "
        "only changes grad mode, so neither helps. The code passes on a CPU-only laptop and crashes "
        "on the GPU machine."
    )
    example = "x = x.to(device)\nx.numpy()"
    use_instead = "x = x.to(device)\nx.cpu().numpy()"
    fix_safety = (
        "Safe: `.cpu()` copies to host memory on a GPU, and is a no-op on a CPU tensor, where the "
        "original ran and shared memory the same way. With `--style force` the call becomes "
        "`.numpy(force=True)`, which also detaches: where the tensor may require grad it carries "
        "DET101's `.copy()` (the array is written later) or is unsafe (the array escapes)."
    )
    runtime_truth = "TypeError \"can't convert cuda:0 device type tensor to numpy\" on CUDA; runs on CPU."
    VALID = [
        "import torch\nx = torch.ones(3).cuda()\nx.cpu().numpy()\n",
        "import torch\nx = torch.ones(3, device='cpu')\nx.numpy()\n",
        "import torch\nx = torch.ones(3).to('cuda')\nx.numpy(force=True)\n",
        "import torch\nx = torch.ones(3).to('cuda').to('cpu')\nx.numpy()\n",
    ]
    INVALID = [
        Invalid("import torch\nx = torch.ones(3).cuda()\nx.numpy()\n", "import torch\nx = torch.ones(3).cuda()\nx.cpu().numpy()\n"),
        Invalid(
            "import torch\nx = torch.ones(3, device='cuda')\nx.detach().numpy()\n",
            "import torch\nx = torch.ones(3, device='cuda')\nx.detach().cpu().numpy()\n",
        ),
        Invalid(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "x = torch.zeros(2).to(device)\nwith torch.no_grad():\n    x.numpy()\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "x = torch.zeros(2).to(device)\nwith torch.no_grad():\n    x.cpu().numpy()\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for call in facts.method_calls.get("numpy", ()):
            if passes_force(call):
                continue
            value = facts.value_of(method_receiver(call))
            if value.may_be_on_device:
                note, related = call_site_note(value)
                # `.numpy(force=True)` (the force style) also detaches: it owes DET101's copy then.
                needs_detach = value.may_require_grad and facts.grad_enabled_at(call)
                sharing = conversion_sharing(call, facts) if needs_detach else NO_SHARING
                yield self.finding(method_name(call), self.message + note, insert_cpu(call, sharing), related)
