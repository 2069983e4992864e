"""An :class:`MCPServer` whose tools refuse what they do not know, in one line.

The SDK validates a call's arguments with pydantic, which ignores unknown arguments (a model's
``supersedes`` would be dropped without a word) and reports a bad value in several lines with a
URL. Here an unknown argument is refused, naming it and the tool's arguments, a bad value is
reported in one line naming the argument, every input schema says
``additionalProperties: false``, and each tool declares the ``outputSchema`` of its
structured result (:mod:`vaultmem.mcp.output_schemas`).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from vaultmem.mcp.output_schemas import OUTPUT_SCHEMAS


def allowed_arguments(server: MCPServer, name: str) -> list[str] | None:
    """The argument names the tool ``name`` takes (``None``: no such tool)."""
    tool = server._tool_manager.get_tool(name)  # noqa: SLF001  (the SDK offers no other way)
    if tool is None:
        return None
    fields = tool.fn_metadata.arg_model.model_fields
    return [field.alias or key for key, field in fields.items()]


def one_line(tool: str, error: ValidationError) -> str:
    """The first problem of ``error`` in one line, naming the argument."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "arguments"
    if first["type"] == "missing":
        return f"{tool}: missing argument {where!r}"
    message = str(first["msg"]).replace("\n", " ")
    more = len(error.errors()) - 1
    return f"{tool}: argument {where!r}: {message}" + (
        f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    )


class StrictServer(MCPServer):
    """:class:`MCPServer` with strict, one-line argument checks and declared output schemas."""

    def seal_schemas(self) -> None:
        """Close every tool's input schema to other arguments and give it its output schema
        (call once every tool is registered). Raises ``KeyError`` for a tool without one."""
        for tool in self._tool_manager.list_tools():
            tool.parameters["additionalProperties"] = False
            tool.fn_metadata.output_schema = OUTPUT_SCHEMAS[tool.name]
            tool.__dict__.pop("output_schema", None)  # the cached copy, if it was read

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        allowed = allowed_arguments(self, name)
        if allowed is not None:
            unknown = sorted(set(arguments) - set(allowed))
            if unknown:
                raise ToolError(
                    f"{name}: unknown argument {unknown[0]!r}; allowed: "
                    + (", ".join(allowed) or "none")
                )
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as err:
            if isinstance(err.__cause__, ValidationError):
                raise ToolError(one_line(name, err.__cause__)) from err.__cause__
            raise
        return result


__all__ = ["StrictServer", "allowed_arguments", "one_line"]
