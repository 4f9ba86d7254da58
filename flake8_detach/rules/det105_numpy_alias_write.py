from __future__ import annotations

from collections.abc import Iterator

from ..analysis.facts import Facts
from ..diagnostics import Finding, Fix
from ..fixing.rewrites import method_call
from .base import Invalid, Rule


class NumpyAliasWrite(Rule):
    code = "DET105"
    name = "numpy-alias-write"
    # The rule's summary (explain --list, SARIF, the docs); each diagnostic names the two sides.
    message = "an in-place write to an array or tensor also changes the tensor or array it shares memory with on the CPU"
    what_it_does = (
        "Flags an in-place write (`a[i] = ...`, `a += ...`, `np.copyto(a, ...)`, `t.add_(...)`) to "
        "an array or tensor that shares memory with another name, when that other name is used "
        "afterwards: `a = t.numpy()` (also through `.detach()` / `.cpu()`) then writing `a`, or "
        "`t = torch.from_numpy(a)` then writing `t`; and the other way round, writing `t` (or `a`) "
        "while it still names the object it named then, when `a` (or `t`) is used afterwards "
        "(`b = a.numpy(); a.add_(1); print(b)`). The other side may be an attribute: "
        "`w = lin.weight.detach().numpy()` changes the layer, flagged when `lin` is used afterwards, "
        "and at once inside a function when the object outlives it (`self.fc.weight`, "
        "`torch.from_numpy(self.buffer)`, an attribute of a parameter or a global); rebinding the "
        "object or the attribute (`lin.weight = nn.Parameter(...)`) ends the sharing. Views keep the "
        "memory (`.permute()`, `.view()`, `.transpose()`, `.T`, `.squeeze()`/`.unsqueeze()`, "
        "`.expand()`, basic slices, `.reshape()` right on the new array or tensor; not `.float()` or "
        "fancy indexing, which may copy), and so does a helper of the file that "
        "returns `torch.from_numpy(a)` of its parameter (`t = to_torch(images).permute(0, 3, 1, 2)`)."
    )
    why_bad = (
        "On the CPU, `t.numpy()` and `torch.from_numpy(a)` do not copy: the array and the tensor "
        "are two views of one block of memory, so a write through one silently changes the other. "
        "On a GPU, `.cpu()` makes a copy first, so the very same code leaves the other side alone: "
        "results depend on the device the code runs on."
    )
    example = "a = t.detach().cpu().numpy()\na[0] = 0\nprint(t)"
    use_instead = "a = t.detach().cpu().numpy().copy()\na[0] = 0\nprint(t)"
    fix_safety = (
        "Unsafe: appending `.copy()` (or `.clone()`) at the aliasing site stops the sharing, which "
        "changes what the program does on the CPU; that is the point, but review it."
    )
    runtime_truth = "On CPU the other side changes after the write; on CUDA it does not (`.cpu()` copied)."
    VALID = [
        "import torch\nt = torch.ones(3)\na = t.numpy().copy()\na[0] = 5\nprint(t)\n",
        "import torch\nimport numpy as np\na = np.ones(3)\nt = torch.from_numpy(a).clone()\nt += 1\nprint(a)\n",
        "import torch\nt = torch.ones(3)\na = t.numpy()\na[0] = 5\n",  # the tensor is never used again
        "import torch\nt = torch.ones(3)\na = t.numpy()\nprint(t)\na = a * 2\na[0] = 1\nprint(t)\n",
        # The tensor is a new object when it is written: the array keeps the old memory.
        "import torch\nt = torch.ones(3)\na = t.numpy()\nt = t + 1\nt.add_(1)\nprint(a)\n",
        # `torch.reshape` of a permuted tensor copies (checked on torch 2.13).
        ("import torch\nimport numpy as np\na = np.ones((2, 3))\n"
         "t = torch.reshape(torch.permute(torch.from_numpy(a), (1, 0)), (-1,))\nt += 1\nprint(a)\n"),
        # The layer's weight is copied, or replaced before the write, or the layer is a local never used again.
        "import torch\nlin = torch.nn.Linear(2, 2)\nw = lin.weight.detach().numpy().copy()\nw[0, 0] = 5\nprint(lin)\n",
        ("import torch\nlin = torch.nn.Linear(2, 2)\nw = lin.weight.detach().numpy()\n"
         "lin.weight = torch.nn.Parameter(torch.zeros(2, 2))\nw[0, 0] = 5\nprint(lin)\n"),
        ("import torch\n\n\ndef scratch():\n    lin = torch.nn.Linear(2, 2)\n    w = lin.weight.detach().numpy()\n"
         "    w *= 0\n    return w\n"),
    ]
    INVALID = [
        Invalid(  # the function form of a view keeps the storage
            "import torch\nimport numpy as np\na = np.ones((2, 3))\nt = torch.permute(torch.from_numpy(a), (1, 0))\nt += 1\nprint(a)\n",
            "import torch\nimport numpy as np\na = np.ones((2, 3))\nt = torch.permute(torch.from_numpy(a).clone(), (1, 0))\nt += 1\nprint(a)\n",
        ),
        Invalid(
            "import torch\nt = torch.ones(3)\na = t.numpy()\na[0] = 5\nprint(t)\n",
            "import torch\nt = torch.ones(3)\na = t.numpy().copy()\na[0] = 5\nprint(t)\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\na = np.ones(3)\nt = torch.from_numpy(a)\nt.add_(1)\nprint(a)\n",
            "import torch\nimport numpy as np\na = np.ones(3)\nt = torch.from_numpy(a).clone()\nt.add_(1)\nprint(a)\n",
        ),
        Invalid("import torch\nimport numpy as np\nt = torch.ones(3)\na = t.detach().cpu().numpy()\nnp.copyto(a, 0)\nprint(t)\n"),
        Invalid(  # the original side written: the array made from it changes too
            "import torch\nt = torch.ones(3)\na = t.numpy()\nt.add_(1)\nprint(a)\n",
            "import torch\nt = torch.ones(3)\na = t.numpy().copy()\nt.add_(1)\nprint(a)\n",
        ),
        Invalid(
            "import torch\nlin = torch.nn.Linear(2, 2)\nw = lin.weight.detach().numpy()\nw[0, 0] = 5\nprint(lin(torch.ones(2)))\n",
            "import torch\nlin = torch.nn.Linear(2, 2)\nw = lin.weight.detach().numpy().copy()\nw[0, 0] = 5\nprint(lin(torch.ones(2)))\n",
        ),
        Invalid(
            "import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = torch.nn.Linear(2, 2)\n\n    def reset(self):\n"
            "        w = self.fc.weight.detach().cpu().numpy()\n        w *= 0\n",
            "import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = torch.nn.Linear(2, 2)\n\n    def reset(self):\n"
            "        w = self.fc.weight.detach().cpu().numpy().copy()\n        w *= 0\n",
        ),
        Invalid(
            "import torch\n\n\nclass Counter:\n    def bump(self):\n        t = torch.from_numpy(self.counts)\n"
            "        t.add_(1)\n        return t\n",
            "import torch\n\n\nclass Counter:\n    def bump(self):\n        t = torch.from_numpy(self.counts).clone()\n"
            "        t.add_(1)\n        return t\n",
        ),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for write in facts.alias_writes.values():
            copy = "copy" if write.kind == "numpy" else "clone"
            # The origin made an array (`.numpy()`) or a tensor (`from_numpy`); the other side is the other kind.
            made, original = ("array", "tensor") if write.kind == "numpy" else ("tensor", "array")
            other_kind, created = (made, write.source) if write.through_source else (original, write.alias)
            message = (
                f"writing '{write.alias}' in place also changes the {other_kind} '{write.source}' "
                f"(they share memory on the CPU, not after a GPU copy); use .{copy}() where "
                f"'{created}' is created"
            )
            fix = Fix(write.origin, method_call(write.origin, copy), False, f"append .{copy}() to stop sharing memory")
            yield self.finding(write.write, message, fix)
