"""The benchmark's report (tests/bench/bench.py): from samples of every figure to the targets' table and the
README's Markdown. A fault there surfaces only after a ten-minute `make bench`, so it is tested here on
made-up samples (no timing is asserted; these numbers are not measurements)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
bench = pytest.importorskip("bench")


def proc(wall, **more):
    return {"wall": wall, "cpu": wall * 1.5, "maxrss_mb": 100.0, "tree_rss_mb": 150.0, "loadavg": 0.5, **more}


def samples() -> dict[str, list[dict]]:
    s = {
        "a": [proc(2.0)],
        "b": [proc(0.1)],
        "c": [proc(0.4)],
        "d": [proc(50.0)],
        "e": [proc(7.0)],
        "j": [proc(9.0)],
        "k": [proc(70.0)],
        "s": [
            {
                "wall": 0.2,
                "p95_ms": 200.0,
                "p50_ms": 50.0,
                "max_ms": 900.0,
                "errors": 0,
                "requests": 5000,
                "rps": 80.0,
                "clients": 20,
                "seconds": 60.0,
                "mem_start_mb": 100.0,
                "mem_peak_mb": 140.0,
                "mem_end_mb": 104.0,
                "loadavg": 1.0,
            }
        ],
        "a3": [proc(1.2)],
        "base:a": [proc(2.5)],  # A/B mode: the base's samples
        "base:a3": [proc(1.0)],
        "t": [proc(420.0, failed=0)],
        "t_fast": [proc(200.0, failed=0)],
        "i_a0": [proc(1.8)],
        "i_d0": [proc(45.0)],
        "r_cold": [proc(200.0)],
        "r_warm": [proc(12.0)],
        "r_one": [proc(1.5)],
        "m_cold": [proc(500.0)],  # (m), issue 44
        "m_add": [proc(40.0)],
        "m_single": [{"wall": 0.0, "share": 0.9}],
        "g_which": [proc(0.1)],
        "g_diff": [proc(0.1)],
        "g_card": [proc(0.2)],
        "g_where": [proc(0.1)],
        "f_a": [
            {
                "parse_s": 1.0,
                "parse_cpu_s": 1.0,
                "extract_s": 2.0,
                "extract_cpu_s": 2.0,
                "worker_s": 2.5,
                "worker_cpu_s": 2.5,
                "unique_blobs": 900,
                "bytes": 9e6,
                "files": 900,
                "versions": 64,
            }
        ],
        "f_d": [{"parse_s": 40.0, "parse_cpu_s": 40.0, "unique_blobs": 40000, "bytes": 4e8}],
        "i_a": [{"size_mb": 14.0}],
        "i_a0_size": [{"size_mb": 11.0}],
        "i_d": [{"size_mb": 265.0}],
        "i_d0_size": [{"size_mb": 174.0}],
    }
    for key in bench.GREP_PATTERNS:
        for suffix, ours, git in (("", 0.1, 0.2), ("_d", 0.2, 3.0)):
            s[f"h_{key}{suffix}"] = [proc(ours)]
            s[f"h_git_{key}{suffix}"] = [proc(git)]
    return s


def checks(same=True) -> dict[str, list[dict]]:
    return {
        f"h_same_{key}{suffix}": [
            {"same": same, "lines": 10, "tpindex_lines": 10, "only_tpindex": [], "only_git": []}
        ]
        for key in bench.GREP_PATTERNS
        for suffix in ("", "_d")
    }


def test_every_target_of_the_issue_has_a_row_with_result_and_verdict():
    rows = bench.assess(bench.medians(samples()), 2, checks())
    targets = bench.summary(rows, 2)
    assert [t["n"] for t in targets] == [n for n, _, _ in bench.TARGETS]
    assert all(t["result"] and t["target"] and t["met"] in (True, False) for t in targets), targets
    by = {t["n"]: t for t in targets}
    assert by[1]["met"] is True and "0.80x wall" in by[1]["result"]  # 2.0 s against the base's 2.5
    assert by[2]["met"] is False and "1.20x wall" in by[2]["result"]  # 1.2 s against 1.0
    assert by[3]["met"] is True  # 0.4 s against 0.7
    assert by[4]["met"] is False  # 50 s against 1.3 x 40 / 2 = 26 s
    assert by[5]["met"] is False  # 70 s against the same
    assert by[6]["met"] is True and by[7]["met"] is False  # 7 min against 8; 3.3 min against 3
    assert by[8]["met"] is True and "15.0x" in by[8]["result"]  # 3.0 / 0.2 against >= 5
    assert by[9]["met"] is True  # 15x against >= 10
    assert by[10]["met"] is False  # 2.0 s against 1.3 x (2.5 / 2)
    assert by[12]["met"] is True and "p95 200 ms" in by[12]["result"]
    assert by[11]["met"] is False  # card 0.2 s against 0.1
    assert by[18]["met"] is False and "90.0%" in by[18]["result"]  # the atlas's times met, `single` 90 % not
    assert "|" in bench.summary_table(targets) and "|" in bench.table(rows)


def test_different_grep_results_miss_the_target():
    rows = bench.assess(bench.medians(samples()), 2, checks(same=False))
    targets = {t["n"]: t for t in bench.summary(rows, 2)}
    assert targets[15]["met"] is False and "DIFFERENT" in targets[15]["result"]
    assert targets[8]["met"] is False and "DIFFERENT" in targets[8]["result"]


def test_serve_memory_that_grows_is_not_flat():
    s = samples()
    s["s"][0]["mem_end_mb"] = 180.0
    targets = {t["n"]: t for t in bench.summary(bench.assess(bench.medians(s), 2, checks()), 2)}
    assert targets[12]["met"] is False


def test_a_failing_suite_misses_its_target_whatever_its_time():
    s = samples()
    s["t"][0]["failed"] = 1
    targets = {t["n"]: t for t in bench.summary(bench.assess(bench.medians(s), 2, checks()), 2)}
    assert targets[6]["met"] is False and "FAILED" in targets[6]["result"]


def test_the_side_by_side_table_states_both_sides_and_the_ratios():
    rows = bench.assess(bench.medians(samples()), 2, checks())
    text = bench.ab_table(rows, "3bf2c40")
    assert "3bf2c40 wall s" in text and "0.80x" in text and "1.20x" in text
    assert "0.80x" not in bench.table(rows)  # the ratios are in their own table
    assert bench.ab_table(bench.assess(bench.medians({"a": [proc(2.0)]}), 2), "x") == ""


def test_a_partial_run_reports_what_it_measured():
    partial = {
        k: v
        for k, v in samples().items()
        if not k.endswith("_d") and k not in ("d", "f_d", "i_d", "k", "s", "t", "t_fast", "base:a3")
    }
    rows = bench.assess(
        bench.medians(partial), 2, {k: v for k, v in checks().items() if not k.endswith("_d")}
    )
    targets = bench.summary(rows, 2)
    assert [t["n"] for t in targets] == [n for n, _, _ in bench.TARGETS]  # every target has its row
    assert {t["n"] for t in targets if t["met"] is not None} == {1, 3, 10, 11, 13, 14, 15, 16, 17, 18}
    assert all(
        t["result"] == "not measured in this run" for t in targets if t["n"] in (2, 4, 5, 6, 7, 8, 9, 12)
    )


def test_markdown_from_a_file_holding_the_samples_alone(tmp_path, capsys):
    env = {
        "cpus": 2,
        "python": "3.12",
        "tree_sitter": "0",
        "loadavg_start": [0.1],
        "loadavg_end": [0.2],
        "project_commit": "0" * 40,
        "project_dirty": False,
        "tags": ["v1.0.0", "v1.1.0"],
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"environment": env, "runs": 1, "checks": checks(), "samples": samples()}))
    assert bench.print_markdown(path) == 0
    out = capsys.readouterr().out
    assert "(issue 30)" in out and "MISSED" in out and "met" in out


def test_the_readme_tables_are_those_of_the_committed_results():
    """The README's generated block is what `bench.py --readme` writes from the results file it names: the
    tables cannot drift from the committed JSON (or from the code reading it)."""
    text = (bench.ROOT / "README.md").read_text()
    blocks = list(bench.readme_blocks(text))
    assert blocks, "the README has no generated bench block"
    for start, end, path in blocks:
        assert (bench.ROOT / path).exists(), path
        want = (
            bench.BLOCK_START.format(path=path)
            + "\n"
            + bench.markdown_text(bench.ROOT / path)
            + bench.BLOCK_END
        )
        assert text[start:end] == want, (
            f"README tables differ from {path}: run python tests/bench/bench.py --readme {path}"
        )
