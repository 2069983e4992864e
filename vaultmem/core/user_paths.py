"""Paths as people write them: ``~`` and environment variables expanded (docs/user-guide.md,
"The vault").

A shell expands ``~/Notes`` and ``$HOME/Notes`` only when unquoted; a quoted argument, a JSON
config (an MCP client's), an environment variable or a settings file passes them on as they
are. Every path vaultmem takes from a person goes through :func:`expand_user_path` first.
"""

from __future__ import annotations

import os


def expand_user_path(path: str | os.PathLike[str]) -> str:
    """``path`` with ``$VAR`` / ``${VAR}`` (and ``%VAR%`` on Windows) and a leading ``~`` or
    ``~user`` expanded, as :func:`os.path.expandvars` and :func:`os.path.expanduser` do.

    A variable that is not set is left as written (``$NOPE/x`` stays), so the error that follows
    names the path the person gave. ``"~/Notes"`` → ``"/home/me/Notes"``.
    """
    return os.path.expanduser(os.path.expandvars(os.fspath(path)))


__all__ = ["expand_user_path"]
