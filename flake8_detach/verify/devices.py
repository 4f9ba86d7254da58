"""Which devices a verify run uses, and why a device leg is skipped.

The CPU always runs. CUDA runs only on a real GPU (``torch.cuda.is_available()``): no emulation,
and on a host without one the leg is reported as skipped with the reason, never as passed. The
``meta`` device stands in for the non-CPU check where there is no GPU: ``Tensor.numpy()`` rejects a
meta tensor with the same TypeError it raises for a CUDA tensor. Meta tensors hold no data, so
values are never compared there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEVICE_NAMES = ("cpu", "cuda", "meta")
META_LABEL = "meta (stand-in for cuda)"


@dataclass(frozen=True)
class DeviceLeg:
    name: str  # the value of the DEVICE environment variable for the run
    label: str  # what the report calls it
    skip_reason: str | None = None  # the whole leg is skipped (no GPU)

    @property
    def has_data(self) -> bool:
        """Whether tensors on this device hold values that can be compared."""
        return self.name != "meta"

    @property
    def is_stand_in(self) -> bool:
        return self.name == "meta"


@dataclass(frozen=True)
class CudaStatus:
    available: bool
    description: str  # the GPU's name, or why there is none


def probe_cuda() -> CudaStatus:
    """Ask torch in this process (it never forks, so initialising CUDA here is harmless)."""
    import torch

    if not torch.cuda.is_available():
        built = "a CPU-only torch build" if torch.version.cuda is None else f"CUDA {torch.version.cuda} build"
        return CudaStatus(False, f"no CUDA device: torch.cuda.is_available() is False ({built})")
    return CudaStatus(True, torch.cuda.get_device_name(0))


def plan_devices(requested: Sequence[str] | None, cuda: CudaStatus) -> list[DeviceLeg]:
    """The legs to run: ``requested`` in order, or by default cpu, cuda, and meta when there is no GPU."""
    names = list(dict.fromkeys(requested)) if requested else ["cpu", "cuda"] + ([] if cuda.available else ["meta"])
    legs = []
    for name in names:
        if name == "cuda":
            legs.append(DeviceLeg("cuda", "cuda", None if cuda.available else cuda.description))
        elif name == "meta":
            legs.append(DeviceLeg("meta", META_LABEL))
        else:
            legs.append(DeviceLeg(name, name))
    return legs
