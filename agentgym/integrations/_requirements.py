"""The trainer versions each adapter was verified against, and the check made when one is used.

An adapter imports its trainer only when it is used, through `require`. A missing trainer, or one
older than the verified version (the interface the adapter relies on may not exist there), is an
ImportError that says which requirements file to install; a newer one works but warns once, since
trainer interfaces change between releases. ``requirements/integrations-<trainer>.txt`` pins the
same versions (a test keeps the two in agreement).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = ["PINS", "Pin", "check_version", "installed_version", "require"]


@dataclass(frozen=True)
class Pin:
    """One trainer: its adapter, its distribution, the version verified, and the requirements file."""

    #: The adapter's name, as in ``agentgym.integrations.<trainer>``.
    trainer: str
    #: The distribution name on PyPI.
    distribution: str
    #: The version the adapter was tested against.
    version: str

    @property
    def requirements_file(self) -> str:
        """The pinned requirements of the trainer, relative to the repository root."""
        return f"requirements/integrations-{self.trainer}.txt"


#: Trainer name (as in ``agentgym.integrations.<name>``) -> its pin.
PINS: dict[str, Pin] = {pin.trainer: pin for pin in (
    Pin("trl", "trl", "1.16.0"),
    Pin("verl", "verl", "0.9.1"),
    Pin("openrlhf", "openrlhf", "0.11.2"),
    Pin("skyrl", "skyrl-gym", "0.4.0"),
)}

_warned: set[str] = set()


def require(trainer: str, module: str) -> ModuleType:
    """Import `module` of `trainer`, checking the installed version against the pin.

    Args:
        trainer: a key of `PINS`.
        module: the module to import, e.g. ``"verl.experimental.agent_loop"``.

    Returns:
        The imported module.

    Raises:
        ImportError: the trainer is not installed, or is older than the verified version.
    """
    pin = PINS[trainer]
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"agentgym.integrations.{trainer} needs {pin.distribution} (verified with {pin.version}), which "
            f"could not be imported ({exc}). Install it with: {_install(pin)}"
        ) from exc
    check_version(trainer, imported)
    return imported


def check_version(trainer: str, module: ModuleType | None = None, *, missing_ok: bool = False) -> None:
    """Compare the installed `trainer` with its pin: older is an ImportError, newer warns once.

    Args:
        trainer: a key of `PINS`.
        module: the trainer's imported module, whose ``__version__`` serves when the distribution
            has no metadata.
        missing_ok: return quietly when the trainer is not installed.
    """
    from packaging.version import Version  # every trainer depends on packaging; agentgym does not

    pin = PINS[trainer]
    found = installed_version(pin.distribution, module)
    if found is None:
        if missing_ok:
            return
        raise ImportError(f"cannot tell which version of {pin.distribution} is installed; install it with: "
                          f"{_install(pin)}")
    if found < Version(pin.version):
        raise ImportError(
            f"agentgym.integrations.{trainer} was verified with {pin.distribution} {pin.version}, and "
            f"{found} is older (its interface may lack what the adapter uses). Install it with: {_install(pin)}"
        )
    if found > Version(pin.version) and trainer not in _warned:
        _warned.add(trainer)
        warnings.warn(
            f"agentgym.integrations.{trainer} was verified with {pin.distribution} {pin.version}; {found} is "
            f"installed. If the adapter fails, install the verified version: {_install(pin)}",
            UserWarning,
            stacklevel=3,
        )


def _install(pin: Pin) -> str:
    return f"pip install -r {pin.requirements_file}  (or: pip install {pin.distribution}=={pin.version})"


def installed_version(distribution: str, module: ModuleType | None = None) -> Version | None:
    """The installed version of `distribution`: from its metadata, or else from the top-level
    package's ``__version__`` (a source checkout on ``PYTHONPATH`` has no metadata)."""
    try:
        text: str | None = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        top = importlib.import_module(module.__name__.partition(".")[0]) if module is not None else None
        text = getattr(top, "__version__", None)
    if text is None:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return None
