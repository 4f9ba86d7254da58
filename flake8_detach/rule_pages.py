"""Each rule's page as a file on this machine, for links that must open (the editor's diagnostics).

A checkout (or editable install) has the generated pages in docs/rules/; an installed package
does not, so the same page is rendered from the rule class and the shipped runtime evidence
into the user's cache folder once per version. Either way the link points at a file that exists.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

from . import __version__

CHECKOUT_PAGES = Path(__file__).resolve().parent.parent / "docs" / "rules"


def _cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flake8-detach" / f"rules-{__version__}"


@functools.cache
def rule_page(code: str) -> Path:
    """The Markdown page of rule ``code`` (written on first use when the package has none)."""
    checkout = CHECKOUT_PAGES / f"{code}.md"
    if checkout.is_file():
        return checkout
    from .explain import EVIDENCE_PAGE, load_evidence, markdown_evidence, markdown_page
    from .rules import RULES_BY_CODE

    evidence = load_evidence()
    # The page links its evidence (every fixture run), which is written beside it.
    texts = {
        f"{code}.md": markdown_page(RULES_BY_CODE[code], evidence, Path(__file__).resolve().parent),
        EVIDENCE_PAGE: markdown_evidence(evidence),
    }
    for folder in (_cache_folder(), Path(tempfile.gettempdir()) / f"flake8-detach-rules-{__version__}"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, text in texts.items():
                _write_if_changed(folder / name, text)
            return folder / f"{code}.md"
        except OSError:
            continue
    raise OSError(f"no writable folder for the page of {code}")


def _write_if_changed(page: Path, text: str) -> None:
    if page.is_file() and page.read_text(encoding="utf-8") == text:
        return
    handle, temporary = tempfile.mkstemp(dir=page.parent, prefix=f".{page.stem}-", suffix=".md")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.replace(temporary, page)  # atomic: concurrent servers never see half a page


def rule_page_uri(code: str) -> str:
    """A file:// URI of the rule's page (what an LSP client opens from `codeDescription`)."""
    return rule_page(code).as_uri()
