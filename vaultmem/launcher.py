"""The ``vaultmem`` program: a fast path for git's merge driver, else the click CLI.

git starts ``vaultmem merge-driver %O %A %B %P`` once per note it merges, so that command must
not pay for importing the whole CLI (index, numpy, recall): it is dispatched here before
:mod:`vaultmem.cli` is imported. Every other command (and ``merge-driver --help``) goes to click.
"""

from __future__ import annotations

import sys


def merge_driver_main(args: list[str]) -> int:
    """Run the merge driver on ``[base, ours, theirs, path]``; print conflicts; exit status."""
    from vaultmem.services.sync.merge_driver import merge_files

    base, ours, theirs = args[:3]
    path = args[3] if len(args) > 3 else ours
    code, result, kept_apart = merge_files(base, ours, theirs, path)
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


def main() -> None:
    """Entry point of the ``vaultmem`` console script."""
    args = sys.argv[1:]
    if args[:1] == ["merge-driver"] and len(args) in (4, 5) and not {"-h", "--help"} & set(args):
        sys.exit(merge_driver_main(args[1:]))
    from vaultmem.cli import main as cli_main

    cli_main()
