"""Write flake8_detach/analysis/tensor_methods.py: the public methods of torch.Tensor.

The analysis must tell a tensor's method from a module's (`model.inference(x)` of a value known
only to live on a GPU) without importing torch, so the names are read from the installed torch
here and stored as a table. `tests/test_tensor_methods.py` compares the table with torch.

    python scripts/write_tensor_methods.py           # check the table against this torch
    python scripts/write_tensor_methods.py --write   # rewrite it
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from check_numpy_sinks import frozenset_source  # scripts/ is this script's folder

TABLE = Path(__file__).resolve().parent.parent / "flake8_detach" / "analysis" / "tensor_methods.py"


def measure() -> list[str]:
    return sorted(name for name in dir(torch.Tensor)
                  if not name.startswith("_") and callable(getattr(torch.Tensor, name, None)))


def render(names: list[str]) -> str:
    version = torch.__version__.split("+")[0]
    quote = '"' * 3
    return (f"{quote}The public methods of torch.Tensor (torch {version}), written by\n"
            f"``scripts/write_tensor_methods.py --write``: do not edit; rerun the script.{quote}\n\n"
            + frozenset_source("TENSOR_METHODS", names))


def main() -> int:
    text = render(measure())
    if "--write" in sys.argv:
        TABLE.write_text(text, encoding="utf-8")
        print(f"wrote {TABLE}")
        return 0
    same = TABLE.exists() and TABLE.read_text(encoding="utf-8") == text
    print(f"{TABLE.name} {'holds' if same else 'differs: rerun with --write'} on torch {torch.__version__}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
