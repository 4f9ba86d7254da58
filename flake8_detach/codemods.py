"""The fixes as libcst codemods, for projects that already drive their rewrites with libcst.

    python -m libcst.tool codemod -x --no-format flake8_detach.codemods.FixDetachHazards src/

Each command is a :class:`VisitorBasedCodemodCommand` whose visitor swaps the nodes that the
core's fixes name; the passes, the choice of fixes and `# noqa` handling are the fixer's own
(:func:`flake8_detach.fixing.passes.fix_module`), so a codemod run and `flake8-detach fix` agree.
"""

from __future__ import annotations

import argparse
from typing import ClassVar

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand

from .engine import Settings
from .fixing.passes import Replacements, fix_module
from .settings import FIX_STYLES


class FixDetachHazards(VisitorBasedCodemodCommand):
    DESCRIPTION: str = "Fix PyTorch tensor-to-NumPy hazards (flake8-detach DET101-DET109)."
    # Codes (or prefixes) this command fixes; the rule files compute the fixes. Empty: the default
    # selection, every rule but the opt-in DET111 (`check`'s and `fix`'s default too).
    CODES: ClassVar[tuple[str, ...]] = ()

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument(
            "--unsafe-fixes",
            dest="unsafe_fixes",
            action="store_true",
            help="also apply fixes marked unsafe (DET103 writes rewritten under torch.no_grad())",
        )
        arg_parser.add_argument(
            "--style",
            dest="style",
            choices=FIX_STYLES,
            default="chain",
            help="chain: .detach().cpu().numpy() (default); force: .numpy(force=True)",
        )

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False, style: str = "chain") -> None:
        super().__init__(context)
        self.settings = Settings(select=self.CODES, fix_style=style)
        self.unsafe_fixes = unsafe_fixes
        self._replacements: Replacements = {}

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        outcome = fix_module(tree, self.settings, unsafe=self.unsafe_fixes, apply=self._apply_pass)
        for diagnostic in outcome.remaining:
            self.warn(f"{diagnostic.line}:{diagnostic.column + 1}: {diagnostic.message} (not fixed)")
        return outcome.module

    def _apply_pass(self, module: cst.Module, replacements: Replacements) -> cst.Module:
        """One pass of the fixer: this visitor walks the tree and swaps the named nodes."""
        self._replacements = replacements
        try:
            return super().transform_module_impl(module)
        finally:
            self._replacements = {}

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        updated = super().on_leave(original_node, updated_node)
        return self._replacements.get(original_node, updated)


class FixNumpyOnGradTensor(FixDetachHazards):
    DESCRIPTION = "DET101: insert .detach() before the device move or .numpy() of a tensor that may require grad."
    CODES = ("DET101",)


class FixCpuBeforeDetach(FixDetachHazards):
    DESCRIPTION = "DET102: .cpu().detach() -> .detach().cpu(), arguments kept."
    CODES = ("DET102",)


class FixLegacyDataAttribute(FixDetachHazards):
    DESCRIPTION = "DET103: .data reads -> .detach(); with --unsafe-fixes, writes under torch.no_grad()."
    CODES = ("DET103",)


class FixNumpyOnDeviceTensor(FixDetachHazards):
    DESCRIPTION = "DET104: insert .cpu() before .numpy() of a tensor that may live on a GPU."
    CODES = ("DET104",)
