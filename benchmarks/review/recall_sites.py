"""Sample the sites the engine did not flag, for a recall review (labels in docs/review/).

Usage: python benchmarks/review/recall_sites.py CORPUS FLAGGED.json [--seed 0] [--per-kind 40]
       python benchmarks/review/recall_sites.py CORPUS - ...   (a census: every file, no engine's dump)

Kinds of site: `.numpy()` calls (DET101/DET104), `.data` attributes other than `torch.utils.data`
and `self.data` (DET103), `np.*(...)` calls with an argument and matplotlib plotting calls with an
argument (DET106), and pandas frames, seaborn plots and scikit-learn metrics given an argument
(`lib`, DET106). A site counts as flagged when a diagnostic of its rules is on its line. Prints
the flagged and unflagged counts per kind and writes a seeded sample of the unflagged sites, each
with its context, to `recall-sample.json` for labelling by hand. With `-` for the dump, every
`.py` and notebook of the corpus counts as unflagged: a sample labelled before any engine runs on it.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
from collections.abc import Iterator
from pathlib import Path

from flake8_detach.sources.notebooks import NotebookError, NotebookSkipped, read_notebook

PLOTTING = frozenset(
    "plot scatter imshow hist bar barh errorbar fill_between step stem contour contourf pcolormesh "
    "matshow boxplot semilogy loglog".split()
)
AXES_NAMES = frozenset({"plt", "ax", "axes", "ax1", "ax2"})
# Converting calls of other libraries (DET106's pandas, seaborn and scikit-learn sinks): a kind of
# its own, last, so that the seeded samples of the kinds before it stay what they were.
LIBRARY_FRAMES = {"pd": {"DataFrame", "Series"}, "pandas": {"DataFrame", "Series"}}
LIBRARY_MODULES = frozenset({"sns", "seaborn"})
SKLEARN_METRICS = frozenset(
    "roc_auc_score accuracy_score f1_score precision_score recall_score confusion_matrix classification_report "
    "mean_squared_error mean_absolute_error r2_score average_precision_score roc_curve precision_recall_curve "
    "log_loss balanced_accuracy_score matthews_corrcoef top_k_accuracy_score".split()
)
RULES = {"numpy": {"DET101", "DET104"}, "data": {"DET103"}, "np": {"DET106"}, "plt": {"DET106"},
         "lib": {"DET106"}}
NOT_TENSOR_DATA = ("torch.utils.data", "utils.data", "self.data", "torchvision")


def sites(tree: ast.AST) -> Iterator[tuple[str, int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, base = node.func.attr, node.func.value
            if attr == "numpy" and not node.args:
                yield "numpy", node.lineno, ast.unparse(node)[:100]
            elif isinstance(base, ast.Name) and base.id in ("np", "numpy") and node.args:
                yield "np", node.lineno, ast.unparse(node)[:100]
            elif attr in PLOTTING and node.args and (
                (isinstance(base, ast.Name) and base.id in AXES_NAMES) or isinstance(base, ast.Subscript)
            ):
                yield "plt", node.lineno, ast.unparse(node)[:100]
        if isinstance(node, ast.Call) and node.args and _converting_library_call(node.func):
            yield "lib", node.lineno, ast.unparse(node)[:100]
        if isinstance(node, ast.Attribute) and node.attr == "data":
            text = ast.unparse(node)
            if not text.startswith(NOT_TENSOR_DATA):
                yield "data", node.lineno, text[:100]


def _converting_library_call(func: ast.expr) -> bool:
    """`pd.DataFrame(...)`, `sns.lineplot(...)`, `roc_auc_score(...)` / `metrics.f1_score(...)`."""
    if isinstance(func, ast.Name):
        return func.id in SKLEARN_METRICS
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in SKLEARN_METRICS:
        return True
    base = func.value.id if isinstance(func.value, ast.Name) else None
    return base is not None and (func.attr in LIBRARY_FRAMES.get(base, ()) or base in LIBRARY_MODULES)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("flagged")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-kind", type=int, default=40)
    args = parser.parse_args()
    census = args.flagged == "-"
    flagged = {} if census else json.loads(Path(args.flagged).read_text())
    unflagged: dict[str, list[dict[str, object]]] = {kind: [] for kind in RULES}
    hits = dict.fromkeys(RULES, 0)
    for path in sorted(Path(args.corpus).rglob("*")):
        if str(path) not in flagged and not (census and path.suffix in (".py", ".ipynb")):
            continue
        try:
            source = read_notebook(path).source if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (NotebookError, NotebookSkipped, UnicodeDecodeError, SyntaxError, ValueError):
            continue  # what the engine's dump skips too (a notebook of another language, say)
        lines = source.split("\n")
        reported = {(line, code) for line, _, code in flagged.get(str(path), [])}
        for kind, line, text in sites(tree):
            if any((line, code) in reported for code in RULES[kind]):
                hits[kind] += 1
                continue
            context = "\n".join(
                f"{'>>' if i == line else '  '}{i:4} {lines[i - 1]}"
                for i in range(max(1, line - 3), min(len(lines), line + 1) + 1)
            )
            unflagged[kind].append({"kind": kind, "file": str(path.relative_to(args.corpus)), "line": line,
                                    "site": text, "context": context})
    rng = random.Random(args.seed)
    print({kind: (hits[kind], len(items)) for kind, items in unflagged.items()}, "(flagged, unflagged)")
    sample = [site for items in unflagged.values() for site in rng.sample(items, min(args.per_kind, len(items)))]
    Path("recall-sample.json").write_text(json.dumps(
        {"unflagged": {k: len(v) for k, v in unflagged.items()}, "flagged": hits, "sample": sample}, indent=1))


if __name__ == "__main__":
    main()
