"""What every local stub server in the tests shares: a threaded server on 127.0.0.1 at a free port, started
and stopped by ``with``, whose clients may hang up early (a tool that gave up on a slow answer)."""
from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler):
        super().__init__(("127.0.0.1", 0), handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()

    def handle_error(self, request, client_address):
        pass
