"""Who calls a project function: the reverse index of the project's calls, read lazily.

A helper that nothing in its own file calls is judged by its calls in the rest of the project
(analysis/project.py): whether every one runs with grad off (directly, or inside a function that
itself only runs so: the greatest fixpoint over the call graph), and which parameters every one
fills with a value computed with grad off.

Building that index from every file's `ast` summary cost a fifth of the plugin's cold run on timm
(307 files summarised for the first helper asked about), and most of a cold lint of one file (a
pre-commit hook, an editor's first look). A call can only reach a unit through a
name the calling file spells: the function's own name, its class's name for a method or an
instance call, or an alias a re-export gives it (`from .a import Net as Model`). So the index
reads each file's identifiers once (a regular expression over its text, far cheaper than a
parse), and summarises only the files that spell one of the unit's names. Whether a unit is
"quiet" (only runs with grad off) depends on its callers alone, so the fixpoint over the callers
reachable backwards from the unit gives what the fixpoint over the whole project gives; it is
checked depth first, file by file, and stops at the first call with grad on (a module-level
`main()`), which is where most units of an application end.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .demand import definition_of

if TYPE_CHECKING:
    from .project import Project, Unit

IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_DEFINITION = re.compile(rb"\bdef[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
# `import a.b as c`, `from .a import (Net as Model, ...)`: more than imports match (`with ... as f`),
# which only adds names to look for. A pair is found from its ` as ` (aliases_in): a pattern that
# starts at an identifier is tried at every identifier of the file.
_AS = re.compile(rb"\sas\s+([A-Za-z_][A-Za-z0-9_]*)")
_NAME_BEFORE = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s+\Z")
NO_JUDGEMENT: tuple[bool, frozenset[str]] = (False, frozenset())
# Past these the depth-first check of a unit's callers gives way to the whole fixpoint.
MAX_QUIET_STEPS = 2000
MAX_QUIET_DEPTH = 64
MAX_HEIRS = 64  # classes inheriting one method, past which the rest are not looked for


class _Unbounded(Exception):
    """The depth-first check went past its bounds."""


@dataclass(frozen=True)
class Site:
    """One project call of a unit: the unit it is in (None: module code), whether grad is off
    there, and the parameters it fills with values computed with grad off."""

    caller: Unit | None
    off: bool
    free: frozenset[str]


@dataclass(frozen=True)
class Calls:
    """What the project does with one unit: its call sites, whether it is read other than by a
    call (a callback: its callers are not all known), and the other files that call it."""

    sites: tuple[Site, ...]
    escaped: bool
    files: frozenset[Path]


class CallerIndex:
    """The project's calls of its own functions, found per unit in the files that name it."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._text: ProjectText | None = None
        self._calls: dict[Unit, Calls] = {}
        self._file_calls: dict[Path, tuple[dict[str, list[Any]], dict[str, list[str]]]] = {}
        self._judged: dict[Unit, tuple[bool, frozenset[str]]] = {}
        self._quiet: dict[Unit, bool] = {}
        self._lock = threading.RLock()  # the language server analyses in threads

    # ------------------------------------------------------------------ the answers
    def judgement(self, unit: Unit) -> tuple[bool, frozenset[str]]:
        """Whether every project call of ``unit`` runs with grad off, and the parameters every
        call fills with values computed with grad off (all of them when the first holds)."""
        with self._lock:
            found = self._judged.get(unit)
            if found is None:
                found = self._judged[unit] = self._judge(unit)
            return found

    def judged(self, unit: Unit) -> bool:
        """Whether the project calls ``unit`` and never lets it out: its calls say all it gets."""
        calls = self.calls(unit)
        return bool(calls.sites) and not calls.escaped

    # ------------------------------------------------------------------ the fixpoint
    def _judge(self, unit: Unit) -> tuple[bool, frozenset[str]]:
        calls = self.calls(unit)
        if not calls.sites or calls.escaped:
            return NO_JUDGEMENT
        parameters = frozenset(self.project.parameters(unit))
        if self.quiet(unit):
            return True, parameters
        free = parameters  # a call from a quiet caller passes nothing with grad
        for site in calls.sites:
            if not self.quiet(site.caller):
                free &= site.free
        return False, free

    def quiet(self, unit: Unit | None) -> bool:
        """Whether ``unit`` is in the greatest set of units that the project calls, never lets out,
        and calls only with grad off or from units of the set (cycles of calls stay in it unless
        a call from outside turns grad on)."""
        if unit is None:
            return False
        known = self._quiet.get(unit)
        if known is None:
            try:
                known = self._quiet_assuming(unit, set(), [0])
            except _Unbounded:
                known = self._quiet_by_fixpoint(unit)
            self._quiet[unit] = known
        return known

    def _quiet_assuming(self, unit: Unit, assumed: set[Unit], steps: list[int]) -> bool:
        """Whether ``unit`` is quiet when the units being checked (``assumed``) are: the greatest
        fixpoint checked depth first. "No" is final (it holds whatever the assumptions), so it is
        kept; "yes" is final only for the unit asked first. Most units of an application have a
        call with grad on near them, so the walk stops after a few files, where the whole
        fixpoint needed every caller of every caller."""
        known = self._quiet.get(unit)
        if known is not None:
            return known
        if unit in assumed:
            return True
        steps[0] += 1
        if steps[0] > MAX_QUIET_STEPS or len(assumed) > MAX_QUIET_DEPTH:
            raise _Unbounded
        assumed.add(unit)
        try:
            holds = self._only_quiet_calls(unit, assumed, steps)
        finally:
            assumed.discard(unit)
        if not holds:
            self._quiet[unit] = False
        return holds

    def _only_quiet_calls(self, unit: Unit, assumed: set[Unit], steps: list[int]) -> bool:
        """Whether the project calls ``unit``, never lets it out, and calls it only with grad off
        or from quiet callers; file by file, stopping at the first call that says no."""
        files = self._calls_by_file(unit) if unit not in self._calls else iter(
            [(unit[0], list(self._calls[unit].sites), self._calls[unit].escaped)])
        called = False
        for _, sites, escaped in files:
            if escaped or any(not site.off and site.caller is None for site in sites):
                return False
            for site in sites:
                if not site.off and site.caller is not None and not self._quiet_assuming(site.caller, assumed, steps):
                    return False
            called = called or bool(sites)
        return called

    def _quiet_by_fixpoint(self, unit: Unit) -> bool:
        """The same answer from the fixpoint over every unit whose calls reach ``unit``, for call
        graphs too deep or too wide for the depth-first check; every answer it finds is kept."""
        if unit in self._quiet:
            return self._quiet[unit]
        reached: dict[Unit, Calls] = {}
        work = [unit]
        while work:
            current = work.pop()
            if current in reached or current in self._quiet:
                continue
            reached[current] = calls = self.calls(current)
            work.extend(site.caller for site in calls.sites if site.caller is not None)
        quiet = {current for current, calls in reached.items() if calls.sites and not calls.escaped}

        def is_quiet(caller: Unit | None) -> bool:
            if caller is None:
                return False
            return caller in quiet if caller in reached else self._quiet[caller]

        changed = True
        while changed:
            changed = False
            for current in list(quiet):
                if any(not site.off and not is_quiet(site.caller) for site in reached[current].sites):
                    quiet.discard(current)
                    changed = True
        for current in reached:
            self._quiet[current] = current in quiet
        return unit in quiet

    # ------------------------------------------------------------------ the calls of a unit
    def calls(self, unit: Unit) -> Calls:
        with self._lock:
            found = self._calls.get(unit)
            if found is None:
                found = self._calls[unit] = self._find_calls(unit)
            return found

    def _find_calls(self, unit: Unit) -> Calls:
        sites: list[Site] = []
        escaped = False
        files: set[Path] = set()
        for path, found, escapes in self._calls_by_file(unit):
            sites.extend(found)
            escaped = escaped or escapes
            if found and path != unit[0]:
                files.add(path)
        return Calls(tuple(sites), escaped, frozenset(files))

    def _calls_by_file(self, unit: Unit) -> Iterator[tuple[Path, list[Site], bool]]:
        """Per file that names ``unit``, the unit's own file first: its calls there, and whether
        the file reads it other than by a call. Lazily: a check that one call already answers
        (a module-level `main()`) reads no other file."""
        project = self.project
        names = self._names(unit)
        method = unit[1].rsplit(".", 1)[-1]
        spelled = names | {method}  # `self.step()` and `net.step()` end with the method
        # `logger.log_validation(...)` in a file that never names the class: the project's only
        # method of that name is what it runs (Project.unique_method)
        naming = names | {method} if "." in unit[1] and project.unique_method(method) == unit else names
        for path in self._files_naming(naming, first=unit[0]):
            calls, escapes = self._by_name(path)
            sites: list[Site] = []
            for name in spelled:
                for caller, reference, kind, contexts, arguments in calls.get(name, ()):
                    if unit in project.callees(path, reference, kind):
                        source: Unit | None = (path, caller) if caller else None
                        off = project.grad_off_here(path, contexts)
                        sites.append(Site(source, off, project.grad_free(path, unit, arguments)))
            escaped = "." not in unit[1] and any(project.definition(path, reference) == unit
                                                 for name in names for reference in escapes.get(name, ()))
            yield path, sites, escaped

    def _by_name(self, path: Path) -> tuple[dict[str, list[Any]], dict[str, list[str]]]:
        """A file's calls and its references read other than by a call, by the last name each
        spells: a unit's calls in a file are a few lookups, not a walk over all of them."""
        found = self._file_calls.get(path)
        if found is None:
            summary = self.project.summary(path)
            calls: dict[str, list[Any]] = {}
            escapes: dict[str, list[str]] = {}
            if summary is not None:
                for call in summary["calls"]:
                    calls.setdefault(_last_name(call[1]), []).append(call)
                for reference in summary["escaped"]:
                    escapes.setdefault(_last_name(reference), []).append(reference)
            found = self._file_calls[path] = (calls, escapes)
        return found

    def _names(self, unit: Unit) -> set[str]:
        """The names a file that calls ``unit`` spells: the function's own, or for a method its
        class's (`Net(...)`, `net = Net(); net.step()`, `self.step()` inside the class), and every
        name the project's text binds to one of them with `as` (`from .a import Net as Model`),
        followed from alias to alias."""
        aliases = self._project_text().aliases
        names = {definition_of(unit[1]), *self._heirs(unit)}
        work = list(names)
        while work:
            for alias in aliases.get(work.pop(), ()):
                if alias not in names:
                    names.add(alias)
                    work.append(alias)
        return names

    def _heirs(self, unit: Unit) -> set[str]:
        """The names of the project classes that inherit the method ``unit`` ("C.m") without
        overriding it, at any depth: `engine.evaluate()` of a `GMFEngine(Engine)` runs
        `Engine.evaluate`. Read from the files that name each class."""
        owner, _, method = unit[1].rpartition(".")
        found: set[str] = set()
        if not owner or "." in owner:
            return found
        work = [(unit[0], owner)]
        while work and len(found) < MAX_HEIRS:
            ancestor = work.pop()
            for path in self._files_naming({ancestor[1]}):
                summary = self.project.summary(path)
                if summary is None:
                    continue
                for name, bases in summary["classes"].items():
                    if name in found or "." in name or f"{name}.{method}" in summary["functions"]:
                        continue
                    if any(self.project.definition(path, base) == ancestor for base in bases):
                        found.add(name)
                        work.append((path, name))
        return found

    def files_defining(self, name: str) -> list[Path]:
        """The project's files whose text says `def name`, in the listing's order."""
        text = self._project_text()
        found = text.definitions.get(name.encode(), [])
        return sorted(found, key=text.order.__getitem__)

    def files_spelling(self, words: tuple[str, ...]) -> list[Path]:
        """The project's files, as saved, whose text spells one of ``words`` (identifiers), in the
        listing's order."""
        text = self._project_text()
        found = {path for word in words for path in text.mentions.get(word.encode(), ())}
        return sorted(found, key=text.order.__getitem__)

    def _files_naming(self, names: set[str], first: Path | None = None) -> Iterator[Path]:
        """The project's files whose text spells one of ``names`` (each once, in a fixed order),
        and those summarised from a text given (an editor's buffer may differ from the file on disk)."""
        text = self._project_text()
        mentions = text.mentions
        found = {path for name in names for path in mentions.get(name.encode(), ())}
        found.update(self.project.buffers)
        if first in found:
            found.discard(first)
            yield first
        order = text.order
        for path in found:
            order.setdefault(path, len(order))  # a buffer of a file the project's listing does not have
        yield from sorted(found, key=order.__getitem__)  # the listing's order: no Path comparisons

    def _project_text(self) -> ProjectText:
        """What the project's files (notebooks: their code cells) spell, read once."""
        if self._text is None:
            from .project import python_text

            text = ProjectText()
            for path in self.project.caller_files():
                data = python_text(path)
                if data is not None:
                    text.read(path, data)
            self._text = text
        return self._text


@dataclass
class ProjectText:
    """Each identifier of the project's text -> the files that spell it, and each name -> the
    names a `NAME as ALIAS` of that text binds to it."""

    mentions: dict[bytes, list[Path]] = field(default_factory=dict)
    definitions: dict[bytes, list[Path]] = field(default_factory=dict)  # `def NAME`: where it is defined
    aliases: dict[str, set[str]] = field(default_factory=dict)
    order: dict[Path, int] = field(default_factory=dict)  # each file's place in the order read

    def read(self, path: Path, data: bytes) -> None:
        self.order.setdefault(path, len(self.order))
        for word in set(IDENTIFIER.findall(data)):
            self.mentions.setdefault(word, []).append(path)
        for name in set(_DEFINITION.findall(data)):
            self.definitions.setdefault(name, []).append(path)
        if b" as " in data:
            for name, alias in aliases_in(data):
                self.aliases.setdefault(name.decode(), set()).add(alias.decode())


def aliases_in(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """The (NAME, ALIAS) pairs of each `NAME as ALIAS` in ``data`` (`\\s+` apart), left to right
    and not overlapping, as a `findall` of that pattern gives them (for a NAME that ends at most
    256 bytes before its `as`)."""
    end = 0
    for match in _AS.finditer(data):
        start = match.start()
        if start < end:
            continue  # inside the previous pair (`a as as as b`)
        head = data[max(end, start - 256):start + 1]
        before = _NAME_BEFORE.search(head)
        if before is not None:
            end = match.end()
            yield before.group(1), match.group(1)


def _last_name(reference: Any) -> str:
    """The last part of a dotted reference (`~Net.step` -> `step`, `models.Net` -> `Net`)."""
    return reference.rsplit(".", 1)[-1].lstrip("~") if isinstance(reference, str) else ""
