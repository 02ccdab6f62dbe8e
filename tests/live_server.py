"""Run an ASGI app on uvicorn on 127.0.0.1 in a thread, for the tests that talk HTTP to it."""
from __future__ import annotations

import threading
import time

from openai_stub import free_port


def start(app) -> tuple[str, object]:
    """(base URL, the uvicorn Server); set ``server.should_exit = True`` to stop it."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return f"http://127.0.0.1:{server.config.port}", server
