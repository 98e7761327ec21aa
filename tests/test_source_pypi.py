"""The package-index source, against a fake PEP 691 index on 127.0.0.1 serving archives the tests write."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixtures.eras import lazy_registry, tool_names
from fixtures.helpers import build_tags, make_repo, rows
from fixtures.pypi import ABSTRACT, ALPHA, cli_build, sdist, tree

from indexer.build.pipeline import build
from indexer.core.scope import Scope
from indexer.core.specs import select
from indexer.sources import git_blob_id
from indexer.sources.pypi import (
    PYPI,
    PackageIndexError,
    PypiSource,
    configured_index_url,
    releases_from_html,
    sdist_version,
)


@pytest.fixture
def released(index):
    """0.30.0, 0.31.0 (yanked), 0.32.0 and a release candidate."""
    for v in ("0.30.0", "0.32.0", "0.33.0rc1"):
        index.add(v)
    index.add("0.31.0", yanked="broken build")
    return index


def source(index, cache: Path) -> PypiSource:
    return PypiSource(cache_dir=cache, progress=None, index_url=index.url)


# -- listing -----------------------------------------------------------------------------------------------


def test_names_are_tag_like_labels_of_sdists_not_yanked(released, tmp_path):
    src = source(released, tmp_path)
    assert sorted(src.names()) == ["v0.30.0", "v0.32.0", "v0.33.0rc1"]
    assert select("v0.30.0..v0.33.0", src.names()).names == ["v0.30.0", "v0.32.0"]
    assert select("v0.33*", src.names(), pre=True).names == ["v0.33.0rc1"]
    assert src.is_ref("v0.31.0") is False
    src.names()
    assert released.requests.count("/simple/vllm/") == 1  # the listing is fetched once per run
    assert released.downloads() == []  # listing downloads nothing


def test_html_index_is_understood_too(released, tmp_path):
    released.html_only = True
    src = source(released, tmp_path)
    assert sorted(src.names()) == ["v0.30.0", "v0.32.0", "v0.33.0rc1"]
    assert src.ref("v0.30.0").commit == hashlib.sha256(released.blobs["vllm-0.30.0.tar.gz"]).hexdigest()


def test_sdist_version_only_for_vllm_source_archives():
    assert sdist_version("vllm-0.8.5.post1.tar.gz") == "0.8.5.post1"
    assert sdist_version("vllm-0.30.0-cp38-abi3-manylinux_2_28_x86_64.whl") is None
    assert sdist_version("vllm-0.30.0.zip") is None
    assert sdist_version("vllm_flash_attn-2.0.tar.gz") is None
    assert sdist_version("vllm-nightly.tar.gz") is None


def test_pep503_fragment_hash_and_yanked():
    page = (
        '<a href="/f/vllm-1.0.0.tar.gz#sha256=ab">vllm-1.0.0.tar.gz</a>'
        '<a href="/f/vllm-1.0.1.tar.gz#sha256=cd" data-yanked="">vllm-1.0.1.tar.gz</a>'
    )
    got = releases_from_html(page, "https://mirror.example/simple/vllm/")
    assert list(got) == ["v1.0.0"]
    assert got["v1.0.0"].url == "https://mirror.example/f/vllm-1.0.0.tar.gz"
    assert dict(got["v1.0.0"].hashes) == {"sha256": "ab"}


def test_index_url_from_env_then_pip_config_then_pypi(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://mirror.example/simple\n")
    assert configured_index_url({}, [conf]) == "https://mirror.example/simple"
    later = tmp_path / "later.conf"
    later.write_text("[install]\nindex-url = https://other.example/simple\n")
    assert configured_index_url({}, [conf, later]) == "https://other.example/simple"
    env = {"PIP_INDEX_URL": "https://env.example/simple"}
    assert configured_index_url(env, [conf]) == "https://env.example/simple"
    assert configured_index_url({}, [tmp_path / "missing.conf"]) == PYPI
    # PIP_CONFIG_FILE is read last (it wins over the other files)
    assert configured_index_url({"PIP_CONFIG_FILE": str(conf), "HOME": str(tmp_path)}).startswith(
        "https://mirror.example/"
    )


# -- archives -----------------------------------------------------------------------------------------------


def test_ref_downloads_verifies_and_caches(released, tmp_path):
    cache = tmp_path / "cache"
    ref = source(released, cache).ref("v0.30.0")
    data = released.blobs["vllm-0.30.0.tar.gz"]
    assert (ref.label, ref.ref, ref.commit, ref.source) == (
        "v0.30.0",
        "vllm-0.30.0.tar.gz",
        hashlib.sha256(data).hexdigest(),
        "pypi",
    )
    assert (cache / "vllm-0.30.0.tar.gz").read_bytes() == data
    # no partial files left; the sha256 it was verified with is recorded beside it (for offline use)
    assert sorted(p.name for p in cache.iterdir()) == ["vllm-0.30.0.tar.gz", "vllm-0.30.0.tar.gz.sha256"]
    assert (cache / "vllm-0.30.0.tar.gz.sha256").read_text() == f"{ref.commit}  vllm-0.30.0.tar.gz\n"
    assert released.downloads() == ["/files/vllm-0.30.0.tar.gz"]
    umask = os.umask(0)
    os.umask(umask)
    assert (cache / "vllm-0.30.0.tar.gz").stat().st_mode & 0o777 == 0o666 & ~umask  # a normal file

    # a second run (a new source, same cache) downloads nothing
    again = source(released, cache)
    assert again.ref("v0.30.0") == ref
    list(again.files(ref, Scope.named("default")))
    assert released.downloads() == ["/files/vllm-0.30.0.tar.gz"]


def test_corrupt_cached_archive_is_downloaded_again(released, tmp_path):
    source(released, tmp_path).ref("v0.30.0")
    (tmp_path / "vllm-0.30.0.tar.gz").write_bytes(b"truncated")
    ref = source(released, tmp_path).ref("v0.30.0")
    assert len(released.downloads()) == 2
    assert (tmp_path / "vllm-0.30.0.tar.gz").read_bytes() == released.blobs["vllm-0.30.0.tar.gz"]
    assert ref.commit == hashlib.sha256(released.blobs["vllm-0.30.0.tar.gz"]).hexdigest()


def test_hash_mismatch_names_the_version_and_leaves_nothing(index, tmp_path):
    index.add("0.30.0")
    index.add("0.31.0", sha256="f" * 64)
    src = source(index, tmp_path / "cache")
    with pytest.raises(PackageIndexError, match=r"^v0\.31\.0: .*does not match") as err:
        src.ref("v0.31.0")
    assert isinstance(err.value, OSError)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "cache" / "vllm-0.31.0.tar.gz").exists()
    assert list((tmp_path / "cache").iterdir()) == []


def test_hash_mismatch_in_a_build_writes_nothing_of_that_version(monkeypatch, index, tmp_path):
    index.add("0.30.0")
    index.add("0.31.0", sha256="f" * 64)
    db = tmp_path / "index.db"
    result = cli_build(
        monkeypatch, index, "--tags", "v0.30.0..v0.31.0", "--db", db, "--cache-dir", tmp_path / "c"
    )
    assert result.exit_code == 2, result.output
    assert "v0.31.0" in result.output and "does not match" in result.output
    assert "Traceback" not in result.output
    if db.exists():
        assert rows(db, "select label from versions where label = 'v0.31.0'") == []
        assert rows(db, "select * from registry where version = 'v0.31.0'") == []
    assert not (tmp_path / "c" / "vllm-0.31.0.tar.gz").exists()


def test_failed_download_names_the_version(index, tmp_path):
    index.add("0.30.0")
    del index.blobs["vllm-0.30.0.tar.gz"]  # listed, but the file answers 404
    with pytest.raises(PackageIndexError, match=r"^v0\.30\.0: .*HTTP 404"):
        source(index, tmp_path).ref("v0.30.0")
    assert list(tmp_path.iterdir()) == []


def test_unreadable_archive_names_the_version(index, tmp_path):
    data = b"this is not a gzip file"
    index.blobs["vllm-0.30.0.tar.gz"] = data
    index.entries.append(
        {
            "filename": "vllm-0.30.0.tar.gz",
            "url": "/files/vllm-0.30.0.tar.gz",
            "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
        }
    )
    src = source(index, tmp_path)
    ref = src.ref("v0.30.0")
    with pytest.raises(PackageIndexError, match=r"^v0\.30\.0: cannot read .* as a tar\.gz archive"):
        list(src.files(ref, Scope.named("default")))


def test_unreachable_index_is_a_clear_error(monkeypatch, tmp_path):
    from indexer.cli.main import main

    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # discard port: refused
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--from-pypi",
            "--tags",
            "v0.30.0",
            "--db",
            tmp_path / "x.db",
            "--cache-dir",
            tmp_path / "c",
        ],
    )
    assert result.exit_code == 2
    assert "cannot read the package index at http://127.0.0.1:9/simple/vllm/" in result.output
    assert "Traceback" not in result.output


def test_unknown_version_is_a_spec_error_with_the_closest(monkeypatch, released, tmp_path):
    result = cli_build(
        monkeypatch, released, "--tags", "v0.31.0", "--db", tmp_path / "x.db", "--cache-dir", tmp_path / "c"
    )
    assert result.exit_code == 2
    assert "v0.31.0" in result.output and "v0.30.0" in result.output  # yanked: not offered


# -- files ----------------------------------------------------------------------------------------------------


def test_files_are_tree_paths_with_git_blob_ids(released, tmp_path):
    src = source(released, tmp_path / "cache")
    ref = src.ref("v0.30.0")
    everything = {e.path: e for e in src.files(ref, Scope(("*",)))}
    assert set(everything) == set(tree("0.30.0")) | {"vllm/_version.py"}  # no PKG-INFO, no egg-info
    out = tmp_path / "out"
    for path, entry in everything.items():
        data = entry.read()
        assert data == tree("0.30.0").get(path, data)
        file = out / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
        git_id = subprocess.run(
            ["git", "hash-object", str(file)], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert entry.blob_id == git_id == git_blob_id(data)
    default = sorted(e.path for e in src.files(ref, Scope.named("default")))
    assert default == [
        "examples/tool_chat_template_alpha.jinja",
        "tests/tool_parsers/test_alpha.py",
        "vllm/tool_parsers/__init__.py",
        "vllm/tool_parsers/abstract_tool_parser.py",
        "vllm/tool_parsers/alpha_tool_parser.py",
    ]


FACT_QUERIES = {
    "registry": "select version, kind, name, module, class, form, file, line, registry from registry",
    "version_files": "select version, file, module, blob_id, parse_status from version_files",
    "classes_v": "select version, file, module, class, line, streaming from classes_v",
    "markers_v": "select version, file, kind, line, text from markers_v",
    "class_attrs_v": "select version, file, class, attribute, value from class_attrs_v",
    "parser_map_v": "select version, kind, name, real_class, real_file, real_line from parser_map_v",
}


def test_archive_and_git_give_identical_rows(released, tmp_path):
    repo = make_repo(tmp_path / "repo", {"v0.30.0": tree("0.30.0"), "v0.32.0": tree("0.32.0")})
    git_db, pypi_db = tmp_path / "git.db", tmp_path / "pypi.db"
    build_tags(repo, git_db, "v0.30.0..v0.32.0")
    src = source(released, tmp_path / "cache")
    refs = [src.ref(n) for n in select("v0.30.0..v0.32.0", src.names()).names]
    stats = build(pypi_db, src, refs, Scope.named("default"), jobs=1)
    assert stats.versions_added == ["v0.30.0", "v0.32.0"]
    for name, sql in FACT_QUERIES.items():
        got = sorted(rows(pypi_db, sql), key=repr)
        assert got, name
        assert got == sorted(rows(git_db, sql), key=repr), name
    names = rows(pypi_db, "select name from registry where version = 'v0.32.0' order by name")
    assert names == [("alpha",), ("alpha_alias",)]
    assert rows(pypi_db, "select distinct source from versions") == [("pypi",)]


def test_cli_build_twice_second_downloads_nothing_and_skips(monkeypatch, released, tmp_path):
    db, cache = tmp_path / "index.db", tmp_path / "cache"
    first = cli_build(monkeypatch, released, "--tags", "v0.30.0..v0.32.0", "--db", db, "--cache-dir", cache)
    assert first.exit_code == 0, first.output
    assert sorted(released.downloads()) == ["/files/vllm-0.30.0.tar.gz", "/files/vllm-0.32.0.tar.gz"]
    assert rows(db, "select label, ref, source from versions order by ord") == [
        ("v0.30.0", "vllm-0.30.0.tar.gz", "pypi"),
        ("v0.32.0", "vllm-0.32.0.tar.gz", "pypi"),
    ]
    from indexer.cli.main import main

    second = CliRunner().invoke(
        main,
        ["build", "--from-pypi", "--tags", "v0.30.0..v0.32.0", "--db", str(db), "--cache-dir", str(cache)],
    )
    assert second.exit_code == 0, second.output
    assert "2 already indexed and skipped" in second.output
    assert len(released.downloads()) == 2


def test_unreachable_index_falls_back_to_the_cached_archives(monkeypatch, released, tmp_path):
    """Offline, a build of versions already downloaded works from the cache (with a warning); a version
    that is not cached is still a clear error."""
    db, cache = tmp_path / "index.db", tmp_path / "cache"
    assert (
        cli_build(monkeypatch, released, "--tags", "v0.30.0", "--db", db, "--cache-dir", cache).exit_code == 0
    )
    from indexer.cli.main import main

    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # discard port: refused
    offline = tmp_path / "offline.db"
    result = CliRunner().invoke(
        main,
        ["build", "--from-pypi", "--tags", "v0.30.0", "--db", str(offline), "--cache-dir", str(cache), "-q"],
    )
    assert result.exit_code == 0, result.output
    assert "working offline with the 1 archive(s)" in result.output
    sql = "select kind, name, module, class, form, file, line from registry order by name"
    assert rows(offline, sql) == rows(db, sql) != []
    assert rows(offline, "select label, commit_id from versions") == rows(
        db, "select label, commit_id from versions"
    )
    missing = CliRunner().invoke(
        main, ["build", "--from-pypi", "--tags", "v0.32.0", "--db", str(offline), "--cache-dir", str(cache)]
    )
    assert missing.exit_code == 2 and "v0.32.0" in missing.output and "Traceback" not in missing.output
    assert "only cached archives are known" in missing.output


# -- the archive reader ----------------------------------------------------------------------------------------

LONG = "vllm-1.0.0/vllm/" + "/".join(["deeply_nested_directory"] * 6) + "/módulo_with_a_long_name.py"


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT])
def test_fast_reader_agrees_with_tarfile(tmp_path, fmt):
    from indexer.sources import pypi

    archive = tmp_path / "a.tar.gz"
    with tarfile.open(archive, "w:gz", format=fmt) as tar:

        def add(name, data=b"", kind=tarfile.REGTYPE, link=""):
            info = tarfile.TarInfo(name)
            info.type, info.size, info.linkname = kind, len(data), link
            tar.addfile(info, io.BytesIO(data) if data else None)

        add("vllm-1.0.0", kind=tarfile.DIRTYPE)
        add("vllm-1.0.0/vllm/a.py", b"A = 1\n" * 300)
        add("vllm-1.0.0/vllm/empty.py")
        add(LONG, b"B = 2\n")
        add("vllm-1.0.0/vllm/link.py", kind=tarfile.SYMTYPE, link="a.py")
        add("vllm-1.0.0/vllm/hard.py", kind=tarfile.LNKTYPE, link="vllm-1.0.0/vllm/a.py")
        add("vllm-1.0.0/vllm/b.py", bytes(range(256)) * 5)
    wanted = pypi._tree_path
    fast = list(pypi._fast_members(archive, wanted))
    assert fast == list(pypi._tarfile_members(archive, wanted))
    assert [name for name, _ in fast] == [
        "vllm/a.py",
        "vllm/empty.py",
        LONG.split("/", 1)[1],
        "vllm/link.py",
        "vllm/b.py",
    ]
    assert dict(fast)["vllm/link.py"] == b"a.py"
    only_b = list(pypi._fast_members(archive, lambda n: n if n.endswith("/b.py") else None))
    assert only_b == [("vllm-1.0.0/vllm/b.py", bytes(range(256)) * 5)]


def test_reader_falls_back_to_tarfile_on_a_header_it_does_not_understand(tmp_path, monkeypatch):
    from indexer.sources import pypi

    archive = tmp_path / "vllm-1.0.0.tar.gz"
    archive.write_bytes(sdist("1.0.0", tree("1.0.0")))

    def refuse(path, wanted):
        raise pypi._Unreadable("unexpected header")
        yield

    expected = pypi.read_members(archive, pypi._tree_path)
    monkeypatch.setattr(pypi, "_fast_members", refuse)
    assert pypi.read_members(archive, pypi._tree_path) == expected
    assert {n for n, _ in expected} == set(tree("1.0.0")) | {"vllm/_version.py"}


# -- damaged archives --------------------------------------------------------------------------------------------


def flipped(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def flip_positions(data: bytes, n_random: int, seed: int) -> list[int]:
    """Every bit of the gzip header (10 bytes) and trailer (CRC and length, 8 bytes), and n_random more."""
    edges = list(range(80)) + list(range((len(data) - 8) * 8, len(data) * 8))
    rng = random.Random(seed)
    return edges + rng.sample(range(80, (len(data) - 8) * 8), n_random)


def test_every_bit_flip_is_refused_or_harmless(tmp_path):
    """A damaged archive is never read as a shorter one: each single-bit flip either gives exactly the
    members of the intact archive or is refused with a message naming the file and a hint."""
    from indexer.sources import pypi

    parsers = {f"vllm/tool_parsers/p{i}_tool_parser.py": ALPHA * (i + 1) for i in range(12)}
    # more than the reader buffers (1 MB), last: a damaged header early in the archive is met long before
    # the end of the gzip stream, where its CRC is checked
    data = sdist("1.0.0", {**tree("1.0.0"), **parsers, "vllm/zz_large.py": b"X = 1\n" * 300_000})
    clean_path = tmp_path / "clean.tar.gz"
    clean_path.write_bytes(data)
    clean = pypi.read_members(clean_path, pypi._tree_path)
    archive = tmp_path / "vllm-1.0.0.tar.gz"
    outcomes = {"refused": 0, "same": 0}
    for bit in flip_positions(data, 400, seed=13):
        archive.write_bytes(flipped(data, bit))
        try:
            got = pypi.read_members(archive, pypi._tree_path)
        except PackageIndexError as e:
            assert str(archive) in str(e) and "damaged" in str(e) and e.hint and "delete" in e.hint, (
                bit,
                str(e),
            )
            outcomes["refused"] += 1
            continue
        assert got == clean, (
            f"bit {bit}: {len(got)} member(s) read from a damaged archive, {len(clean)} in it"
        )
        outcomes["same"] += 1
    assert outcomes["refused"] > 300, outcomes


@pytest.mark.parametrize("damage", ["cut", "garbage after the end", "no end marker"])
def test_truncated_or_padded_archives_are_refused(tmp_path, damage):
    import gzip

    from indexer.sources import pypi

    data = sdist("1.0.0", tree("1.0.0"))
    raw = gzip.decompress(data)
    body = raw.rstrip(b"\0")
    body += bytes(-len(body) % 512)
    if damage == "cut":
        bad = data[: len(data) * 2 // 3]
    elif damage == "garbage after the end":  # a damaged header read as the end-of-archive marker
        bad = gzip.compress(body + bytes(1024) + b"not a header" + bytes(500), mtime=0)
    else:
        bad = gzip.compress(body, mtime=0)
    intact, archive = tmp_path / "intact.tar.gz", tmp_path / "vllm-1.0.0.tar.gz"
    intact.write_bytes(gzip.compress(body + bytes(1024) + bytes(8192), mtime=0))
    archive.write_bytes(bad)
    assert len(pypi.read_members(intact, pypi._tree_path)) == len(tree("1.0.0")) + 1
    with pytest.raises(PackageIndexError, match="damaged"):
        pypi.read_members(archive, pypi._tree_path)


def without_commit_ids(dumped: dict) -> dict:
    """A dump (test_crash.dump) with versions.commit_id left out: a harmless flip (the gzip header's time
    stamp) changes the archive's sha256, which is the version's identity, and nothing else."""
    out = dict(dumped)
    out["versions"] = sorted(
        json.dumps({k: v for k, v in json.loads(r).items() if k != "commit_id"}, sort_keys=True)
        for r in dumped["versions"]
    )
    return out


def test_a_damaged_archive_on_the_index_is_refused_or_indexed_whole(monkeypatch, index, tmp_path):
    """The index serves a damaged archive with a matching hash (damaged before it was hashed): every
    build either refuses it (exit 2, the file named, a hint, nothing of it written) or writes exactly
    the rows of the intact archive."""
    from fixtures.crash import assert_same, dump

    files = {**tree("0.30.0"), "vllm/zz_large.py": b"X = 1\n" * 300_000}
    data = index.add("0.30.0", files)
    entry = next(e for e in index.entries if e["filename"] == "vllm-0.30.0.tar.gz")
    clean_db = tmp_path / "clean.db"
    assert (
        cli_build(
            monkeypatch, index, "--tags", "v0.30.0", "--db", clean_db, "--cache-dir", tmp_path / "c0"
        ).exit_code
        == 0
    )
    want = without_commit_ids(dump(clean_db))
    refused = 0
    for i, bit in enumerate(flip_positions(data, 24, seed=31)[::8]):
        bad = flipped(data, bit)
        index.blobs["vllm-0.30.0.tar.gz"] = bad
        entry["hashes"] = {"sha256": hashlib.sha256(bad).hexdigest()}
        db = tmp_path / f"t{i}.db"
        result = cli_build(
            monkeypatch, index, "--tags", "v0.30.0", "--db", db, "--cache-dir", tmp_path / f"c{i + 1}"
        )
        if result.exit_code == 0:
            assert_same(without_commit_ids(dump(db)), want, f"bit {bit}")
            continue
        refused += 1
        lines = result.output.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 2, result.output
        assert "vllm-0.30.0.tar.gz" in lines[0] and "damaged" in lines[0], result.output
        assert lines[1].startswith("Hint: delete"), result.output
        assert not db.exists() or rows(db, "select * from versions") == []
    assert refused > 0


def test_offline_a_cached_archive_is_used_only_against_its_recorded_sha256(monkeypatch, released, tmp_path):
    from indexer.cli.main import main

    db, cache = tmp_path / "index.db", tmp_path / "cache"
    assert (
        cli_build(monkeypatch, released, "--tags", "v0.30.0", "--db", db, "--cache-dir", cache).exit_code == 0
    )
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # discard port: refused

    def offline_build(out: str):
        return CliRunner().invoke(
            main,
            [
                "build",
                "--from-pypi",
                "--tags",
                "v0.30.0",
                "--db",
                str(tmp_path / out),
                "--cache-dir",
                str(cache),
                "-q",
            ],
        )

    archive = cache / "vllm-0.30.0.tar.gz"
    intact = archive.read_bytes()
    archive.write_bytes(flipped(intact, 8 * len(intact) // 2))  # one bit, in the middle
    damaged = offline_build("a.db")
    assert damaged.exit_code == 2, damaged.output
    assert "does not match the sha256 recorded when it was downloaded" in damaged.output
    assert "Hint: delete" in damaged.output and "Traceback" not in damaged.output

    archive.write_bytes(intact)
    (cache / "vllm-0.30.0.tar.gz.sha256").unlink()  # as an older tpindex left it
    unrecorded = offline_build("b.db")
    assert unrecorded.exit_code == 2, unrecorded.output
    assert "no record of the sha256" in unrecorded.output and "Hint: reconnect" in unrecorded.output
    for out in ("a.db", "b.db"):
        assert not (tmp_path / out).exists() or rows(tmp_path / out, "select * from versions") == []

    monkeypatch.setenv("PIP_INDEX_URL", released.url)  # online again: verified against the index, recorded
    assert (
        cli_build(monkeypatch, released, "--tags", "v0.30.0", "--db", db, "--cache-dir", cache).exit_code == 0
    )
    assert (cache / "vllm-0.30.0.tar.gz.sha256").is_file()
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    assert offline_build("c.db").exit_code == 0


def test_parts_left_by_killed_downloads_are_removed(released, tmp_path):
    """A .part file no process holds and not written for a while is removed; one being written is kept."""
    import fcntl
    import time

    from indexer.sources.pypi import STALE_PART_SECONDS

    cache = tmp_path / "cache"
    cache.mkdir()
    old = time.time() - STALE_PART_SECONDS - 5
    left = cache / ".vllm-0.32.0.tar.gz.4242.deadbeef.part"
    young = cache / ".vllm-0.32.0.tar.gz.4243.feedf00d.part"
    busy = cache / ".vllm-0.30.0.tar.gz.4244.cafebabe.part"
    for p in (left, young, busy):
        p.write_bytes(b"partial")
    os.utime(left, (old, old))
    os.utime(busy, (old, old))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(busy)!r}, os.O_RDWR)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\ntime.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        source(released, cache).ref("v0.30.0")
        assert not left.exists()
        assert young.exists() and busy.exists()
    finally:
        holder.kill()
        holder.wait()
    fd = os.open(busy, os.O_RDONLY)  # its lock went with its process
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)


LAZY_INIT = lazy_registry(
    "tool", tool_names("alpha", "beta"), inline=True, imports="ToolParserManager"
).encode()


@pytest.mark.parametrize(
    "cut, says",
    [
        (lambda p: p.startswith("vllm/"), "maps 2 file(s) but no Python file under vllm/"),
        (
            lambda p: p.endswith("beta_tool_parser.py"),
            "1 registered name(s) point at modules missing from it",
        ),
    ],
)
def test_check_finds_a_version_an_older_tpindex_read_from_a_damaged_archive(
    monkeypatch, index, tmp_path, cut, says
):
    """An older tpindex took a damaged header for the end of the archive and indexed a version with the
    files before it only; check reports such a version (examples/ and tests/ come first in vllm's
    archives, as here)."""
    from indexer.sources import pypi

    files = {
        "examples/tool_chat_template_alpha.jinja": b"{{ messages }}\n",
        "tests/tool_parsers/test_alpha.py": b"def test_alpha():\n    pass\n",
        "vllm/tool_parsers/__init__.py": LAZY_INIT,
        "vllm/tool_parsers/abstract_tool_parser.py": ABSTRACT,
        "vllm/tool_parsers/alpha_tool_parser.py": ALPHA,
        "vllm/tool_parsers/beta_tool_parser.py": ALPHA.replace(b"Alpha", b"Beta"),
    }
    index.add("0.30.0", files)
    whole, db = tmp_path / "whole.db", tmp_path / "cut.db"
    assert (
        cli_build(
            monkeypatch, index, "--tags", "v0.30.0", "--db", whole, "--cache-dir", tmp_path / "c"
        ).exit_code
        == 0
    )
    from fixtures.helpers import tpindex

    tpindex("check", "--db", whole)
    read = pypi.read_members

    def as_an_older_tpindex_read_it(path, wanted):
        members = read(path, wanted)
        return members[: next((i for i, (name, _) in enumerate(members) if cut(name)), len(members))]

    monkeypatch.setattr(pypi, "read_members", as_an_older_tpindex_read_it)
    assert (
        cli_build(
            monkeypatch, index, "--tags", "v0.30.0", "--db", db, "--cache-dir", tmp_path / "c"
        ).exit_code
        == 0
    )
    result = tpindex("check", "--db", db, ok=False)
    assert result.exit_code == 1 and says in result.output, result.output


def test_a_listing_without_hashes_is_a_clear_error(monkeypatch, index, tmp_path):
    index.add("0.30.0")
    for e in index.entries:
        e["hashes"] = {}
    db = tmp_path / "x.db"
    result = cli_build(monkeypatch, index, "--tags", "v0.30.0", "--db", db, "--cache-dir", tmp_path / "c")
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 2, result.output
    assert "v0.30.0" in lines[0] and "without a usable hash" in lines[0] and lines[1].startswith("Hint: "), (
        result.output
    )
    assert index.downloads() == [] and not db.exists()


@pytest.mark.parametrize("what", ["text", "another sqlite database", "newer schema"])
def test_a_bad_db_is_reported_before_any_archive_is_downloaded(monkeypatch, released, tmp_path, what):
    import sqlite3

    db = tmp_path / "x.db"
    if what == "text":
        db.write_text("notes\n" * 100)
    else:
        conn = sqlite3.connect(db)
        if what == "newer schema":
            conn.execute("create table meta (key text primary key, value text)")
            conn.execute("insert into meta values ('schema_version', '999')")
        else:
            conn.execute("create table people (name text)")
        conn.commit()
        conn.close()
    before = db.read_bytes()
    result = cli_build(
        monkeypatch, released, "--tags", "v0.30.0..v0.32.0", "--db", db, "--cache-dir", tmp_path / "c"
    )
    assert result.exit_code == 2 and "Hint: " in result.output and "Traceback" not in result.output, (
        result.output
    )
    assert released.downloads() == []
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]
