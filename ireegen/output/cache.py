"""A shared output cache on Bazel's HTTP remote-cache layout.

`GET URL/ac/<content key>` is an entry (JSON, below) naming each file of an
output directory and its sha256; `GET URL/cas/<sha256>` is a file's bytes.
Any server that stores what is PUT and returns it on GET serves (nginx with
WebDAV, bazel-remote without its ActionResult validation), and the same
server is also Bazel's --remote_cache.  docs/cache.md has the details.

Nothing from the server is trusted: the entry must name exactly the files
this emit would write, for the same model file and verification options,
and every blob must match its sha256; anything else is a miss with a
one-line warning, and the emit compiles.  An unreachable server is a
warning too.  Credentials in the URL (`http://user:pass@host/`) go into an
Authorization header and never into a message or the manifest.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from ireegen.common.errors import UsageError
from ireegen.common.progress import progress

from .outputs import MANIFEST, manifest_text, sha256_of

ENTRY_SCHEMA = 1
MODES = ("readwrite", "read")
TIMEOUT_SECONDS = 10
MAX_ENTRY_BYTES = 1 << 20  # an entry lists a dozen files; anything longer is not one
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def redact(url: str) -> str:
    """`url` with any user:password replaced by ***."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"***@{host}"))


def warn(message: str) -> None:
    print(f"ireegen: warning: {message}", file=sys.stderr)


class _Unreachable(Exception):
    """The server did not answer (refused, timed out, 5xx)."""


@dataclass
class Hit:
    files: dict  # file name -> bytes, manifest.json included
    manifest: dict


@dataclass
class Cache:
    """A cache server at `url` (http or https); `mode` "read" never uploads."""

    url: str
    mode: str = "readwrite"
    timeout: float = TIMEOUT_SECONDS
    url_origin: str = field(default="--cache", repr=False)  # where url and mode came from, for errors
    mode_origin: str = field(default="--cache-mode", repr=False)
    _base: str = field(init=False, repr=False)
    _auth: str | None = field(init=False, repr=False)
    _down: bool = field(init=False, default=False, repr=False)
    _bad: set = field(init=False, default_factory=set, repr=False)  # sha256s of corrupt blobs seen

    def __post_init__(self):
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"{self.url_origin} {redact(self.url)}: expected an http:// or https:// URL")
        if self.mode not in MODES:
            raise UsageError(f"{self.mode_origin} {self.mode}: expected one of {', '.join(MODES)}")
        netloc = parts.netloc.rsplit("@", 1)[1] if "@" in parts.netloc else parts.netloc
        self._auth = None
        if parts.username is not None:
            pair = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            self._auth = "Basic " + base64.b64encode(pair.encode()).decode()
        self._base = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))

    @property
    def label(self) -> str:
        """The server as messages show it: credentials as ***."""
        return redact(self.url).rstrip("/")

    # -- HTTP ---------------------------------------------------------------

    def _request(self, method: str, path: str, data: bytes | None = None, limit: int | None = None):
        """(status, body) of one request; body None unless GET and 200.
        Raises _Unreachable when the server does not answer."""
        request = urllib.request.Request(f"{self._base}/{path}", data=data, method=method)
        if self._auth:
            request.add_header("Authorization", self._auth)
        if data is not None:
            request.add_header("Content-Type", "application/octet-stream")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, _read_at_most(response, limit) if method == "GET" else None
        except urllib.error.HTTPError as e:
            if e.code >= 500:
                raise _Unreachable(f"HTTP {e.code}") from None
            return e.code, None
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as e:
            reason = getattr(e, "reason", None) or e
            raise _Unreachable(str(getattr(reason, "strerror", None) or reason)) from None

    def _unreachable(self, e: _Unreachable, doing: str) -> None:
        self._down = True
        warn(f"cache {self.label} is unreachable ({e}); {doing}")

    # -- lookup -------------------------------------------------------------

    def lookup(self, key: str, names: list, expect: dict) -> Hit | None:
        """The output for content key `key` when the server has a sound entry
        for exactly the files `names` (manifest.json aside) and `expect` (the
        model's source description and the verification options); None on
        a miss, after a warning when the entry or a blob is bad."""
        if self._down:
            return None
        progress("cache", f"looking up {key[:12]} at {self.label}")
        try:
            status, body = self._request("GET", f"ac/{key}", limit=MAX_ENTRY_BYTES)
            if status != 200:
                return None
            entry, reason = _parse_entry(body, key, names) if len(body) <= MAX_ENTRY_BYTES else (None, "too long")
            if entry is None:
                warn(f"cache {self.label}: the entry for {key[:12]} is unusable ({reason}); compiling")
                return None
            if {k: entry.get(k) for k in expect} != expect:
                progress("cache", "the entry was made from another model file name or verification; compiling")
                return None
            files = {}
            for f in entry["files"]:
                status, blob = self._request("GET", f"cas/{f['sha256']}", limit=f["size"])
                if status != 200 or blob is None:
                    warn(f"cache {self.label}: {f['path']} of {key[:12]} is missing (HTTP {status}); compiling")
                    return None
                if len(blob) != f["size"] or hashlib.sha256(blob).hexdigest() != f["sha256"]:
                    self._bad.add(f["sha256"])
                    warn(f"cache {self.label}: {f['path']} of {key[:12]} does not match its sha256; compiling")
                    return None
                files[f["path"]] = blob
        except _Unreachable as e:
            self._unreachable(e, "compiling locally")
            return None
        manifest, reason = _check_manifest(files, key)
        if manifest is None:
            warn(f"cache {self.label}: the manifest of {key[:12]} is unusable ({reason}); compiling")
            return None
        return Hit(files, manifest)

    # -- upload -------------------------------------------------------------

    def store(self, key: str, files: dict, expect: dict) -> None:
        """Uploads `files` (name -> bytes, manifest.json included) as the
        output for `key`: the blobs first, the entry last, so that a reader
        never finds an entry whose blobs are not there yet."""
        if self.mode == "read" or self._down:
            return
        listed = [
            {"path": name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            for name, data in sorted(files.items())
        ]
        entry = {"ireegen_cache": ENTRY_SCHEMA, "content_key": key, **expect, "files": listed}
        progress("cache", f"uploading {key[:12]} to {self.label}")
        try:
            for f in listed:
                if f["sha256"] not in self._bad:
                    status, _ = self._request("HEAD", f"cas/{f['sha256']}")
                    if status == 200:
                        continue  # already there (a header many models share)
                status, _ = self._request("PUT", f"cas/{f['sha256']}", files[f["path"]])
                if status not in (200, 201, 204):
                    warn(f"cache {self.label}: uploading {f['path']} was refused (HTTP {status}); not cached")
                    return
            data = (json.dumps(entry, indent=1, sort_keys=True) + "\n").encode()
            status, _ = self._request("PUT", f"ac/{key}", data)
            if status not in (200, 201, 204):
                warn(f"cache {self.label}: uploading the entry was refused (HTTP {status}); not cached")
        except _Unreachable as e:
            self._unreachable(e, "the output is not cached")


def _read_at_most(response, limit: int | None) -> bytes:
    """The body, or its first limit + 1 bytes (enough to tell it is too
    long), read in pieces: a size the server claims never becomes one
    allocation."""
    chunks, total = [], 0
    while limit is None or total <= limit:
        chunk = response.read(1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _parse_entry(body: bytes, key: str, names: list):
    """(entry, None) when `body` is a well-formed entry for `key` naming
    exactly `names` and manifest.json; else (None, why)."""
    try:
        entry = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None, "not JSON: truncated or corrupt"
    if not isinstance(entry, dict) or entry.get("ireegen_cache") != ENTRY_SCHEMA:
        return None, "not an ireegen cache entry of this version"
    if entry.get("content_key") != key:
        return None, "it is for another content key"
    files = entry.get("files")
    if not isinstance(files, list) or not all(
        isinstance(f, dict)
        and isinstance(f.get("path"), str)
        and isinstance(f.get("sha256"), str)
        and _SHA256.match(f["sha256"])
        and isinstance(f.get("size"), int)
        and f["size"] >= 0
        for f in files
    ):
        return None, "its file list is malformed"
    paths = [f["path"] for f in files]
    if sorted(paths) != sorted(set(names) | {MANIFEST}) or len(paths) != len(set(paths)):
        return None, "it names other files than this emit writes"
    return entry, None


def _check_manifest(files: dict, key: str):
    """(manifest, None) when the cached manifest.json is this key's, lists
    the cached files with their sha256, and is byte for byte what emit
    writes for it; else (None, why)."""
    try:
        manifest = json.loads(files[MANIFEST])
    except (ValueError, UnicodeDecodeError):
        return None, "not JSON"
    if not isinstance(manifest, dict) or manifest.get("content_key") != key:
        return None, "it is for another content key"
    if manifest_text(manifest).encode() != files[MANIFEST]:
        return None, "not in ireegen's canonical form"
    try:
        listed = {f["path"]: f["sha256"] for f in manifest["files"]}
    except (KeyError, TypeError):
        return None, "its file list is malformed"
    actual = {n: hashlib.sha256(b).hexdigest() for n, b in files.items() if n != MANIFEST}
    if listed != actual:
        return None, "its file list does not match the cached files"
    return manifest, None


def write_hit(hit: Hit, staging: Path) -> list:
    """Writes the cached files (manifest.json aside: commit writes it) into
    staging; returns their names."""
    names = sorted(n for n in hit.files if n != MANIFEST)
    for name in names:
        (staging / name).write_bytes(hit.files[name])
    return names


def snapshot(staging: Path, names: list, manifest: dict) -> dict:
    """The bytes to upload: each staged file and the manifest as commit writes it."""
    files = {name: (staging / name).read_bytes() for name in names}
    files[MANIFEST] = manifest_text(manifest).encode()
    return files


def expectation(source: dict, verify) -> dict:
    """What an entry must have been made with, besides the content key: the
    model's source description (its file name shows in the generated
    banners) and the verification options (their record is in the
    manifest).  `verify` is a check.verify.VerifyOptions.  None when the
    inputs file is unreadable: no lookup then, the emit refuses it."""
    if verify.enabled and verify.inputs and not Path(verify.inputs).is_file():
        return None
    if not verify.enabled:
        options = {"enabled": False}
    else:
        inputs = {"name": Path(verify.inputs).name, "sha256": sha256_of(Path(verify.inputs))} if verify.inputs else None
        options = {"enabled": True, "seed": verify.seed, "rtol": verify.rtol, "atol": verify.atol, "inputs": inputs}
        if verify.strict:  # a hit made without it may be "not exercised"
            options["strict"] = True
    return {"source": source, "verify": options}
