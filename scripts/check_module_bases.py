"""Re-check LIBRARY_MODULE_BASES: other libraries' base classes that are torch.nn.Modules.

``flake8_detach/analysis/semantics.py`` lists, under every name its package exports it by, each
base class whose subclasses the engine takes for models (`class Net(pl.LightningModule)`), and
``freezing.is_module_base`` takes each for a base that gives a subclass no parameters. This script
imports every listed name and asserts both: the class derives from torch.nn.Module, and a bare
subclass of it holds no parameter (where one can be made without arguments).

The libraries are not dependencies of the project: run this from a scratch folder outside the
repository, with the package on the path::

    pip install --target /tmp/libcheck torch==2.13.0 pytorch_lightning lightning transformers diffusers
    PYTHONPATH=$PWD:/tmp/libcheck python scripts/check_module_bases.py

Last run: torch 2.13.0, pytorch_lightning 2.6.6, lightning 2.6.6, transformers 5.24.0, diffusers 0.42.1.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import torch

from flake8_detach.analysis.semantics import LIBRARY_MODULE_BASES

warnings.filterwarnings("ignore")


def resolve(dotted: str) -> type:
    """The class a dotted name names, importing the longest module prefix that imports."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)
        assert isinstance(target, type), f"{dotted} is not a class"
        return target
    raise ImportError(dotted)


def parameters_of_a_bare_subclass(base: type) -> int | None:
    """How many parameters an instance of `class Bare(base)` holds; None where it needs arguments."""
    bare = type("Bare", (base,), {})
    try:
        instance = bare()
    except TypeError:
        return None
    return sum(1 for _ in instance.parameters())


def main() -> int:
    failures = []
    for dotted in sorted(LIBRARY_MODULE_BASES):
        try:
            cls = resolve(dotted)
        except (ImportError, AttributeError) as error:
            failures.append(f"{dotted}: cannot import ({error!r})")
            continue
        is_module = issubclass(cls, torch.nn.Module)
        count = parameters_of_a_bare_subclass(cls) if is_module else None
        print(f"{dotted}: nn.Module subclass {is_module}; parameters of a bare subclass: "
              f"{'needs arguments' if count is None else count}")
        if not is_module:
            failures.append(f"{dotted} is not an nn.Module")
        if count:
            failures.append(f"{dotted} gives a subclass {count} parameters")
    for failure in failures:
        print("FAIL", failure)
    print("every fact holds" if not failures else f"{len(failures)} facts fail")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
