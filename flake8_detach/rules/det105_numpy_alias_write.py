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
        "`t = torch.from_numpy(a)` then writing `t`. Views keep the memory (`.permute()`, `.view()`, "
        "`.transpose()`, `.T`, `.squeeze()`/`.unsqueeze()`, `.expand()`, basic slices; not "
        "`.float()` or fancy indexing, which may copy), and so does a helper of the file that "
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
    ]
    INVALID = [
        Invalid(
            "import torch\nt = torch.ones(3)\na = t.numpy()\na[0] = 5\nprint(t)\n",
            "import torch\nt = torch.ones(3)\na = t.numpy().copy()\na[0] = 5\nprint(t)\n",
        ),
        Invalid(
            "import torch\nimport numpy as np\na = np.ones(3)\nt = torch.from_numpy(a)\nt.add_(1)\nprint(a)\n",
            "import torch\nimport numpy as np\na = np.ones(3)\nt = torch.from_numpy(a).clone()\nt.add_(1)\nprint(a)\n",
        ),
        Invalid("import torch\nimport numpy as np\nt = torch.ones(3)\na = t.detach().cpu().numpy()\nnp.copyto(a, 0)\nprint(t)\n"),
    ]

    def check(self, facts: Facts) -> Iterator[Finding]:
        for write in facts.alias_writes.values():
            copy = "copy" if write.kind == "numpy" else "clone"
            source_kind = "tensor" if write.kind == "numpy" else "array"
            message = (
                f"writing '{write.alias}' in place also changes the {source_kind} '{write.source}' "
                f"(they share memory on the CPU, not after a GPU copy); use .{copy}() where "
                f"'{write.alias}' is created"
            )
            fix = Fix(write.origin, method_call(write.origin, copy), False, f"append .{copy}() to stop sharing memory")
            yield self.finding(write.write, message, fix)
