"""A TCP server on 127.0.0.1 for the HTTP client's tests without a lane: one thread accepts,
one thread serves each connection (the subclass's `serve`)."""
from __future__ import annotations

import socket
import threading


class LoopbackServer:
    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def port(self) -> int:
        return self.listener.getsockname()[1]

    def close(self) -> None:
        self.listener.close()

    def serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()
