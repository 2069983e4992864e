"""The ``vaultmem`` program: a fast path for git's merge driver, else the click CLI.

git starts ``vaultmem merge-driver %O %A %B %P`` once per note it merges, so that command must
not pay for importing the whole CLI (index, numpy, recall): it is dispatched here before
:mod:`vaultmem.cli` is imported. Every other command goes to click, and so does a
``merge-driver`` call the fast path cannot take as git's (an argument that looks like an option,
``--help`` included, or a BASE/OURS/THEIRS that is missing or not a regular file): click then
refuses it with a one-line error naming the argument (exit 2), never a traceback.
"""

from __future__ import annotations

import os
import sys


def merge_driver_main(args: list[str]) -> int:
    """Run the merge driver on ``[base, ours, theirs, path]``; print conflicts; exit status."""
    from vaultmem.services.sync.merge_driver import merge_files

    base, ours, theirs = args[:3]
    path = args[3] if len(args) > 3 else ours
    try:
        code, result, kept_apart = merge_files(base, ours, theirs, path)
    except OSError as err:  # unreadable, or vanished since it was checked: one line, no traceback
        print(
            f"vaultmem merge-driver: {err.filename or path}: {err.strerror or err}",
            file=sys.stderr,
        )
        return 2
    if kept_apart is not None:
        print(
            f"vaultmem merge-driver: {path}: two different memories (different ids) at one "
            f"path; kept yours here and theirs as {kept_apart} (untracked: commit it)",
            file=sys.stderr,
        )
    elif result is None:
        if code:
            print(
                f"vaultmem merge-driver: {path}: not UTF-8, merged as lines: conflict; "
                "resolve the marked lines by hand",
                file=sys.stderr,
            )
    elif result.conflicts:
        print(
            f"vaultmem merge-driver: {path}: conflict in {', '.join(result.conflicts)}; "
            "resolve the marked lines (vaultmem doctor --fix merges conflicted properties)",
            file=sys.stderr,
        )
    return code


def is_git_call(args: list[str]) -> bool:
    """True when ``merge-driver ARGS`` is a call the fast path can run as git makes it: 3 or 4
    arguments, none starting with ``-`` (an option is never taken as a file), and BASE, OURS
    and THEIRS regular files. Anything else goes to click, which names what is wrong."""
    return (
        len(args) in (3, 4)
        and not any(arg.startswith("-") for arg in args)
        and all(os.path.isfile(arg) for arg in args[:3])
    )


def main() -> None:
    """Entry point of the ``vaultmem`` console script."""
    args = sys.argv[1:]
    if args[:1] == ["merge-driver"] and is_git_call(args[1:]):
        sys.exit(merge_driver_main(args[1:]))
    from vaultmem.cli import main as cli_main

    cli_main()
