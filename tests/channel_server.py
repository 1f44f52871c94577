"""A real HTTP server for local channels whose URLs carry credentials
(`http://user:secret@host/t/<token>/...`): it ignores the auth and drops `/t/<token>/` from paths, like
anaconda.org does, so tests can prove tokens never leak into output or files."""

from __future__ import annotations

import base64
import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SECRET = "s3cr3tpw"
TOKEN = "tok-123abc"


class _Handler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        if path.startswith("/t/"):
            path = "/" + path.split("/", 3)[3]
        return super().translate_path(path)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve `root`; yield the base URL with credentials and a token:
    http://user:SECRET@127.0.0.1:PORT/t/TOKEN"""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://user:{SECRET}@127.0.0.1:{server.server_address[1]}/t/{TOKEN}"
    finally:
        server.shutdown()
        server.server_close()


def leaks(*texts: str, folders: tuple[Path, ...] = ()) -> list[str]:
    """Where the secret or token appears: in any text, or any file under the folders."""
    found = [f"text {i}" for i, t in enumerate(texts) if SECRET in t or TOKEN in t]
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                if SECRET.encode() in data or TOKEN.encode() in data:
                    found.append(str(path))
    return found


PRIVATE_TOKEN = "tk-private-77f1"
PRIVATE_PASSWORD = "pw-private-9c2e"


class _StrictHandler(http.server.SimpleHTTPRequestHandler):
    """Serves only requests that carry the credential: `/t/<PRIVATE_TOKEN>/...` paths, or basic auth
    bob:PRIVATE_PASSWORD; everything else is 404, as a private channel is to a stranger."""

    kind = "token"
    served: list[str]

    def translate_path(self, path: str) -> str:
        if self.kind == "token":
            prefix = f"/t/{PRIVATE_TOKEN}/"
            if not path.startswith(prefix):
                return "/nonexistent/" + path
            path = "/" + path[len(prefix) :]
        else:
            wanted = "Basic " + base64.b64encode(f"bob:{PRIVATE_PASSWORD}".encode()).decode()
            if self.headers.get("Authorization") != wanted:
                return "/nonexistent/" + path
        self.served.append(path)
        return super().translate_path(path)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve_private(root: Path, kind: str, served: list[str]) -> Iterator[str]:
    """Serve `root` only to requests with the credential (`kind` "token" or "basic"); yield the channel
    base URL with it (`http://127.0.0.1:PORT/t/TOKEN` or `http://bob:PW@127.0.0.1:PORT`); every path
    served is appended to `served`."""
    handler = type("Handler", (_StrictHandler,), {"kind": kind, "served": served})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        if kind == "token":
            yield f"http://127.0.0.1:{port}/t/{PRIVATE_TOKEN}"
        else:
            yield f"http://bob:{PRIVATE_PASSWORD}@127.0.0.1:{port}"
    finally:
        server.shutdown()
        server.server_close()
