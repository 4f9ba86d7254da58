"""Sample the NumPy/torch boundary sites of a corpus, for a DET107-DET109 census (labels in docs/review/).

Usage: python benchmarks/review/boundary_sites.py CORPUS [--count 30] > boundary-sample.json

Kinds of site: an array becoming a tensor (`torch.from_numpy`, `torch.as_tensor`, `torch.tensor`,
`torch.Tensor`/`FloatTensor`/... of an argument: DET108, DET109), evidence of a dtype, layout or
stride that the boundary refuses (bfloat16, sparse, `.conj()`, flips, `::-1` steps, byte order:
DET107, DET108) and float64 array factories (DET109). The census labels each site as a hazard or
not by reading the code, before any engine runs; `recall_sites.py` samples the other rules' sites.
The sample is spread evenly over the sites found, in file order, so that no file dominates by luck.
"""

from __future__ import annotations

import argparse
import ast
import json
from collections.abc import Iterator
from pathlib import Path

from flake8_detach.sources.notebooks import NotebookError, NotebookSkipped, read_notebook

TO_TORCH = frozenset(
    "from_numpy as_tensor tensor Tensor FloatTensor DoubleTensor LongTensor IntTensor HalfTensor".split()
)
REFUSED_EVIDENCE = frozenset(
    "bfloat16 to_sparse to_sparse_csr to_sparse_coo sparse_coo_tensor sparse_csr_tensor conj "
    "flip fliplr flipud rot90 newbyteorder byteswap".split()
)
FLOAT64_FACTORIES = frozenset("rand randn uniform normal zeros ones linspace loadtxt genfromtxt".split())


def _dotted(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return ""


def sites(tree: ast.AST) -> Iterator[tuple[str, int, str]]:
    """(kind, line, text) of every boundary site of a tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, base = node.func.attr, _dotted(node.func.value)
            if base == "torch" and attr in TO_TORCH and node.args:
                yield "to_torch", node.lineno, _dotted(node)[:100]
            elif attr in REFUSED_EVIDENCE:
                yield "refused", node.lineno, _dotted(node)[:100]
            elif base in ("np", "numpy", "np.random", "numpy.random") and attr in FLOAT64_FACTORIES:
                yield "float64", node.lineno, _dotted(node)[:100]
        elif isinstance(node, ast.Attribute) and node.attr == "bfloat16":
            yield "refused", node.lineno, _dotted(node)[:100]
        elif isinstance(node, ast.Slice) and isinstance(node.step, ast.UnaryOp) and isinstance(
            node.step.op, ast.USub
        ):
            yield "refused", node.lineno, "::-" + _dotted(node.step.operand)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("--count", type=int, default=30)
    args = parser.parse_args()
    found: list[dict[str, object]] = []
    for path in sorted(Path(args.corpus).rglob("*")):
        if path.suffix not in (".py", ".ipynb") or not path.is_file():
            continue
        try:
            source = read_notebook(path).source if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (NotebookError, NotebookSkipped, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        lines = source.split("\n")
        for kind, line, text in sorted(set(sites(tree)), key=lambda site: site[1]):
            context = "\n".join(
                f"{'>>' if i == line else '  '}{i:4} {lines[i - 1]}"
                for i in range(max(1, line - 3), min(len(lines), line + 1) + 1)
            )
            found.append({"kind": kind, "file": str(path.relative_to(args.corpus)), "line": line,
                          "site": text, "context": context})
    step = max(1.0, len(found) / args.count) if found else 1.0
    sample = [found[int(i * step)] for i in range(min(args.count, len(found)))]
    counts: dict[str, int] = {}
    for site in found:
        counts[str(site["kind"])] = counts.get(str(site["kind"]), 0) + 1
    print(json.dumps({"found": counts, "sample": sample}, indent=1))


if __name__ == "__main__":
    main()
