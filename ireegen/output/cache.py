"""A shared output cache on Bazel's HTTP remote-cache layout.

`GET URL/ac/<content key>` is an entry (JSON, below) naming each file of an
output directory and its sha256; `GET URL/cas/<sha256>` is a file's bytes.
Any server that stores what is PUT and returns it on GET serves (nginx with
WebDAV, bazel-remote without its ActionResult validation), and the same
server is also Bazel's --remote_cache.  docs/cache.md has the details.

Nothing from the server is trusted.  An entry is installed only when it is
authenticated (an HMAC-SHA256 tag over the content key, the entry's
options and every file's bytes, made with a key only trusted writers hold)
or re-checked (the driver rebuilds the output here and compares the
bytes); `Hit.signed` says which the driver still has to do.  Before that,
the entry must name exactly the files this emit would write, for the same
model file and verification options, every blob must match its sha256,
and every field of the cached manifest must have the type and value emit
writes; anything else is a miss with a one-line warning, and the emit
compiles.  Every request has a total deadline and every body a size cap;
a redirect to another origin is not followed.  An unreachable,
slow or misbehaving server is a warning too.  Credentials in the URL
(`http://user:pass@host/`) go into an Authorization header and never into
a message or the manifest; text from the server is shown through
errors.printable.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import math
import os
import re
import socket
import ssl
import stat
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from ireegen.common.errors import UsageError, printable
from ireegen.common.progress import progress

from .outputs import MANIFEST, manifest_text, sha256_of

ENTRY_SCHEMA = 1
MODES = ("readwrite", "read")
DEADLINE_SECONDS = 30.0  # one request, connect to last byte
MAX_BYTES = 1 << 30  # all the files of one entry together
MAX_ENTRY_BYTES = 1 << 20  # an entry lists a dozen files; anything longer is not one
MIN_KEY_BYTES = 16
MAX_KEY_BYTES = 4096
MAX_REDIRECTS = 3
TAG_DOMAIN = b"ireegen cache entry v1\0"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CHUNK = 1 << 16


def redact(url: str) -> str:
    """`url` as a message may show it: everything between the scheme and the
    last `@` (a user and password, percent-encoded or not, with `/`, `?` or
    `#` in them) replaced by ***, control characters escaped."""
    scheme, sep, rest = str(url).partition("://")
    if not sep:
        scheme, rest = "", scheme
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return printable(f"{scheme}{sep}{rest}")


def warn(message: str) -> None:
    print(f"ireegen: warning: {printable(message)}", file=sys.stderr)


class _Unreachable(Exception):
    """The server did not answer in time, or answered with a 5xx, a redirect
    elsewhere or a body over the cap: the cache is off for this emit."""


def _read_key(origin: str, path: str) -> bytes:
    """The HMAC key in the file `path`, trailing whitespace removed; one line
    naming `origin` when it is not a regular file or too short."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise UsageError(f"{origin} {printable(path)}: cannot read the cache key ({e.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{origin} {printable(path)}: the cache key must be a regular file")
        if info.st_size > MAX_KEY_BYTES:
            raise UsageError(f"{origin} {printable(path)}: a cache key is at most {MAX_KEY_BYTES} bytes")
        data = os.read(fd, MAX_KEY_BYTES + 1)
    finally:
        os.close(fd)
    return data.rstrip()


def cache_key(origin: str, key: bytes) -> bytes:
    """`key` when it is long enough to be a secret; one line naming `origin` otherwise."""
    if len(key) < MIN_KEY_BYTES:
        raise UsageError(
            f"{origin}: a cache key has at least {MIN_KEY_BYTES} bytes (try: head -c 32 /dev/urandom | base64)"
        )
    return key


def key_from(file_origin: str, path, value_origin: str, value) -> bytes | None:
    """The cache key from a key file (`path`, named `file_origin` in errors)
    or else from the text `value` (an environment variable); None when neither is set."""
    if path:
        return cache_key(f"{file_origin} {printable(path)}", _read_key(file_origin, path))
    if value:
        return cache_key(value_origin, value.encode())
    return None


def entry_tag(key: bytes, content_key: str, expect: dict, files: dict) -> str:
    """HMAC-SHA256 with `key` over the content key, the entry's options and
    every file (name and bytes, manifest.json included), each length-prefixed."""
    mac = hmac.new(key, TAG_DOMAIN, hashlib.sha256)
    options = json.dumps(expect, sort_keys=True, separators=(",", ":")).encode()
    for part in (content_key.encode(), options):
        mac.update(len(part).to_bytes(8, "big") + part)
    for name in sorted(files):
        encoded = name.encode()
        mac.update(len(encoded).to_bytes(8, "big") + encoded)
        mac.update(len(files[name]).to_bytes(8, "big"))
        mac.update(files[name])
    return mac.hexdigest()


@dataclass
class Hit:
    files: dict  # file name -> bytes, manifest.json included
    manifest: dict
    signed: bool  # its tag is right under the configured key: a trusted writer made it


@dataclass
class Cache:
    """A cache server at `url` (http or https); `mode` "read" never uploads.
    With a `key` (bytes), uploads are signed and only signed entries are
    installed without a rebuild; `recheck` rebuilds every hit."""

    url: str
    mode: str = "readwrite"
    deadline: float = DEADLINE_SECONDS
    max_bytes: int = MAX_BYTES
    key: bytes | None = field(default=None, repr=False)
    recheck: bool = False
    url_origin: str = field(default="--cache", repr=False)  # where url and mode came from, for errors
    mode_origin: str = field(default="--cache-mode", repr=False)
    _scheme: str = field(init=False, repr=False)
    _host: str = field(init=False, repr=False)
    _port: int = field(init=False, repr=False)
    _path: str = field(init=False, repr=False)
    _auth: str | None = field(init=False, repr=False)
    _down: bool = field(init=False, default=False, repr=False)
    _bad: set = field(init=False, default_factory=set, repr=False)  # sha256s of corrupt blobs seen

    def __post_init__(self):
        bad = UsageError(f"{self.url_origin} {redact(self.url)}: expected an http:// or https:// URL")
        try:
            parts = urllib.parse.urlsplit(self.url)
            port = parts.port
            hostname = parts.hostname
        except ValueError as e:  # its text can quote the password: not shown
            why = (
                "an IPv6 address without its closing ]"
                if "IPv6" in str(e)
                else "a port that is not a number up to 65535"
            )
            raise UsageError(
                f"{self.url_origin} {redact(self.url)}: not a URL ({why}; percent-encode @ / ? # in a password)"
            ) from None
        if parts.scheme not in ("http", "https") or not hostname:
            raise bad
        if any(ord(c) < 0x21 or ord(c) == 0x7F for c in self.url):
            raise UsageError(f"{self.url_origin} {redact(self.url)}: a URL has no spaces or control characters")
        after = self.url.split("://", 1)[1]
        if "@" in after and "@" not in parts.netloc or parts.query or parts.fragment:
            raise UsageError(
                f"{self.url_origin} {redact(self.url)}: percent-encode the user and password "
                "(@ / ? # as %40 %2F %3F %23); a cache URL has no query or fragment"
            )
        if self.mode not in MODES:
            raise UsageError(f"{self.mode_origin} {printable(self.mode)}: expected one of {', '.join(MODES)}")
        self._scheme, self._host = parts.scheme, hostname
        self._port = port or (443 if parts.scheme == "https" else 80)
        self._path = parts.path.rstrip("/")
        self._auth = None
        if parts.username is not None:
            pair = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            self._auth = "Basic " + base64.b64encode(pair.encode()).decode()

    @property
    def label(self) -> str:
        """The server as messages show it: credentials as ***."""
        return redact(self.url).rstrip("/")

    # -- HTTP ---------------------------------------------------------------

    def _authority(self) -> str:
        """host:port as a Host header and a URL write them (an IPv6 address in brackets)."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        default = 443 if self._scheme == "https" else 80
        return host if self._port == default else f"{host}:{self._port}"

    def _request(self, method: str, path: str, data: bytes | None = None, limit: int | None = None):
        """(status, body) of one request; body None unless GET and 200.
        The whole exchange, redirects included, ends by the deadline.
        Raises _Unreachable when the server does not answer in time, answers
        5xx, or redirects to another origin.  A body is read up to `limit`
        + 1 bytes, enough for the caller to tell it is too long."""
        end = time.monotonic() + self.deadline
        target = f"{self._path}/{path}"
        for _hop in range(MAX_REDIRECTS + 1):
            status, body, location = self._exchange(method, target, data, limit, end)
            if status not in (301, 302, 303, 307, 308):
                return status, body
            target = self._same_origin(location)
        raise _Unreachable(f"more than {MAX_REDIRECTS} redirects")

    def _same_origin(self, location: str | None) -> str:
        """The path of a redirect's `location` on this server; a redirect
        anywhere else is not followed (the credentials would go with it)."""
        if not location:
            raise _Unreachable("a redirect without a Location")
        try:
            parts = urllib.parse.urlsplit(urllib.parse.urljoin(f"{self._scheme}://{self._authority()}/", location))
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise _Unreachable("a redirect to a malformed Location") from None
        if (parts.scheme, parts.hostname, port) != (self._scheme, self._host, self._port):
            raise _Unreachable(f"a redirect to another origin, {redact(location)}, not followed")
        return urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))

    def _exchange(self, method: str, target: str, data, limit, end: float):
        """One request and response: (status, body or None, Location).  A
        watchdog closes the socket at `end`, so a server that drips bytes or
        never finishes cannot hold the emit past the deadline."""
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise _Unreachable(f"no answer within {self.deadline:g} s")
        if self._scheme == "https":
            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=remaining, context=ssl.create_default_context()
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=remaining)
        expired = threading.Event()

        def expire():
            expired.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        watchdog = threading.Timer(remaining, expire)
        watchdog.daemon = True
        watchdog.start()
        headers = {"Host": self._authority()}
        if self._auth:
            headers["Authorization"] = self._auth
        if data is not None:
            headers["Content-Type"] = "application/octet-stream"
        try:
            conn.request(method, urllib.parse.quote(target, safe="/%:@!$&'()*+,;=-._~"), body=data, headers=headers)
            response = conn.getresponse()
            location = response.getheader("Location")
            if 500 <= response.status:
                raise _Unreachable(f"HTTP {response.status}")
            body = None
            if method == "GET" and response.status == 200:
                body = _read_at_most(response, limit)
            return response.status, body, location
        except (OSError, http.client.HTTPException, ValueError) as e:
            if expired.is_set() or isinstance(e, TimeoutError):  # the socket's timeout is the time left
                raise _Unreachable(f"no answer within {self.deadline:g} s") from None
            raise _Unreachable(_reason(e)) from None
        finally:
            watchdog.cancel()
            conn.close()

    def _unreachable(self, e: _Unreachable, doing: str) -> None:
        self._down = True
        warn(f"cache {self.label} is unreachable ({e}); {doing}")

    # -- lookup -------------------------------------------------------------

    def lookup(self, key: str, names: list, expect: dict, name: str) -> Hit | None:
        """The output for content key `key` when the server has a sound entry
        for exactly the files `names` (manifest.json aside), `expect` (the
        model's source description and the verification options) and the
        output name `name`; None on a miss, after a warning when the entry,
        a blob or the manifest is bad or the tag is wrong."""
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
            if sum(f["size"] for f in entry["files"]) > self.max_bytes:
                warn(
                    f"cache {self.label}: the entry for {key[:12]} lists more than the {self.max_bytes} bytes "
                    "--cache-max-bytes allows; compiling"
                )
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
                if len(blob) > f["size"]:
                    self._bad.add(f["sha256"])
                    warn(
                        f"cache {self.label}: {f['path']} of {key[:12]} is longer than the {f['size']} bytes "
                        "its entry lists (not read further); compiling"
                    )
                    return None
                if len(blob) != f["size"] or hashlib.sha256(blob).hexdigest() != f["sha256"]:
                    self._bad.add(f["sha256"])
                    warn(f"cache {self.label}: {f['path']} of {key[:12]} does not match its sha256; compiling")
                    return None
                files[f["path"]] = blob
        except _Unreachable as e:
            self._unreachable(e, "compiling locally")
            return None
        signed = False
        if self.key is not None:
            tag = entry.get("hmac_sha256")
            if not isinstance(tag, str) or not hmac.compare_digest(tag, entry_tag(self.key, key, expect, files)):
                why = "is not signed" if tag is None else "has a tag that does not match"
                warn(f"cache {self.label}: the entry for {key[:12]} {why} with the cache key; not installed, compiling")
                return None
            signed = True
        manifest, reason = check_manifest(files, key, name, names)
        if manifest is None:
            warn(f"cache {self.label}: the manifest of {key[:12]} is unusable ({reason}); compiling")
            return None
        return Hit(files, manifest, signed)

    # -- upload -------------------------------------------------------------

    def store(self, key: str, files: dict, expect: dict) -> None:
        """Uploads `files` (name -> bytes, manifest.json included) as the
        output for `key`: the blobs first, the entry last, so that a reader
        never finds an entry whose blobs are not there yet.  With a key, the
        entry carries its tag."""
        if self.mode == "read" or self._down:
            return
        listed = [
            {"path": name, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            for name, data in sorted(files.items())
        ]
        entry = {"ireegen_cache": ENTRY_SCHEMA, "content_key": key, **expect, "files": listed}
        if self.key is not None:
            entry["hmac_sha256"] = entry_tag(self.key, key, expect, files)
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


def _reason(e: Exception) -> str:
    """A network error in a few words."""
    if isinstance(e, socket.timeout | TimeoutError):
        return "timed out"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    reason = getattr(e, "reason", None)
    return str(reason or e or type(e).__name__)


def _read_at_most(response, limit: int | None) -> bytes:
    """The body, or its first limit + 1 bytes (enough to tell it is too
    long), read in pieces: a size the server claims never becomes one
    allocation, and an endless body stops at the cap."""
    chunks, total = [], 0
    while limit is None or total <= limit:
        want = _CHUNK if limit is None else min(_CHUNK, limit + 1 - total)
        chunk = response.read(want)
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
    except (ValueError, UnicodeDecodeError, RecursionError):
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
        and type(f.get("size")) is int
        and f["size"] >= 0
        for f in files
    ):
        return None, "its file list is malformed"
    paths = [f["path"] for f in files]
    if sorted(paths) != sorted(set(names) | {MANIFEST}) or len(paths) != len(set(paths)):
        return None, "it names other files than this emit writes"
    return entry, None


# The fields of a manifest that the CLI and later emits read, with their
# types; check_manifest checks each before anything reaches OUTDIR.
_MANIFEST_TYPES = {
    "content_key": str,
    "ireegen_version": str,
    "name": str,
    "execution_model": str,
    "files": list,
    "functions": list,
    "verification": dict,
}
_FILE_TYPES = {"path": str, "role": str, "sha256": str}
_VERIFICATION_TYPES = {
    "verified": bool,
    "functions": dict,
    "not_exercised": dict,
    "ran": str,
    "ran_the_emitted_code": bool,
}


def _number_or_none(value) -> bool:
    return value is None or (type(value) in (int, float) and math.isfinite(value))


def _check_verification(section: dict) -> str | None:
    """Why the verification record `section` is not one emit writes, or None."""
    for name, kind in _VERIFICATION_TYPES.items():
        if name in section and type(section[name]) is not kind:
            return f"verification.{name} is not a {kind.__name__}"
    idle = section.get("not_exercised", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in idle.items()):
        return "verification.not_exercised is not text"
    for function, record in section.get("functions", {}).items():
        outputs = record.get("outputs") if isinstance(record, dict) else None
        if not isinstance(outputs, dict) or not all(
            isinstance(o, dict) and _number_or_none(o.get("max_abs_error")) for o in outputs.values()
        ):
            return f"verification.functions.{function} has no numeric outputs"
    return None


def check_manifest(files: dict, key: str, name: str, names: list):
    """(manifest, None) when the cached manifest.json is this key's and this
    output name's, has every field emit writes with its type, lists exactly
    the cached files (names this emit writes) with their sha256, and is byte
    for byte what emit writes for it; else (None, why).  Nothing is written
    before this holds."""
    try:
        manifest = json.loads(files[MANIFEST])
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None, "not JSON"
    if not isinstance(manifest, dict):
        return None, "not a JSON object"
    for field_name, kind in _MANIFEST_TYPES.items():
        if type(manifest.get(field_name)) is not kind:
            return None, f"{field_name} is missing or not a {kind.__name__}"
    if manifest["content_key"] != key:
        return None, "it is for another content key"
    if manifest["name"] != name:
        return None, "it is for another output name"
    if manifest_text(manifest).encode() != files[MANIFEST]:
        return None, "not in ireegen's canonical form"
    listed = manifest["files"]
    for f in listed:
        if not isinstance(f, dict) or any(type(f.get(k)) is not t for k, t in _FILE_TYPES.items()):
            return None, "its file list is malformed"
        if f["path"] not in names or not _SHA256.match(f["sha256"]):
            return None, "its file list names a file this emit does not write"
    if len({f["path"] for f in listed}) != len(listed):
        return None, "its file list names a file twice"
    actual = {n: hashlib.sha256(b).hexdigest() for n, b in files.items() if n != MANIFEST}
    if {f["path"]: f["sha256"] for f in listed} != actual:
        return None, "its file list does not match the cached files"
    why = _check_verification(manifest["verification"])
    if why is not None:
        return None, why
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
