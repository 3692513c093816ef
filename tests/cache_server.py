"""A real HTTP cache for the tests: Debian's nginx with WebDAV PUT, on
127.0.0.1 at a free port, everything (store, logs, pid, temp bodies) under
one temporary directory, stopped when the context ends."""

from __future__ import annotations

import shutil
import socket
import subprocess
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
