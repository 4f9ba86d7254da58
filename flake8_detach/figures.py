"""Autograd-graph figures for the rule pages, drawn from the real ``grad_fn`` chain at run time.

Each figure runs a rule's fixture on the CPU up to the flagged line, walks
``grad_fn.next_functions`` from the tensor the rule is about, and marks what the hazard does to
that graph: where ``.numpy()`` would leave it, what
``.detach()`` cuts, which copy ``.cpu()`` records, which saved tensor ``.data`` writes behind
autograd's back. Every label that states a fact (an error message, a version counter, a gradient)
is read from the run, not typed in.

Needs torch (the ``verify`` extra) and, to render SVG, the ``graphviz`` package (``docs`` extra)
plus Graphviz's ``dot``. The linting path never imports this module; torch is imported lazily so
that importing it stays cheap and safe without torch.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent

# Node kinds -> Graphviz attributes. One palette for every figure so the pages read alike.
NODE_STYLES: dict[str, dict[str, str]] = {
    "leaf": {"shape": "box", "style": "rounded,filled", "fillcolor": "#dbe9f6", "color": "#4a79a5"},
    "function": {"shape": "box", "style": "rounded,filled", "fillcolor": "#eeeeee", "color": "#777777"},
    "tensor": {"shape": "box", "style": "filled", "fillcolor": "#fff4c2", "color": "#b59b2a"},
    "saved": {"shape": "box", "style": "dashed,filled", "fillcolor": "#fff4c2", "color": "#b59b2a"},
    "hazard": {"shape": "box", "style": "filled", "fillcolor": "#fde0dd", "color": "#c0392b",
               "fontcolor": "#8e1b10"},
    "safe": {"shape": "box", "style": "filled", "fillcolor": "#e3f4e1", "color": "#3c8d2f",
             "fontcolor": "#1f5a17"},
}
EDGE_STYLES: dict[str, dict[str, str]] = {
    "flow": {"color": "#777777"},
    "saved": {"style": "dotted", "color": "#b59b2a", "arrowhead": "none"},
    "hazard": {"color": "#c0392b", "fontcolor": "#c0392b"},
    "cut": {"style": "dashed", "color": "#c0392b", "fontcolor": "#c0392b", "arrowhead": "tee"},
    "safe": {"color": "#3c8d2f", "fontcolor": "#3c8d2f"},
}


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    kind: str


@dataclass(frozen=True)
class Edge:
    tail: str
    head: str
    kind: str = "flow"
    label: str = ""


@dataclass
class Figure:
    """A figure before layout: nodes and edges with stable ids, plus its caption."""

    code: str
    title: str
    caption: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    _counter: int = 0

    def add(self, label: str, kind: str) -> str:
        node_id = f"n{self._counter:02d}"
        self._counter += 1
        self.nodes.append(Node(node_id, label, kind))
        return node_id

    def link(self, tail: str, head: str, kind: str = "flow", label: str = "") -> None:
        self.edges.append(Edge(tail, head, kind, label))


# ---------------------------------------------------------------------------------------------
# Walking the real graph


def describe(tensor: Any) -> str:
    """`(4, 2) float32`: shape and dtype, the facts a reader needs to match a node to code."""
    return f"{tuple(tensor.shape)} {str(tensor.dtype).removeprefix('torch.')}"


def tensor_names(namespace: dict[str, Any]) -> dict[int, str]:
    """Names for the tensors a fixture holds: its variables and its modules' parameters."""
    import torch

    names: dict[int, str] = {}
    for name, value in sorted(namespace.items()):
        if isinstance(value, torch.nn.Module):
            for parameter_name, parameter in value.named_parameters():
                names.setdefault(id(parameter), f"{name}.{parameter_name}")
        elif isinstance(value, torch.Tensor) and not name.startswith("_"):
            names.setdefault(id(value), name)
    return names


@dataclass
class GraphIds:
    """Node ids of a drawn graph, so that marks can point at its parts."""

    tensor: str
    functions: dict[int, str]  # keyed by id(grad_fn)
    saved: dict[tuple[int, str], str]  # keyed by (id(grad_fn), saved name such as "result")


def add_graph(figure: Figure, tensor: Any, label: str, names: dict[int, str],
              show_saved: bool = False) -> GraphIds:
    """Add ``tensor`` and every autograd node behind it (with the tensors each node saved for
    backward when ``show_saved``), and return their node ids.

    Breadth-first from ``tensor.grad_fn`` in ``next_functions`` order, which is fixed by the
    operator, so the ids are the same on every run.
    """
    function_ids: dict[int, str] = {}
    saved_ids: dict[tuple[int, str], str] = {}
    order: list[Any] = []
    queue = [tensor.grad_fn] if tensor.grad_fn is not None else []
    while queue:
        function = queue.pop(0)
        if id(function) in function_ids:
            continue
        if hasattr(function, "variable"):  # AccumulateGrad: where a leaf's gradient lands
            variable = function.variable
            name = names.get(id(variable), "leaf")
            node_label = f"{name}\n{describe(variable)}\nAccumulateGrad"
            function_ids[id(function)] = figure.add(node_label, "leaf")
        else:
            function_ids[id(function)] = figure.add(function.name(), "function")
        order.append(function)
        queue.extend(child for child, _ in function.next_functions if child is not None)
    for function in order:
        for child, _ in function.next_functions:
            if child is not None:
                figure.link(function_ids[id(child)], function_ids[id(function)])
        if show_saved:
            for attribute in sorted(a for a in dir(function) if a.startswith("_saved_")):
                saved = getattr(function, attribute)
                if hasattr(saved, "shape"):
                    saved_name = attribute.removeprefix("_saved_")
                    saved_id = figure.add(f"saved {saved_name}\n{describe(saved)}", "saved")
                    saved_ids[(id(function), saved_name)] = saved_id
                    figure.link(saved_id, function_ids[id(function)], "saved")
    tensor_id = figure.add(f"{label}\n{describe(tensor)}\nrequires_grad={tensor.requires_grad}", "tensor")
    if tensor.grad_fn is not None:
        figure.link(function_ids[id(tensor.grad_fn)], tensor_id)
    return GraphIds(tensor_id, function_ids, saved_ids)


def error_of(action: Callable[[], object]) -> str:
    """What ``action`` raised, as `TypeName: first sentence`, or `no error`."""
    try:
        action()
    except Exception as error:  # noqa: BLE001 - the figure reports whatever PyTorch raised
        first = re.split(r"\. |: \[", str(error))[0].rstrip(".")
        return f"{type(error).__name__}: {wrap(first, 50)}"
    return "no error"


def wrap(text: str, width: int) -> str:
    """Break a label into lines of about ``width`` characters (Graphviz does not wrap)."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Running a fixture up to its flagged line


@dataclass(frozen=True)
class Source:
    """A fixture whose code a figure runs."""

    text: str
    origin: str  # repository-relative path
    expect_line: int  # 1-based line of the `# expect:` comment


def fixture_source(relative_path: str) -> Source:
    text = (REPO_ROOT / relative_path).read_text(encoding="utf-8")
    return Source(text, relative_path, expected_line(text))


def expected_line(text: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if re.search(r"#\s*expect:\s*DET\d+", line):
            return number
    raise ValueError("the figure's source has no `# expect:` line")


@contextmanager
def cpu_device() -> Iterator[None]:
    """Fixtures read DEVICE from the environment; figures are drawn on the CPU."""
    previous = os.environ.get("DEVICE")
    os.environ["DEVICE"] = "cpu"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["DEVICE"]
        else:
            os.environ["DEVICE"] = previous


def run_until_flagged(source: Source) -> dict[str, Any]:
    """Execute the statements before the flagged one and return the resulting namespace."""
    import torch

    module = ast.parse(source.text)
    before = [s for s in module.body if (s.end_lineno or s.lineno) < source.expect_line]
    namespace: dict[str, Any] = {"__name__": "__figure__"}
    torch.manual_seed(0)
    with cpu_device():
        # Running the fixture is the point: the graph drawn is the one its code builds.
        exec(compile(ast.Module(before, type_ignores=[]), source.origin, "exec"), namespace)  # noqa: S102
    return namespace


def run_flagged(source: Source, namespace: dict[str, Any]) -> str:
    """Execute the flagged statement itself in ``namespace``; return its code (for the label)."""
    statement = next(s for s in ast.parse(source.text).body if s.lineno <= source.expect_line <= (s.end_lineno or s.lineno))
    with cpu_device():
        exec(compile(ast.Module([statement], type_ignores=[]), source.origin, "exec"), namespace)  # noqa: S102
    return ast.unparse(statement)


# ---------------------------------------------------------------------------------------------
# One builder per rule


def _where(source: Source) -> str:
    import torch

    return f"`{source.origin}` (drawn on cpu with torch {torch.__version__.split('+')[0]})"


def numpy_and_detach(figure: Figure, tensor: Any, label: str, numpy_call: str,
                     numpy_action: Callable[[], object], names: dict[int, str]) -> None:
    """The shared part of DET101 and DET106: the graph, the failing exit, and the detached one."""
    tensor_id = add_graph(figure, tensor, label, names).tensor
    failure = figure.add(f"{numpy_call}\n{error_of(numpy_action)}", "hazard")
    figure.link(tensor_id, failure, "hazard", "leaves the graph")
    detached = tensor.detach()
    detached_id = figure.add(
        f"{label}.detach()\nrequires_grad={detached.requires_grad}, grad_fn={detached.grad_fn}\n"
        f"same storage: {detached.data_ptr() == tensor.data_ptr()}",
        "safe",
    )
    figure.link(tensor_id, detached_id, "cut", "detach() cuts here")
    array = detached.numpy()
    result = figure.add(f"{label}.detach().numpy()\nnumpy.ndarray {array.shape} {array.dtype}", "safe")
    figure.link(detached_id, result, "safe")


def det101() -> Figure:
    source = fixture_source("fixtures/det101/flag_model_output_cpu_between.py")
    namespace = run_until_flagged(source)
    outputs = namespace["outputs"]
    figure = Figure(
        "DET101",
        "DET101: outputs.cpu().numpy() on a model output",
        f"The autograd graph of `outputs` in {_where(source)}. `.cpu()` adds nothing on the "
        "CPU (it returns the same tensor), so `.numpy()` still meets a tensor with a `grad_fn` "
        "and raises; `.detach()` returns a tensor on the same storage with no graph, which "
        "NumPy can take.",
    )
    numpy_and_detach(figure, outputs.cpu(), "outputs", "outputs.cpu().numpy()",
                     lambda: outputs.cpu().numpy(), tensor_names(namespace))
    return figure


def det102() -> Figure:
    import torch

    source = fixture_source("fixtures/det102/flag_cpu_then_detach.py")
    namespace = run_until_flagged(source)
    loss = namespace["loss"]
    figure = Figure(
        "DET102",
        "DET102: a device copy before .detach() is recorded in the graph",
        f"The autograd graph of `loss` in {_where(source)}. On the CPU `loss.cpu() is loss` "
        f"is {loss.cpu() is loss}: no copy, no node. To show what `.cpu()` records for a CUDA "
        "tensor on a host without a GPU, the copy is drawn with `.to(\"meta\")`, a real "
        "cross-device copy through the same `_to_copy` operator: it adds a ToCopyBackward0 node, "
        "which `.detach()` then cuts off again. Detaching first copies plain data.",
    )
    names = tensor_names(namespace)
    loss_id = add_graph(figure, loss, "loss", names).tensor
    copied = loss.to("meta")
    copy_fn = figure.add(f"{copied.grad_fn.name()}\nrecorded by the copy", "hazard")
    figure.link(loss_id, copy_fn, "hazard", 'loss.cpu() on cuda\n(drawn: loss.to("meta"))')
    copy_id = figure.add(f"the copy\n{describe(copied)} on {copied.device}\nrequires_grad={copied.requires_grad}",
                         "hazard")
    figure.link(copy_fn, copy_id, "hazard")
    logged = copied.detach()
    logged_id = figure.add(f"loss.cpu().detach()\ngrad_fn={logged.grad_fn}", "safe")
    figure.link(copy_id, logged_id, "cut", "detach() cuts here,\nafter the copy was recorded")
    detached = loss.detach()
    detached_id = figure.add(f"loss.detach()\ngrad_fn={detached.grad_fn}", "safe")
    figure.link(loss_id, detached_id, "cut", "detach() cuts first")
    moved = detached.to("meta")
    moved_id = figure.add(
        f"loss.detach().cpu()\n(drawn: .to(\"meta\"))\ngrad_fn={moved.grad_fn}: plain data", "safe"
    )
    figure.link(detached_id, moved_id, "safe")
    assert copied.grad_fn is not None and moved.grad_fn is None and isinstance(copied, torch.Tensor)
    return figure


def det103() -> Figure:
    import torch

    source = fixture_source("fixtures/det103/flag_inplace_on_saved_output.py")
    namespace = run_until_flagged(source)
    inputs, outputs = namespace["inputs"], namespace["outputs"]
    true_gradient = inputs.detach().exp()
    figure = Figure(
        "DET103",
        "DET103: an in-place write through .data to a tensor saved for backward",
        f"The autograd graph of `outputs` in {_where(source)}. `exp` saves its result for "
        "backward (the dotted node). A write through `.data` reaches the same storage but leaves "
        "the tensor's version counter alone, so `backward()` cannot tell and returns a wrong "
        "gradient; the same write through `.detach()` bumps the counter and backward refuses.",
    )
    names = tensor_names(namespace)
    graph = add_graph(figure, outputs, "outputs", names, show_saved=True)
    outputs_id = graph.tensor
    version_before = outputs._version
    write = run_flagged(source, namespace)  # the fixture's own `.data` write
    write_id = figure.add(f"{write}\nversion {version_before} -> {outputs._version}: unseen", "hazard")
    saved_result = outputs.grad_fn._saved_result
    figure.link(write_id, graph.saved[(id(outputs.grad_fn), "result")], "hazard",
                f"writes here\n(same storage: {saved_result.data_ptr() == outputs.data_ptr()})")
    outputs.sum().backward()
    result_id = figure.add(
        f"outputs.sum().backward()\ninputs.grad = {_values(inputs.grad)}\n"
        f"true gradient exp(inputs) = {_values(true_gradient)}",
        "hazard",
    )
    figure.link(outputs_id, result_id, "hazard")

    # The same write through .detach(), on a fresh run of the fixture up to the flagged line.
    fresh = run_until_flagged(source)
    detached_write = write.replace(".data", ".detach()")
    exec(detached_write, fresh)  # noqa: S102
    fresh_outputs = fresh["outputs"]
    refused = figure.add(
        f"{detached_write} instead\nversion 0 -> {fresh_outputs._version}: the write is seen,\n"
        "backward() raises instead of lying:\n"
        f"{error_of(lambda: fresh_outputs.sum().backward())}",
        "safe",
    )
    figure.link(outputs_id, refused, "safe", "same write,\ntracked")
    assert not torch.equal(inputs.grad, true_gradient)
    return figure


def flagged_call_argument(source: Source, function: str) -> str:
    """The source of the first argument of the call to ``function`` on the flagged line."""
    for node in ast.walk(ast.parse(source.text)):
        if (isinstance(node, ast.Call) and node.lineno == source.expect_line and node.args
                and ast.unparse(node.func) == function):
            return ast.unparse(node.args[0])
    raise ValueError(f"no call to {function} on line {source.expect_line} of {source.origin}")


def det106() -> Figure:
    import numpy as np

    source = fixture_source("fixtures/det106/flag_asarray_model_output.py")
    namespace = run_until_flagged(source)
    argument = flagged_call_argument(source, "np.asarray")
    outputs = eval(argument, namespace)  # the fixture's own expression, in its own namespace
    figure = Figure(
        "DET106",
        "DET106: np.asarray on a model output",
        f"The autograd graph of `{argument}` in {_where(source)}. NumPy converts through "
        "`Tensor.__array__`, which calls `.numpy()`: the same exit from the graph as DET101, "
        "without `.numpy` in the source (and `model.eval()` does not turn grad off).",
    )
    numpy_and_detach(figure, outputs, argument, f"np.asarray({argument})\n-> Tensor.__array__ -> .numpy()",
                     lambda: np.asarray(outputs), tensor_names(namespace))
    return figure


FIGURES: dict[str, Callable[[], Figure]] = {"DET101": det101, "DET102": det102, "DET103": det103,
                                            "DET106": det106}


def _values(tensor: Any) -> str:
    return "[" + ", ".join(f"{value:.3f}" for value in tensor.tolist()) + "]"


# ---------------------------------------------------------------------------------------------
# Output


def to_dot(figure: Figure) -> str:
    """Graphviz source with nodes and edges sorted, so equal graphs give byte-equal files."""
    import graphviz

    # The caption travels in the DOT source, where the page generator reads it back.
    graph = graphviz.Digraph(figure.code, comment=f"caption: {figure.caption}", format="svg")
    graph.attr(rankdir="TB", fontname="Helvetica", fontsize="12", labelloc="t", label=figure.title,
               bgcolor="white", nodesep="0.35", ranksep="0.4")
    graph.attr("node", fontname="Helvetica", fontsize="10")
    graph.attr("edge", fontname="Helvetica", fontsize="9")
    for node in sorted(figure.nodes, key=lambda n: n.id):
        graph.node(node.id, node.label, **NODE_STYLES[node.kind])
    for edge in sorted(figure.edges, key=lambda e: (e.tail, e.head, e.kind, e.label)):
        attributes = dict(EDGE_STYLES[edge.kind])
        if edge.label:
            attributes["label"] = edge.label
        graph.edge(edge.tail, edge.head, **attributes)
    return str(graph.source)


def dot_available() -> bool:
    from shutil import which

    return which("dot") is not None


def to_svg(dot_source: str) -> str:
    """Render with the system's `dot` (through the graphviz package); deterministic for a given
    Graphviz version, which the SVG names in its first comment."""
    import graphviz

    svg = graphviz.Source(dot_source).pipe(format="svg", encoding="utf-8")
    return str(svg).replace("\r\n", "\n")


def graphviz_version_of(svg: str) -> str | None:
    """The Graphviz version an SVG was rendered with (`2.43.0`), from its header comment."""
    match = re.search(r"Generated by graphviz version (\S+)", svg)
    return match.group(1) if match else None


def build(code: str) -> Figure:
    return FIGURES[code]()
