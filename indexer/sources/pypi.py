"""vllm's released source archives (`vllm-X.Y.Z.tar.gz`) from the package index pip is configured with.

The index is asked once per run through the PEP 691 JSON simple API (a PEP 503 HTML page is understood
too, for mirrors that serve only HTML). Its URL is `PIP_INDEX_URL`, else `index-url` from pip's
configuration files (read directly, in pip's order; `[install]` overrides `[global]`), else PyPI.

Archives are downloaded into the cache directory (platformdirs' user cache dir for "tpindex", under
`sdists/`) through a temporary `.part` file (locked while it is written) that is renamed only once its
hash matches the index's, so the cache never holds a partial or unverified archive; `.part` files left by
a killed download are removed by the next run. Beside each archive, `<archive>.sha256` records the sha256
it was verified with. A cached archive is hashed again (sha256, ~0.1 s for 45 MB) each time it is used:
against the index's hash (one that no longer matches is downloaded again) or, offline, against that
record (an archive with no record, or one that no longer matches it, is refused).

Versions are labelled `vX.Y.Z` like the git tags. Archives are read in place (no extraction), always to
their end: the tar end-of-archive marker must be there with nothing but zeros after it, and gzip's CRC and
length are verified, so a damaged archive is refused rather than read as a shorter one. The first path
component (`vllm-X.Y.Z/`) is stripped and the files a source tree would not have (PKG-INFO, *.egg-info/)
are left out. Blob ids are git's, so a file is one blob whichever source.
"""

from __future__ import annotations

import base64
import configparser
import fcntl
import gzip
import hashlib
import io
import json
import os
import secrets
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from ..core.cachedir import cache_home
from . import FileEntry, SourceError, VersionRef, git_blob_id

PROJECT = "vllm"
PYPI = "https://pypi.org/simple"
ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
TIMEOUT = 60
CHUNK = 1 << 20
STALE_PART_SECONDS = 60  # an unlocked .part file this old was left by a killed download


class PackageIndexError(SourceError):
    """The index cannot be read, or an archive cannot be downloaded, does not match its hash or cannot be
    read; `hint` says what to do when the generic advice would not fit."""


# -- where the index is ------------------------------------------------------------------------------


def pip_config_files(env=None) -> list[Path]:
    """pip's configuration files, lowest priority first (global, user, site, then PIP_CONFIG_FILE)."""
    env = os.environ if env is None else env
    xdg_dirs = env.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    files = [Path(d) / "pip" / "pip.conf" for d in xdg_dirs.split(os.pathsep) if d][::-1]
    files.append(Path("/etc/pip.conf"))
    explicit = env.get("PIP_CONFIG_FILE")
    if not (explicit and os.path.exists(explicit)):
        home = Path(env.get("HOME") or Path.home())
        files.append(home / ".pip" / "pip.conf")
        files.append(Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf")
    files.append(Path(sys.prefix) / "pip.conf")
    if explicit:
        files.append(Path(explicit))
    return files


def pip_setting(name: str, env=None, files: list[Path] | None = None) -> str | None:
    """A pip option as pip would see it: PIP_<NAME>, else the last config file setting it."""
    env = os.environ if env is None else env
    value = env.get("PIP_" + name.upper().replace("-", "_"))
    if value:
        return value
    found = None
    for path in pip_config_files(env) if files is None else files:
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue
        for section in ("global", "install"):
            for key in (name, name.replace("-", "_")):
                if parser.has_option(section, key) and parser.get(section, key).strip():
                    found = parser.get(section, key).strip()
    return found


def configured_index_url(env=None, files: list[Path] | None = None) -> str:
    """The index pip installs from: PIP_INDEX_URL, pip's index-url, else PyPI."""
    value = pip_setting("index-url", env, files)
    return value.split()[0] if value else PYPI


def default_cache_dir() -> Path:
    return cache_home() / "sdists"


def redact(url: str) -> str:
    """A URL without its password, for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


# -- the listing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Release:
    label: str  # "v0.30.0"
    filename: str  # "vllm-0.30.0.tar.gz"
    url: str
    hashes: tuple[tuple[str, str], ...]  # (algorithm, hex digest) as the index gives them
    cached: bool = False  # offline: an archive found in the cache, verified against its .sha256 record


def sdist_version(filename: str) -> str | None:
    """ "0.30.0" for "vllm-0.30.0.tar.gz"; None for wheels, other archives and other projects."""
    from ..core.specs import parse_version

    stem = filename[: -len(".tar.gz")] if filename.endswith(".tar.gz") else None
    if stem is None or not stem.lower().startswith(PROJECT + "-"):
        return None
    version = stem[len(PROJECT) + 1 :]
    return version if parse_version(version) is not None else None


def file_version(filename: str) -> str | None:
    """The vllm version of any file of the listing (a wheel's too): "0.15.0" for
    "vllm-0.15.0-cp38-abi3-manylinux_2_31_x86_64.whl"; None for other projects."""
    from ..core.specs import parse_version

    if filename.endswith(".whl") and filename.lower().startswith(PROJECT + "-"):
        version = filename[len(PROJECT) + 1 :].split("-", 1)[0]
        return version if parse_version(version) is not None else None
    return sdist_version(filename)


def without_archive(filenames: list[str], releases: dict) -> list[str]:
    """The labels of the versions the listing has files of (wheels) but no source archive of."""
    from ..core.specs import sort_key

    found = {f"v{v}" for f in filenames if (v := file_version(f)) is not None}
    return sorted(found - set(releases), key=sort_key)


def _yanked(value) -> bool:
    return value is not None and value is not False  # PEP 691: true, or a reason string


def releases_from_json(data: dict, page_url: str) -> dict[str, Release]:
    out: dict[str, Release] = {}
    for f in data.get("files", []):
        version = sdist_version(f.get("filename", ""))
        if version is None or _yanked(f.get("yanked", False)):
            continue
        hashes = tuple(sorted((k.lower(), v.lower()) for k, v in (f.get("hashes") or {}).items()))
        out["v" + version] = Release(
            "v" + version, f["filename"], urllib.parse.urljoin(page_url, f["url"]), hashes
        )
    return out


class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[tuple[dict, str]] = []
        self._open: dict | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._open, self._text = dict(attrs), ""

    def handle_data(self, data):
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "a" and self._open is not None:
            self.links.append((self._open, self._text.strip()))
            self._open = None


def releases_from_html(text: str, page_url: str) -> dict[str, Release]:
    """PEP 503: anchors whose text is the file name, hash in the URL fragment, data-yanked when yanked."""
    parser = _Anchors()
    parser.feed(text)
    out: dict[str, Release] = {}
    for attrs, name in parser.links:
        href = attrs.get("href") or ""
        url, _, fragment = urllib.parse.urljoin(page_url, href).partition("#")
        filename = name or urllib.parse.unquote(url.rsplit("/", 1)[-1])
        version = sdist_version(filename)
        if version is None or "data-yanked" in attrs:
            continue
        algo, _, digest = fragment.partition("=")
        hashes = ((algo.lower(), digest.lower()),) if digest else ()
        out["v" + version] = Release("v" + version, filename, url, hashes)
    return out


# -- the source ------------------------------------------------------------------------------------------


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        pass


class PypiSource:
    kind = "pypi"

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        progress: Callable | None = None,
        index_url: str | None = None,
        opener: Callable | None = None,
    ):
        """`progress(total, label)`: a download's progress bar (a context manager with `update(n)`), from
        the presenting layer; None: no bar."""
        self.index_url = (index_url or configured_index_url()).rstrip("/")
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self.offline: str | None = None  # why the index could not be read, when working from the cache
        self.progress = progress
        self._opener = opener or _default_opener()
        self._releases: dict[str, Release] | None = None
        self._without_archive: list[str] = []  # versions the listing has wheels of, no source archive
        self._verified: dict[str, tuple[Path, str]] = {}  # label -> (archive, sha256), checked this run
        self._parts_cleaned = False

    # -- version names -------------------------------------------------------------------------------
    def releases(self) -> dict[str, Release]:
        """label -> release, for every sdist the index lists and has not yanked (fetched once)."""
        if self._releases is None:
            try:
                self._releases = self._fetch_listing()
            except PackageIndexError as e:
                cached = self._cached_releases()
                if not cached:
                    raise
                self.offline = str(e)
                print(
                    f"warning: {e}; working offline with the {len(cached)} archive(s) in {self.cache_dir}"
                    " (each checked against the sha256 recorded when it was downloaded)",
                    file=sys.stderr,
                )
                self._releases = cached
        return self._releases

    def _cached_releases(self) -> dict[str, Release]:
        """The archives already in the cache, as releases with no index hash (offline use only)."""
        out = {}
        for path in sorted(self.cache_dir.glob(f"{PROJECT}-*.tar.gz")) if self.cache_dir.is_dir() else []:
            version = sdist_version(path.name)
            if version is not None:
                out[f"v{version}"] = Release(f"v{version}", path.name, "", (), cached=True)
        return out

    def names(self) -> list[str]:
        return list(self.releases())

    def is_ref(self, name: str) -> bool:
        return False

    def missing(self, name: str) -> str | None:
        """Why the index has no release `name` (core.specs.select's `missing`): wheels but no source archive
        (vllm 0.15.x), or nothing at all; None when `name` is no version or the index could not be read."""
        from ..core.specs import parse_version

        v = parse_version(name)
        if v is None or self.offline:
            return None
        label = f"v{name[1:] if name[:1] in 'vV' else name}"
        if label in self._without_archive:
            return (
                f"vllm {label} has wheels but no source archive on {redact(self.index_url)} (tpindex reads"
                " source archives), so no build can index it"
            )
        return f"the package index {redact(self.index_url)} lists no release {label} of {PROJECT}"

    def listing(self) -> dict | None:
        """What the index lists, for the hints of later questions (stored by the build): the releases with a
        source archive and the versions with wheels only; None when working offline from the cache."""
        if self.offline or self._releases is None:
            return None
        return {
            "source": self.kind,
            "origin": redact(self.index_url),
            "names": list(self._releases),
            "without_archive": list(self._without_archive),
        }

    def ref(self, name: str) -> VersionRef:
        """The version, with its archive downloaded (or found in the cache) and verified."""
        from ..core.specs import sort_key

        release = self._release(name)
        _, sha256 = self.archive(release.label)
        return VersionRef(
            label=release.label,
            ref=release.filename,
            commit=sha256,
            source="pypi",
            sort_key=sort_key(release.label),
            origin=redact(self.index_url),
        )

    # -- files -----------------------------------------------------------------------------------------
    def files(self, version: VersionRef, scope) -> Iterator[FileEntry]:
        def wanted(name: str) -> str | None:
            rel = _tree_path(name)
            return rel if rel is not None and scope.matches(rel) else None

        yield from self._entries(version, wanted)

    def tree(self, version: VersionRef) -> list[FileEntry]:
        """Every file of the archive, read in the same one pass as files()."""
        return self._entries(version, _tree_path)

    def _entries(self, version: VersionRef, wanted: Callable[[str], str | None]) -> list[FileEntry]:
        path, _ = self.archive(version.label)
        try:
            members = read_members(path, wanted)
        except PackageIndexError as e:
            raise PackageIndexError(f"{version.label}: {e}", e.hint) from e
        except OSError as e:  # the disk under the cache
            raise PackageIndexError(f"{version.label}: cannot read {path} ({e.strerror or e})") from e
        return [FileEntry(rel, git_blob_id(data), _const(data)) for rel, data in members]

    # -- archives --------------------------------------------------------------------------------------
    def archive(self, label: str) -> tuple[Path, str]:
        """The verified archive of a version in the cache, downloading it if needed; -> (path, sha256)."""
        if label in self._verified:
            return self._verified[label]
        release = self._release(label)
        dest = self.cache_dir / release.filename
        if not self._parts_cleaned:
            self._parts_cleaned = True
            remove_stale_parts(self.cache_dir)
        if release.cached:  # offline: only against the sha256 recorded when it was downloaded
            self._verified[label] = (dest, _verify_offline(release, dest))
            return self._verified[label]
        algo, expected = _pick_hash(release)
        if dest.is_file():
            digests = _file_digests(dest, algo)
            if digests[algo] == expected:
                _record_sha256(dest, digests["sha256"])
                self._verified[label] = (dest, digests["sha256"])
                return self._verified[label]
        self._verified[label] = (dest, self._download(release, dest, algo, expected))
        return self._verified[label]

    def _release(self, name: str) -> Release:
        from ..core.specs import closest

        releases = self.releases()
        label = name if name.startswith("v") else "v" + name
        if label not in releases and self.offline:
            raise PackageIndexError(
                f"{label} is not in the cache {self.cache_dir} and the package index cannot be"
                f" reached ({self.offline})"
            )
        if label not in releases:
            hint = ", ".join(closest(name, releases)) or "none"
            raise PackageIndexError(
                (
                    self.missing(name)
                    or f"{name} is not a released source archive of {PROJECT} on {redact(self.index_url)}"
                )
                + f" (nearest: {hint})"
            )
        return releases[label]

    def _download(self, release: Release, dest: Path, algo: str, expected: str) -> str:
        where = f"{release.label}: download of {release.filename} from {redact(release.url)}"
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = str(dest.parent / f".{release.filename}.{os.getpid()}.{secrets.token_hex(4)}.part")
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666
            )  # the umask applies, as to any file
            fcntl.flock(fd, fcntl.LOCK_EX)  # in use: remove_stale_parts() leaves it alone
        except OSError as e:
            raise PackageIndexError(
                f"{release.label}: cannot write to the cache directory {dest.parent} "
                f"({e.strerror or e}); pass another --cache-dir"
            ) from e
        try:
            h, sha256 = hashlib.new(algo), hashlib.sha256()
            with os.fdopen(fd, "wb") as out, self._open(release.url) as resp:
                total = int(resp.headers.get("Content-Length") or 0) or None
                with self._bar(total, release) as bar:
                    while chunk := resp.read(CHUNK):
                        out.write(chunk)
                        h.update(chunk)
                        if algo != "sha256":
                            sha256.update(chunk)
                        bar.update(len(chunk))
            if h.hexdigest() != expected:
                raise PackageIndexError(
                    f"{where} does not match the index's {algo} ({h.hexdigest()[:16]}..., "
                    f"expected {expected[:16]}...); nothing of {release.label} was indexed"
                )
            os.replace(tmp, dest)
            digest = h.hexdigest() if algo == "sha256" else sha256.hexdigest()
            _record_sha256(dest, digest)
            return digest
        except PackageIndexError:
            _unlink(tmp)
            raise
        except (urllib.error.URLError, OSError, ValueError) as e:
            _unlink(tmp)
            raise PackageIndexError(f"{where} failed: {_reason(e)}") from e
        except BaseException:
            _unlink(tmp)
            raise

    def _bar(self, total: int | None, release: Release):
        if not self.progress or not total:
            return _NoBar()
        return self.progress(total, f"downloading {release.filename}")

    # -- HTTP ------------------------------------------------------------------------------------------------
    def _open(self, url: str, accept: str | None = None):
        headers = {"User-Agent": "tpindex"}
        if accept:
            headers["Accept"] = accept
        parts = urllib.parse.urlsplit(url)
        index = urllib.parse.urlsplit(self.index_url)
        if parts.username is not None or (index.username is not None and parts.hostname == index.hostname):
            user = urllib.parse.unquote(parts.username or index.username or "")
            password = urllib.parse.unquote(parts.password or index.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
            netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
            url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
        return self._opener(urllib.request.Request(url, headers=headers))

    def _fetch_listing(self) -> dict[str, Release]:
        url = f"{self.index_url}/{PROJECT}/"
        try:
            with self._open(url, ACCEPT) as resp:
                body = resp.read()
                page_url = resp.geturl() if hasattr(resp, "geturl") else url
                ctype = (resp.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                raise PackageIndexError(
                    f"the package index {redact(self.index_url)} has no project {PROJECT} "
                    "(HTTP 404); set PIP_INDEX_URL to an index that has it"
                ) from e
            raise PackageIndexError(f"cannot read the package index at {redact(url)}: {_reason(e)}") from e
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise PackageIndexError(
                f"cannot read the package index at {redact(url)}: {_reason(e)}; "
                "check the network or PIP_INDEX_URL"
            ) from e
        try:
            if "json" in ctype or body.lstrip()[:1] == b"{":
                data = json.loads(body)
                found = releases_from_json(data, page_url)
                files = [f.get("filename", "") for f in data.get("files", [])]
            else:
                text = body.decode("utf-8", "replace")
                found = releases_from_html(text, page_url)
                parser = _Anchors()
                parser.feed(text)
                files = [
                    name or urllib.parse.unquote((a.get("href") or "").rsplit("/", 1)[-1])
                    for a, name in parser.links
                ]
            self._without_archive = without_archive(files, found)
            return found
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise PackageIndexError(
                f"the package index at {redact(url)} sent a listing tpindex cannot read "
                f"({type(e).__name__}: {e})"
            ) from e


# -- reading archives ------------------------------------------------------------------------------------
# tarfile spends most of its time decoding headers (every member of a recent vllm sdist has a pax header);
# this reader decodes only what is needed (name, type, size, link) and is 2-3x faster. Any header it does
# not understand (bad checksum, truncation) makes the whole archive be read again with tarfile.
# Both read to the end of the gzip stream (GzipFile checks the CRC and length only there) and require the
# end-of-archive marker followed by zeros only: tarfile alone takes a damaged header for the end of the
# archive, and a damaged archive would be indexed as a shorter one.

BLOCK = 512
_ZERO = bytes(BLOCK)
_REGULAR = (b"0", b"\0", b"7")


class _Unreadable(ValueError):
    pass


def read_members(path: Path, wanted: Callable[[str], str | None]) -> list[tuple[str, bytes]]:
    """(wanted(name), bytes) of the regular files and symlinks (as their target) for which wanted() is
    not None, in archive order. An archive that is not whole and intact raises PackageIndexError."""
    try:
        try:
            return list(_fast_members(path, wanted))
        except _Unreadable:
            return list(_tarfile_members(path, wanted))
    except (_Unreadable, tarfile.TarError, EOFError, zlib.error, OSError, ValueError) as e:
        if isinstance(e, OSError) and not isinstance(e, gzip.BadGzipFile) and e.errno is not None:
            raise  # the disk, not the archive: not a reason to delete it
        why = str(e) if isinstance(e, _Unreadable) else f"{type(e).__name__}: {e}"
        raise PackageIndexError(
            f"cannot read {path} as a tar.gz archive ({why}); it is damaged",
            f"delete {path} and run the build again with the package index reachable: it is downloaded again",
        ) from e


def _tarfile_members(path: Path, wanted) -> Iterator[tuple[str, bytes]]:
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if member.isfile() or member.issym():
                key = wanted(member.name)
                if key is not None:
                    data = tar.extractfile(member).read() if member.isfile() else member.linkname.encode()
                    yield key, data
        tar.fileobj.seek(tar.offset)  # where tarfile stopped: the end marker, or a header it could not read
        _read_to_end(tar.fileobj.read, b"")


def _read_to_end(read, first: bytes) -> None:
    """After the last member: the end-of-archive marker (zero blocks; `first` is the block already read)
    and nothing but zero padding up to the end of the gzip stream, whose CRC and length are checked
    when it is read to its end."""
    seen = len(first)
    while chunk := read(CHUNK):
        if chunk.count(0) != len(chunk):
            raise _Unreadable("data after the end-of-archive marker (a damaged header read as the end?)")
        seen += len(chunk)
    if seen < BLOCK:
        raise _Unreadable("no end-of-archive marker (truncated archive)")


def _fast_members(path: Path, wanted) -> Iterator[tuple[str, bytes]]:
    with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw) as gz:
        read = io.BufferedReader(gz, CHUNK).read
        global_pax: dict[str, str] = {}
        pending: dict[str, str] = {}
        while True:
            h = read(BLOCK)
            if not h:
                raise _Unreadable("no end-of-archive marker (truncated archive)")
            if h == _ZERO:
                _read_to_end(read, h)
                return
            if len(h) < BLOCK or sum(h[:148]) + 256 + sum(h[156:]) != _number(h[148:156]):
                raise _Unreadable("unexpected header")
            kind = h[156:157]
            size = _number(h[124:136])
            if kind in (b"x", b"g", b"L", b"K"):  # pax (per member, global), GNU long name / link
                data = _exact(read, size)[:size]
                if kind == b"x":
                    pending.update(_pax(data))
                elif kind == b"g":
                    global_pax.update(_pax(data))
                else:
                    pending["path" if kind == b"L" else "linkpath"] = _text(data)
                continue
            meta = {**global_pax, **pending} if pending or global_pax else {}
            pending = {}
            name = meta.get("path")
            if name is None:
                name = _text(h[0:100])
                if h[257:263] == b"ustar\0" and h[345] != 0:  # POSIX ustar: name = prefix/name
                    name = _text(h[345:500]) + "/" + name
            if "size" in meta:
                size = int(meta["size"])
            key = wanted(name) if kind in _REGULAR or kind == b"2" else None
            data = _exact(read, size)
            if key is not None:
                yield (
                    key,
                    data[:size] if kind in _REGULAR else (meta.get("linkpath") or _text(h[157:257])).encode(),
                )


def _exact(read, size: int) -> bytes:
    """The member data padded to whole blocks."""
    padded = -(-size // BLOCK) * BLOCK
    data = read(padded) if padded else b""
    if len(data) != padded:
        raise _Unreadable("truncated archive")
    return data


def _number(field: bytes) -> int:
    if field[:1] in (b"\x80", b"\xff"):  # GNU base-256
        n = int.from_bytes(field[1:], "big")
        return n - (1 << (8 * (len(field) - 1))) if field[:1] == b"\xff" else n
    digits = field.split(b"\0", 1)[0].strip()
    try:
        return int(digits, 8) if digits else 0
    except ValueError:
        raise _Unreadable(f"bad number {field!r}") from None


def _text(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _pax(data: bytes) -> dict[str, str]:
    """Records "<length> <key>=<value>\\n"."""
    out, i = {}, 0
    try:
        while i < len(data) and data[i : i + 1] != b"\0":
            space = data.index(b" ", i)
            length = int(data[i:space])
            key, _, value = data[space + 1 : i + length - 1].partition(b"=")
            out[key.decode("utf-8", "replace")] = value.decode("utf-8", "surrogateescape")
            i += length
    except ValueError:
        raise _Unreadable("bad pax header") from None
    return out


def _default_opener() -> Callable:
    import ssl

    cafile = pip_setting("cert")
    context = None
    if cafile and os.path.isfile(cafile):
        context = ssl.create_default_context(cafile=cafile)

    def open_url(request):
        return urllib.request.urlopen(request, timeout=TIMEOUT, context=context)

    return open_url


def _pick_hash(release: Release) -> tuple[str, str]:
    hashes = dict(release.hashes)
    if "sha256" in hashes:
        return "sha256", hashes["sha256"]
    for algo in sorted(hashes):
        if algo in hashlib.algorithms_guaranteed and algo not in ("md5", "sha1"):
            return algo, hashes[algo]
    raise PackageIndexError(
        f"{release.label}: the package index lists {release.filename} without a usable hash"
        " (sha256 or another secure one); refusing an unverified download",
        "use an index that publishes hashes (PyPI does; set PIP_INDEX_URL)",
    )


def _sidecar(archive: Path) -> Path:
    return archive.with_name(archive.name + ".sha256")


def _record_sha256(archive: Path, digest: str) -> None:
    """Record the sha256 an archive was verified with (sha256sum's format), for offline use."""
    sidecar = _sidecar(archive)
    line = f"{digest}  {archive.name}\n"
    try:
        if sidecar.is_file() and sidecar.read_text() == line:
            return
        tmp = sidecar.with_name(f".{sidecar.name}.{os.getpid()}.tmp")
        tmp.write_text(line)
        os.replace(tmp, sidecar)
    except OSError:
        pass  # a read-only cache: the archive is still verified now; offline use will refuse it


def _verify_offline(release: Release, dest: Path) -> str:
    """The sha256 of a cached archive used offline, checked against the record of its verification."""
    try:
        recorded = _sidecar(dest).read_text().split()[0].lower()
    except (OSError, IndexError, UnicodeDecodeError):
        raise PackageIndexError(
            f"{release.label}: the cached {dest} has no record of the sha256 it was verified with (an older"
            " tpindex downloaded it), and the package index cannot be reached to verify it",
            "reconnect to the package index once (the archive is verified and recorded then), or delete it",
        ) from None
    digest = _file_digests(dest, "sha256")["sha256"]
    if digest != recorded:
        raise PackageIndexError(
            f"{release.label}: the cached {dest} does not match the sha256 recorded when it was downloaded"
            f" ({digest[:16]}..., recorded {recorded[:16]}...); it is damaged",
            f"delete {dest} and run the build again with the package index reachable: it is downloaded again",
        )
    return digest


def remove_stale_parts(cache_dir: Path) -> list[str]:
    """Remove the .part files a killed download left in the cache: those no process holds locked and that
    were not written for STALE_PART_SECONDS. -> the names removed."""
    removed = []
    try:
        parts = list(cache_dir.glob(".*.part"))
    except OSError:
        return removed
    for part in parts:
        try:
            fd = os.open(part, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a download in progress holds it
            if time.time() - os.fstat(fd).st_mtime > STALE_PART_SECONDS:
                part.unlink()
                removed.append(part.name)
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def _file_digests(path: Path, algo: str) -> dict[str, str]:
    hashers = {"sha256": hashlib.sha256(), algo: hashlib.new(algo)}
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            for h in hashers.values():
                h.update(chunk)
    return {k: h.hexdigest() for k, h in hashers.items()}


def _tree_path(name: str) -> str | None:
    """The repository path of an archive member, or None for what a source tree would not have."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if len(parts) < 2 or ".." in parts:
        return None
    rel = parts[1:]
    if rel == ["PKG-INFO"] or rel[0].endswith(".egg-info"):
        return None
    return "/".join(rel)


def _reason(e: BaseException) -> str:
    if isinstance(e, urllib.error.HTTPError):
        return f"HTTP {e.code} {e.reason}"
    if isinstance(e, urllib.error.URLError):
        return str(e.reason)
    return getattr(e, "strerror", None) or str(e) or type(e).__name__


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _const(data: bytes):
    return lambda: data
