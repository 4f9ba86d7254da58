"""flake8-detach: find PyTorch tensor-to-NumPy hazards before they crash or corrupt results.

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
