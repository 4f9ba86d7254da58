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
import difflib
import re
import tokenize
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from flake8_detach.diagnostics import Diagnostic
from flake8_detach.engine import AnalysisError, analyze, parse
from flake8_detach.fixer import FixResult, fix_source

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
        assert _where(analyze(source, tree=ast.parse(source)).diagnostics) == alone


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


# Lines as Python ends them (str.splitlines also splits at form feeds and other separators).
_PHYSICAL_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _inside(start: tuple[int, int], end: tuple[int, int], spans: Sequence[Span]) -> bool:
    return any(span.start <= start and end <= span.end for span in spans)


def _touches(start: tuple[int, int], end: tuple[int, int], spans: Sequence[Span]) -> bool:
    return any(span.start <= end and start <= span.end for span in spans)


def assert_changes_only_inside(original: str, fixed: str, spans: Sequence[Span]) -> None:
    """Every token and every line the fix touched lies in a fixed expression's span."""
    assert spans, "the fix changed a file that had no fixable diagnostic"
    before, after = _tokens(original), _tokens(fixed)
    if before is not None and after is not None:
        keys_before = [(token.type, token.string) for token in before]
        keys_after = [(token.type, token.string) for token in after]
        matcher = difflib.SequenceMatcher(None, keys_before, keys_after, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            changed = [token.string for token in after[j1:j2]]
            if i1 < i2:
                start, end = before[i1].start, before[i2 - 1].end
                ok = _inside(start, end, spans)
            else:  # a pure insertion: the gap between two original tokens must touch a span
                start = before[i1 - 1].end if i1 > 0 else (1, 0)
                end = before[i1].start if i1 < len(before) else start
                ok = _touches(start, end, spans)
            assert ok, f"tokens changed outside the fixes at {start}-{end}: {changed}"
    line_spans = [(span.start[0], span.end[0]) for span in spans]
    lines_before, lines_after = _PHYSICAL_LINE.findall(original), _PHYSICAL_LINE.findall(fixed)
    matcher = difflib.SequenceMatcher(None, lines_before, lines_after, autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        first, last = (i1 + 1, max(i2, i1 + 1))  # 1-based lines touched (an insertion: its neighbour)
        assert any(low <= last and first <= high for low, high in line_spans) or (
            tag == "insert" and any(low <= i1 <= high for low, high in line_spans)
        ), f"lines {first}-{last} changed outside the fixes"


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
    assert_changes_only_inside(source, result.source, fix_spans_for(source, unsafe))
    return result


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


def test_mutations_make_broken_and_valid_programs() -> None:
    """The mutation strategy reaches both sides of the parser, or it fuzzes nothing useful."""
    source = FIXTURE_SOURCES[0]
    broken = apply_mutation(source, Mutation("insert", 0, 0, "("))
    assert not python_parses(broken)
    assert python_parses(apply_mutation(source, Mutation("duplicate_line", 0, 0, "")))
    assert isinstance(parse(source), cst.Module)
