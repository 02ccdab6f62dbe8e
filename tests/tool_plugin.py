"""A plug-in tool as a third-party package would ship one (registered in tests through an EntryPoint)."""
from __future__ import annotations

from duckask.utils.tools.base import Param, Tool, ToolResult, compact


class EchoTool(Tool):
    def __init__(self, config: dict):
        super().__init__(config["name"], config.get("description", "echo"), [Param("text", "what to repeat")])

    def _call(self, args):
        return ToolResult(self.name, True, text=compact({"echo": args["text"]}), data=args)
