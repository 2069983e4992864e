"""Writes ``docs/cli.md`` from the commands' own ``--help`` (``python -m vaultmem.cli.reference``).

A test regenerates it and compares, so the CLI reference never drifts from the code.
"""

from __future__ import annotations

import click

from vaultmem.cli import main


def cli_reference() -> str:
    """Markdown: the group's help, then every command's ``--help`` in a code block."""
    lines = [
        "# CLI reference",
        "",
        "Generated from `--help` by `python -m vaultmem.cli.reference > docs/cli.md`;",
        "a test fails when this file and the commands disagree.",
        "",
    ]
    settings = {**main.context_settings, "terminal_width": 100, "max_content_width": 100}
    root = click.Context(main, info_name="vaultmem", **settings)
    lines += ["## vaultmem", "", "```text", main.get_help(root), "```", ""]
    commands = main.all_commands()
    for name in sorted(commands):
        command = commands[name]
        ctx = click.Context(command, info_name=name, parent=root, **settings)
        lines += [f"## vaultmem {name}", "", "```text", command.get_help(ctx), "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    click.echo(cli_reference(), nl=False)
