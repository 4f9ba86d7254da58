"""flake8-detach: find PyTorch tensor-to-NumPy hazards before they crash or corrupt results."""

from .diagnostics import Diagnostic
from .engine import AnalysisError, Settings, analyze, check_source

__version__ = "0.1.0"
__all__ = ["AnalysisError", "Diagnostic", "Settings", "__version__", "analyze", "check_source"]
