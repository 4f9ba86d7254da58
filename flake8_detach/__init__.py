"""flake8-detach: find PyTorch tensor-to-NumPy hazards before they crash or corrupt results.

Where things live:

- ``analysis/``: the interpreter that computes what each value is (grad, device, aliases);
  ``rules/``: one class per diagnostic, reading its facts; ``engine.py`` runs them.
- ``screening.py``, ``catalog.py``, ``screen_context.py``: the cheap screen that spares libcst for
  files with nothing to report; ``settings.py`` and ``config.py``: what a run is told to do.
- ``fixing/``: what a fix changes in the text; ``sources/``: everything that reads or writes the
  disk (files, notebooks, the cache, the one atomic write).
- Fronts, thin adapters over the above: ``plugin.py`` (flake8), ``cli/``, ``codemods.py``
  (libcst), ``lsp/`` (editors), ``reporting/`` (output formats); ``verify/`` runs the fixtures
  to prove each rule at run time.

The public names are loaded on first use: flake8 imports ``flake8_detach.plugin`` on every run,
and importing this package must not pull in libcst for files that have nothing to report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["AnalysisError", "Diagnostic", "Settings", "__version__", "analyze", "check_source"]

if TYPE_CHECKING:
    from .diagnostics import AnalysisError, Diagnostic
    from .engine import analyze, check_source
    from .settings import Settings

_LAZY = {
    "AnalysisError": "diagnostics",
    "analyze": "engine",
    "check_source": "engine",
    "Diagnostic": "diagnostics",
    "Settings": "settings",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
