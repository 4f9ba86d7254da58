"""Bounded, deterministic fuzzing of the checker and the fixer.

Two sources of programs: hypothesmith (random, syntactically valid Python from the grammar,
put in front of a fixture so that the rules have torch code to look at) and random mutations
of the fixtures (inserted hazards, brackets, newlines, form feeds, deleted or swapped lines).
The properties are the ones a linter run on every commit needs:

* the checker returns diagnostics or raises :class:`AnalysisError`, nothing else;
* a fix leaves text that parses, fixing it again changes nothing, and every token and every
  line outside the fixed expressions is unchanged (token streams compared with `tokenize`).

`benchmarks/fuzz_long.py` runs the same properties for much longer with random seeds.
"""

from __future__ import annotations

import ast
import re
import tokenize
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from flake8_detach.diagnostics import Diagnostic
from flake8_detach.engine import AnalysisError, analyze, parse
from flake8_detach.fixing.fixer import FixResult, fix_source
from flake8_detach.fixing.rewrites import NoGradWrite

FIXTURES = sorted(Path(__file__).resolve().parent.parent.joinpath("fixtures").glob("*/*.py"))
FIXTURE_SOURCES = [path.read_text(encoding="utf-8") for path in FIXTURES]
FLAGGING_SOURCES = [path.read_text(encoding="utf-8") for path in FIXTURES if path.name.startswith("flag_")]

# Pieces that stress the rules (hazards, grad contexts, aliasing), the fixer's layout handling
# (comments, continuation lines, odd whitespace) and the parsers (brackets, quotes, bytes).
SNIPPETS = (
    ".numpy()", ".detach()", ".cpu()", ".cuda()", ".to('cuda')", ".data", ".data.numpy()",
    ".cpu().detach()", ".numpy(force=True)", ".requires_grad_()", "x.data = y\n", "p.data.add_(1)\n",
    "with torch.no_grad():\n    ", "@torch.no_grad()\ndef g(t):\n    return t.numpy()\n",
    "torch.ones(2, requires_grad=True)", "import numpy as np\n", "np.asarray(", "  # noqa: DET101",
    "  # noqa", "# comment\n", "\\\n", "\r\n", "\r", "\x0c", "\t", "    ", "\n", "(", ")", "[", "]",
    "{", "}", ",", ":", "=", "'", '"', '"""', "lambda: ", "await ", "yield ", "*", ":=", "\x00", "é",
    "global w\n", "del w\n", "if True:\n    ", "else:\n    ", "return ", "async def h():\n    ",
)

# Method links that keep the program valid when swapped for one another: the rules' own vocabulary.
LINKS = (".numpy()", ".detach()", ".cpu()", ".data", ".cuda()", ".numpy(force=True)", ".clone()", "")
MUTATIONS = (
    "insert", "delete", "duplicate_line", "delete_line", "swap_lines", "indent_line", "truncate",
    "swap_link", "swap_link", "insert_link",  # twice as likely: valid programs reach the fixer
)
_LINK_PATTERN = re.compile(r"\.(?:numpy|detach|cpu|cuda|clone)\([^()]*\)|\.data\b")

# Deterministic (the same examples on every run and machine), no deadline (CI machines vary).
FUZZ = settings(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@dataclass(frozen=True)
class Mutation:
    kind: str
    first: int
    second: int
    snippet: str


def apply_mutation(source: str, mutation: Mutation) -> str:
    """One edit, placed by the integers modulo the text's size (so every edit lands somewhere)."""
    size = max(len(source), 1)
    lines = source.splitlines(keepends=True) or [""]
    line, other = mutation.first % len(lines), mutation.second % len(lines)
    if mutation.kind == "insert":
        at = mutation.first % (size + 1)
        return source[:at] + mutation.snippet + source[at:]
    if mutation.kind == "delete":
        at = mutation.first % size
        return source[:at] + source[at + 1 + mutation.second % 8 :]
    if mutation.kind == "duplicate_line":
        return "".join(lines[: line + 1] + [lines[line]] + lines[line + 1 :])
    if mutation.kind == "delete_line":
        return "".join(lines[:line] + lines[line + 1 :])
    if mutation.kind == "swap_lines":
        lines[line], lines[other] = lines[other], lines[line]
        return "".join(lines)
    if mutation.kind in ("swap_link", "insert_link"):
        found = list(_LINK_PATTERN.finditer(source))
        if not found:
            return source
        match = found[mutation.first % len(found)]
        link = LINKS[mutation.second % len(LINKS)]
        if mutation.kind == "insert_link":
            return source[: match.start()] + link + source[match.start() :]
        return source[: match.start()] + link + source[match.end() :]
    if mutation.kind == "indent_line":
        lines[line] = "    " + lines[line]
        return "".join(lines)
    return source[: mutation.first % (size + 1)]  # truncate


mutations = st.builds(
    Mutation,
    st.sampled_from(MUTATIONS),
    st.integers(min_value=0, max_value=1 << 20),
    st.integers(min_value=0, max_value=1 << 20),
    st.sampled_from(SNIPPETS),
)


@st.composite
def mutated_fixtures(draw: st.DrawFn) -> str:
    source = draw(st.one_of(st.sampled_from(FLAGGING_SOURCES), st.sampled_from(FIXTURE_SOURCES)))
    for mutation in draw(st.lists(mutations, min_size=1, max_size=4)):
        source = apply_mutation(source, mutation)
    return source


@st.composite
def generated_programs(draw: st.DrawFn) -> str:
    """hypothesmith's random program, then a fixture: the fixture brings torch into scope."""
    program = draw(hypothesmith.from_grammar())
    if program and not program.endswith(("\n", "\r")):
        program += "\n"
    return program + draw(st.sampled_from(FIXTURE_SOURCES))


# --- the properties (also used by benchmarks/fuzz_long.py) ------------------------------------

def python_parses(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def check_never_raises(source: str) -> None:
    """Diagnostics or AnalysisError; with flake8's tree the same diagnostics as without it."""
    try:
        alone = _where(analyze(source).diagnostics)
    except AnalysisError as error:
        assert str(error) and "\n" not in str(error)
        return
    if python_parses(source):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for `1if x else 2`: not ours to show
            tree = ast.parse(source)
        assert _where(analyze(source, tree=tree).diagnostics) == alone


def _where(diagnostics: Sequence[Diagnostic]) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.column, d.message) for d in diagnostics]


@dataclass(frozen=True)
class Span:
    start: tuple[int, int]
    end: tuple[int, int]


def fix_spans(source: str) -> list[Span]:
    """Where the fixes of ``source``'s diagnostics may write: the code range of each fix's node."""
    analysis = analyze(source)
    if analysis.module is None:
        return []
    wrapper = MetadataWrapper(analysis.module, unsafe_skip_copy=True)
    ranges = wrapper.resolve(PositionProvider)
    spans = []
    for diagnostic in analysis.diagnostics:
        if diagnostic.fix is not None and diagnostic.fix.node in ranges:
            code_range = ranges[diagnostic.fix.node]
            spans.append(Span((code_range.start.line, code_range.start.column), (code_range.end.line, code_range.end.column)))
    return spans


def _tokens(source: str) -> list[tokenize.TokenInfo] | None:
    # Lines split where libcst splits them (a lone CR too), so both agree on positions.
    lines = iter(_PHYSICAL_LINE.findall(source))
    try:
        found = list(tokenize.generate_tokens(lambda: next(lines, "")))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    ignored = (tokenize.DEDENT, tokenize.ENDMARKER)  # no text: an indented block's end moves with it
    return [token for token in found if token.type not in ignored]


T = TypeVar("T")
# Lines as Python ends them (str.splitlines also splits at form feeds and other separators).
_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _outside(items: Sequence[T], inside: Sequence[bool]) -> list[list[T]]:
    """The runs of ``items`` between the spans: what a fix must carry over unchanged, in order."""
    segments: list[list[T]] = [[]]
    previous = False
    for item, covered in zip(items, inside):
        if covered and not previous:  # a span starts: what follows it is a new segment
            segments.append([])
        elif not covered:
            segments[-1].append(item)
        previous = covered
    return segments


def _find(haystack: Sequence[T], needle: Sequence[T], start: int) -> int:
    for index in range(start, len(haystack) - len(needle) + 1):
        if list(haystack[index : index + len(needle)]) == list(needle):
            return index
    return -1


def _keeps_segments(fixed: Sequence[T], segments: list[list[T]]) -> tuple[bool, list[T] | None]:
    """Whether ``fixed`` is segment, anything, segment, ..., anything, segment (glob matching).

    The first segment must start the output and the last must end it; the ones between are
    found leftmost-first, which finds a match whenever one exists. Returns the first segment
    that could not be placed.
    """
    if len(segments) == 1:  # no span at all: nothing may change
        return list(fixed) == segments[0], None if list(fixed) == segments[0] else segments[0]
    if list(fixed[: len(segments[0])]) != segments[0]:
        return False, segments[0]
    position = len(segments[0])
    for segment in segments[1:-1]:
        found = _find(fixed, segment, position)
        if found < 0:
            return False, segment
        position = found + len(segment)
    last = segments[-1]
    if len(fixed) - len(last) < position or list(fixed[len(fixed) - len(last) :]) != last:
        return False, last
    return True, None


def _offsets(text: str) -> list[int]:
    """Character offset where each (1-based) physical line starts, as libcst counts lines."""
    starts, total = [0, 0], 0
    for line in _PHYSICAL_LINE.findall(text):
        total += len(line)
        starts.append(total)
    return starts


def assert_changes_only_inside(original: str, fixed: str, spans: Sequence[Span]) -> None:
    """Every token and every character outside the fixed expressions' spans is carried over.

    The original, minus the spans, falls into segments; the fixed text must be those segments
    in order with anything in the gaps. Checked on `tokenize` tokens and on characters (which
    also covers whitespace, comments and line endings that tokens do not show).
    """
    assert spans, "the fix changed a file that had no fixable diagnostic"

    def covered(start: tuple[int, int], end: tuple[int, int]) -> bool:
        return any(span.start <= start and end <= span.end for span in spans)

    before, after = _tokens(original), _tokens(fixed)
    if before is not None and after is not None:
        keys_after = [(token.type, token.string) for token in after]
        segments = _outside([(t.type, t.string) for t in before], [covered(t.start, t.end) for t in before])
        kept, missing = _keeps_segments(keys_after, segments)
        assert kept, f"tokens changed outside the fixes: {[string for _, string in missing or []]}"
    starts = _offsets(original)
    inside = [False] * len(original)
    for span in spans:
        first = starts[span.start[0]] + span.start[1] if span.start[0] < len(starts) else len(original)
        last = starts[span.end[0]] + span.end[1] if span.end[0] < len(starts) else len(original)
        inside[first:last] = [True] * (last - first)
    text_segments = _outside(list(original), inside)
    text_kept, text_missing = _keeps_segments(list(fixed), text_segments)
    assert text_kept, f"text changed outside the fixes: {''.join(text_missing or [])!r}"


def check_fix(source: str, unsafe: bool) -> FixResult:
    """The fixer never raises; what it writes parses, is a fixed point, and stays in its spans."""
    result = fix_source(source, unsafe=unsafe)
    assert result.original == source
    if result.error is not None:
        assert result.source == source and "\n" not in result.error
        return result
    if not result.changed:
        return result
    parse(result.source)  # raises if libcst cannot read what we wrote
    if python_parses(source):
        assert python_parses(result.source), "the fix broke a file Python could compile"
    again = fix_source(result.source, unsafe=unsafe)
    assert again.error is None and again.source == result.source, "fixing twice changed more"
    assert_changes_only_inside(source, without_added_import(source, result), fix_spans_for(source, unsafe))
    return result


def without_added_import(source: str, result: FixResult) -> str:
    """The fixed text less the `import torch` line a DET103 write fix adds (with the blank line
    libcst's AddImportsVisitor puts after it): the one change a fix may make outside its span."""
    if not any(isinstance(d.fix, NoGradWrite) and d.fix.import_torch for d in result.applied):
        return result.source
    before, after = source.splitlines(keepends=True), result.source.splitlines(keepends=True)
    for index, line in enumerate(after):
        if line.rstrip("\r\n") == "import torch" and (index >= len(before) or before[index] != line):
            blank = index + 1 < len(after) and not after[index + 1].strip() and (index >= len(before) or bool(before[index].strip()))
            return "".join(after[:index] + after[index + 1 + int(blank):])
    raise AssertionError("a fix said it adds `import torch`, but no such line was added")


def test_a_data_read_before_a_move_and_detach_stays_in_its_span() -> None:
    """The case hypothesis found: `.data` dropped from `x.data.cpu().detach()` made a DET102
    diagnostic the first pass did not have; the one-step fix stays inside its own span."""
    source = ("import torch\nsource = torch.nn.BatchNorm1d(3)\ntarget = torch.nn.BatchNorm1d(3)\n"
              "target.bias.data = source.bias.data.cpu().detach()  # expect: DET103\n")
    check_fix(source, unsafe=True)


def fix_spans_for(source: str, unsafe: bool) -> list[Span]:
    del unsafe  # every fix's node counts: the spans are where a fix may write, chosen or not
    return fix_spans(source)


def check_everything(source: str) -> str:
    """Run every property; return what happened, for the statistics (`hypothesis.event`)."""
    check_never_raises(source)
    check_fix(source, unsafe=False)
    result = check_fix(source, unsafe=True)
    if result.error is not None:
        return "refused (AnalysisError)"
    if result.changed:
        return "fixed"
    return "diagnostics, none fixed" if result.remaining else "nothing to report"


# --- bounded runs for the test suite ------------------------------------------------------

@settings(FUZZ, max_examples=1500)
@given(mutated_fixtures())
def test_mutated_fixtures(source: str) -> None:
    event(check_everything(source))


@settings(FUZZ, max_examples=15)
@given(generated_programs())
def test_hypothesmith_programs(source: str) -> None:
    event(check_everything(source))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_fixture_fix_stays_in_its_spans(path: Path) -> None:
    """The unmutated fixtures: the fixes that matter most, each checked token by token."""
    source = path.read_text(encoding="utf-8")
    for unsafe in (False, True):
        check_fix(source, unsafe)


def test_span_check_catches_a_change_outside_the_fix() -> None:
    """The checker of the property can fail: an edit away from the fixed call is caught."""
    source = "import torch\nw = torch.ones(2, requires_grad=True)\na = w.numpy()\nb = 1\n"
    spans = fix_spans(source)
    assert spans
    assert_changes_only_inside(source, source.replace("w.numpy()", "w.detach().numpy()"), spans)
    with pytest.raises(AssertionError, match="outside the fixes"):
        assert_changes_only_inside(source, source.replace("b = 1", "b = 2"), spans)
    with pytest.raises(AssertionError, match="outside the fixes"):
        assert_changes_only_inside(source, source.replace("b = 1\n", "b = 1  \n"), spans)


@pytest.mark.parametrize(
    "source",
    [
        # Found by fuzz_long: two identical fixed lines once confused a diff-based comparison.
        (
            "import torch\nm = torch.nn.Linear(2, 2)\nout = m(torch.ones(1, 2))\n"
            "host = out.cpu(non_blocking=True).detach()  # one\nhost = out.cpu(non_blocking=True).detach()  # one\n"
        ),
        # A lone CR inside brackets: tokenize and libcst must agree on line numbers.
        "import numpy as np\nimport torch\nmodel = torch.nn.Linear(\r3, 2)\nscores = np.exp(model(torch.randn(2, 3)))\n",
        # The unsafe DET103 fix wraps the first statement of the file in `with torch.no_grad():`.
        "import torch\nweights = torch.ones(2, requires_grad=True)\nweights.data.zero_()  # c\n\nprint(weights)\n",
    ],
    ids=["duplicate-lines", "lone-cr-in-brackets", "statement-wrapped"],
)
def test_fuzz_regressions(source: str) -> None:
    assert check_everything(source) == "fixed"


def test_mutations_make_broken_and_valid_programs() -> None:
    """The mutation strategy reaches both sides of the parser, or it fuzzes nothing useful."""
    source = FIXTURE_SOURCES[0]
    broken = apply_mutation(source, Mutation("insert", 0, 0, "("))
    assert not python_parses(broken)
    assert python_parses(apply_mutation(source, Mutation("duplicate_line", 0, 0, "")))
    assert isinstance(parse(source), cst.Module)
