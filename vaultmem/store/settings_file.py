"""Reading ``vaultmem.toml`` into :class:`~vaultmem.core.settings.Settings` with :mod:`tomllib`."""

from __future__ import annotations

import tomllib
from pathlib import Path

from vaultmem.core.settings import Settings, SettingsError, parse_settings
from vaultmem.errors import ConfigError
from vaultmem.store.confinement import is_symlinked, resolves_inside

SETTINGS_FILE = "vaultmem.toml"


def load_settings(root: Path) -> Settings:
    """Settings of the vault at ``root``; defaults when it has no ``vaultmem.toml``.

    Raises :class:`ConfigError` naming the file and the problem (TOML syntax, unknown key,
    wrong type, a ``[folders]`` value outside the vault or through a symbolic link).
    """
    path = root / SETTINGS_FILE
    if not path.exists():
        return Settings()
    try:
        with open(path, "rb") as handle:
            raw = tomllib.load(handle)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(path, f"not valid TOML: {err}") from None
    except OSError as err:
        raise ConfigError(path, f"cannot read: {err.strerror}") from None
    try:
        settings = parse_settings(raw)
    except SettingsError as err:
        raise ConfigError(path, str(err)) from None
    real_root = root.resolve()  # a relative root (or one under a linked folder) is checked as
    # the folders' own resolved paths are: else every folder looked linked
    for key in ("stm", "boxes", "ltm", "archive"):
        folder = getattr(settings.folders, key)
        if not resolves_inside(real_root, folder):
            raise ConfigError(
                path,
                f"[folders] {key} must lie inside the vault, not {folder!r} "
                "(a symbolic link leads outside)",
            )
        if is_symlinked(real_root, folder):
            raise ConfigError(
                path,
                f"[folders] {key} must not be or lie in a symbolic link, not {folder!r} "
                "(vaultmem never enters linked folders); give the folder it points to",
            )
    return settings
