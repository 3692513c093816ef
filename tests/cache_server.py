"""Real HTTP caches for the tests: Debian's nginx with WebDAV PUT, on
127.0.0.1 at a free port, everything (store, logs, pid, temp bodies) under
one temporary directory, stopped when the context ends; a misbehaving
server (Hostile: drips, endless bodies, redirects, canned answers); and
the tools of an attacker who can write to the store."""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)

CONFIG = """\
daemon off;
master_process off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log;
events {{ worker_connections 64; }}
http {{
  log_format cache '$request_method $uri $status $remote_user $body_bytes_sent $request_length';
  access_log {root}/access.log cache;
  client_body_temp_path {root}/tmp/body;
  proxy_temp_path {root}/tmp/proxy;
  fastcgi_temp_path {root}/tmp/fastcgi;
  uwsgi_temp_path {root}/tmp/uwsgi;
  scgi_temp_path {root}/tmp/scgi;
  client_max_body_size 0;
  server {{
    listen 127.0.0.1:{port};
    root {root}/store;
    location / {{
      dav_methods PUT DELETE MKCOL;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }}
  }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Server:
    def __init__(self, root: Path, port: int):
        self.root = root
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.store = root / "store"

    def requests(self) -> list:
        """The access log so far: (method, uri, status, remote user, bytes sent, request bytes) per request."""
        log = self.root / "access.log"
        text = log.read_text() if log.exists() else ""
        return [tuple(line.split(" ")) for line in text.splitlines()]

    def puts(self) -> list:
        return [r for r in self.requests() if r[0] == "PUT"]

    def clear(self) -> None:
        for d in ("ac", "cas"):
            shutil.rmtree(self.store / d, ignore_errors=True)


@contextmanager
def nginx_cache(root: Path):
    root = Path(root)
    (root / "store").mkdir(parents=True, exist_ok=True)
    (root / "tmp").mkdir(exist_ok=True)
    for _attempt in range(5):
        port = free_port()
        (root / "nginx.conf").write_text(CONFIG.format(root=root, port=port))
        proc = subprocess.Popen(
            [NGINX, "-p", str(root), "-e", str(root / "error.log"), "-c", str(root / "nginx.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 10
        while proc.poll() is None and not _answers(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None and _answers(port):
            break
        proc.kill()
        proc.wait()
    else:
        raise RuntimeError(f"nginx did not start: {(root / 'error.log').read_text()}")
    try:
        yield Server(root, port)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def logging_compiler(directory: Path) -> tuple:
    """(an iree-compile that logs each compile of a model file, one line each,
    then runs the real one; the log).  Flags first (--version, the target
    queries, which read stdin) are not logged."""
    from iree.compiler.tools import binaries

    log = directory / "compiles.log"
    wrapper = directory / "iree-compile"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$1" in -*) ;; *) echo "$1" >> "{log}" ;; esac\n'
        f'exec "{binaries.find_tool("iree-compile")}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, log


# -- a misbehaving server -----------------------------------------------------


class Hostile:
    """A cache server on 127.0.0.1 that misbehaves as told, per path prefix:
    `answer(prefix, kind, ...)` with kind
      "drip": the whole response (status line and headers included), one
              byte every `interval` seconds;
      "endless": 200 and a body of zeros that never ends;
      "redirect": `status` (302) with `Location: to`;
      "body": `status` and the bytes `body`.
    Anything else is a 404.  `seen` records (method, path, headers) of every
    request, so a test can tell which credentials reached it."""

    def __init__(self):
        self.routes: dict = {}
        self.seen: list = []
        self.stop = threading.Event()
        hostile = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _serve(self):
                hostile.seen.append((self.command, self.path, dict(self.headers)))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                route = next(
                    (r for p, r in sorted(hostile.routes.items(), reverse=True) if self.path.startswith(p)), None
                )
                try:
                    hostile._respond(self, route)
                except OSError:
                    pass  # the client gave up: what the deadline and the cap are for
                self.close_connection = True

            do_GET = do_HEAD = do_PUT = _serve

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def answer(self, prefix: str, kind: str, **params) -> None:
        self.routes[prefix] = (kind, params)

    def _respond(self, handler, route) -> None:
        kind, params = route or ("body", {"status": 404, "body": b""})
        out = handler.wfile
        if kind == "drip":
            raw = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 1000
            for byte in raw:
                if self.stop.wait(params["interval"]):
                    return
                out.write(bytes([byte]))
                out.flush()
        elif kind == "endless":
            out.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            zeros = b"\0" * (1 << 16)
            while not self.stop.is_set():
                out.write(zeros)
        elif kind == "redirect":
            status = params.get("status", 302)
            out.write(f"HTTP/1.1 {status} Moved\r\nLocation: {params['to']}\r\nContent-Length: 0\r\n\r\n".encode())
        else:
            body = params.get("body", b"")
            head = f"HTTP/1.1 {params.get('status', 200)} X\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            out.write(head + (body if handler.command != "HEAD" else b""))
        out.flush()


@contextmanager
def hostile_cache():
    server = Hostile()
    server._thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server._server.shutdown()
        server._server.server_close()


# -- an attacker with write access to a store ---------------------------------


def read_entry(store: Path, key: str) -> tuple:
    """(the entry for `key` in an nginx store, its files: name -> bytes)."""
    entry = json.loads((store / "ac" / key).read_text())
    files = {f["path"]: (store / "cas" / f["sha256"]).read_bytes() for f in entry["files"]}
    return entry, files


def put_entry(store: Path, key: str, entry: dict, files: dict) -> None:
    """Writes `files` and an entry for `key` that lists them with their
    sha256 and size (the rest of `entry` as given, a tag included), as
    anyone who can PUT to the server can."""
    (store / "cas").mkdir(parents=True, exist_ok=True)
    (store / "ac").mkdir(parents=True, exist_ok=True)
    listed = []
    for name, data in sorted(files.items()):
        sha = hashlib.sha256(data).hexdigest()
        (store / "cas" / sha).write_bytes(data)
        listed.append({"path": name, "sha256": sha, "size": len(data)})
    (store / "ac" / key).write_text(json.dumps({**entry, "content_key": key, "files": listed}, indent=1))


def rewrite_manifest(files: dict, **fields) -> dict:
    """`files` with manifest.json's `fields` replaced and its file list
    rehashed, in ireegen's canonical form, as an attacker who read the
    source would write it."""
    manifest = json.loads(files["manifest.json"])
    manifest.update(fields)
    for f in manifest["files"]:
        f["sha256"] = hashlib.sha256(files[f["path"]]).hexdigest()
    return {**files, "manifest.json": (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()}
