"""The rule registry: one class per file, listed here in code order."""

from __future__ import annotations

from ..catalog import RULE_CODES, selected_codes
from .base import Rule
from .det101_numpy_on_grad_tensor import NumpyOnGradTensor
from .det102_cpu_before_detach import CpuBeforeDetach
from .det103_legacy_data_attribute import LegacyDataAttribute
from .det104_numpy_on_device_tensor import NumpyOnDeviceTensor
from .det105_numpy_alias_write import NumpyAliasWrite
from .det106_implicit_numpy_conversion import ImplicitNumpyConversion
from .det107_numpy_on_unsupported_dtype import NumpyOnUnsupportedDtype
from .det108_negative_stride_to_torch import NegativeStrideToTorch
from .det109_float64_into_float32_module import Float64IntoFloat32Module
from .det111_numpy_on_caller_dependent_tensor import NumpyOnCallerDependentTensor

ALL_RULES: tuple[Rule, ...] = (
    NumpyOnGradTensor(),
    CpuBeforeDetach(),
    LegacyDataAttribute(),
    NumpyOnDeviceTensor(),
    NumpyAliasWrite(),
    ImplicitNumpyConversion(),
    NumpyOnUnsupportedDtype(),
    NegativeStrideToTorch(),
    Float64IntoFloat32Module(),
    NumpyOnCallerDependentTensor(),
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}
assert tuple(RULES_BY_CODE) == RULE_CODES, "the screen's catalog and the rule registry list the same codes"


def selected_rules(select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                   extend_select: tuple[str, ...] = (), preview: bool = False) -> tuple[Rule, ...]:
    """Rules whose code starts with a selected prefix and with no ignored prefix (flake8 semantics)."""
    return tuple(RULES_BY_CODE[code] for code in selected_codes(select, ignore, extend_select, preview))
