"""CallTool: ask the chosen tool and, when an API fails, web search (the next source in the order of
preference), with the question as its query; never a tool before the chosen one, nothing once one answered.

Before a call, the guard (``utils/tools/route.database_values``): arguments holding a value from an earlier
answer's rows that the user did not type themselves (a cell's words, or a number, found inside an argument)
are not sent unless the tool's config has ``send_database_values: true``; the turn then ends saying what was
withheld. The guard runs for the web search fallback too, whose query is the (resolved) question. Each call has
the tool's one deadline and size cap, and follows no redirect to another host (``utils/tools/base``).

Actions: ``answer`` (AnswerFromTool) or ``failed`` (end: the answer says which tools failed and why).
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.tools.route import database_values, fill_args
from duckask.utils.turn import Turn, finish


class CallTool(TracedNode):
    def prep(self, shared: Turn):
        return {"source": shared["source"], "question": shared["question"],
                "typed": shared.get("original_question") or shared["question"], "history": shared.get("history") or []}

    def exec(self, p):
        tools = self.ctx.tools
        start = next(i for i, t in enumerate(tools) if t.name == p["source"]["source"])
        chosen = tools[start]
        after = [t for t in tools[start + 1:] if t.kind == "web"][:1] if chosen.kind != "web" else []
        tried = []
        for i, tool in enumerate([chosen, *after]):
            args = p["source"]["args"] if i == 0 else fill_args(tool, {}, p["question"])
            if not args and tool.params:
                continue                      # a later tool with arguments the question alone cannot give
            leaked = database_values(args, p["typed"], p["history"])
            if leaked and not tool.send_database_values:
                tried.append({"tool": tool.name, "ok": False, "withheld": leaked,
                              "error": f"not sent: {', '.join(repr(v) for v in leaked)} came from your database"})
                break
            result = tool.call(args)
            tried.append({**result.as_dict(), "args": args})
            if result.ok:
                return {"result": result, "tried": tried}
        return {"result": None, "tried": tried}

    def trace_detail(self, shared: Turn):
        return {"tools": [(t["tool"], t["ok"]) for t in shared.get("tool_calls") or []]}

    def post(self, shared: Turn, p, res):
        shared["tool_calls"] = res["tried"]
        shared["tool_result"] = res["result"]
        if res["result"] is not None:
            return "answer"
        why = "; ".join(f"{t['tool']}: {t['error']}" for t in res["tried"]) or "no tool could take this question"
        withheld = any(t.get("withheld") for t in res["tried"])
        hint = (" A tool gets values from your database only when its config says send_database_values: true."
                if withheld else "")
        finish(shared, "error", f"I could not get an answer from outside the database ({why}).{hint}", "",
               no_query=True)
        return "failed"
