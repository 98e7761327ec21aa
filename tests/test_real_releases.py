"""Real vLLM releases from the package index (issue 5): v0.30.0, v0.31.0 and v0.32.0 indexed from their
released source archives (downloaded once, cached in the user cache directory, sha256-checked).

The expected values below were established by reading those archives by hand (their registry
dicts, stubs, registered_adapters.py, parser_manager.py and the plant lines), not by running tpindex.
Skipped, loudly, only when the package index cannot be reached; any other failure fails.
"""

from __future__ import annotations

import shutil
import tarfile

import pytest
from fixtures.helpers import build_tags, git, rows
from fixtures.real_releases import VERSIONS

pytestmark = pytest.mark.network


TOOL_V30 = set(
    """apertus cohere_command3 cohere_command4 deepseek_v3 deepseek_v31 deepseek_v32 deepseek_v4
deepseek_v41 dots ernie45 functiongemma gemma4 gigachat3 glm45 glm47 granite granite-20b-fc granite4 hermes
hunyuan_a13b hy_v3 hy_v4 inkling internlm jamba k2_horizon kimi_k2 kimi_k3 lfm2 ling3 llama3_json llama4_json
llama4_pythonic longcat mimo minicpm5 minimax_m2 minimax_m3 mistral muse_glimmer olmo3 openai phi4_mini_json
poolside_v1 pythonic qwen3_coder qwen3_xml seed_oss step3 step3p5 xlam""".split()
)
REASONING_V30 = set(
    """cohere_command3 cohere_command4 deepseek_r1 deepseek_v3 deepseek_v4 deepseek_v41 ernie45
gemma4 glm45 glm47 granite holo2 hunyuan_a13b hy_v3 hy_v4 inkling k2_horizon kimi_k2 kimi_k3 ling3 mimo minimax_m2
minimax_m2_append_think minimax_m3 mistral muse_glimmer nemotron_v3 olmo3 openai_gptoss poolside_v1 qwen3 seed_oss
step3 step3p5""".split()
)
NAMES = {
    "v0.30.0": {"tool": TOOL_V30, "reasoning": REASONING_V30},
    "v0.31.0": {"tool": TOOL_V30, "reasoning": REASONING_V30 | {"granite_thinking_parser"}},
    "v0.32.0": {
        "tool": TOOL_V30 | {"hf", "plamo3", "qwen3_json"},
        "reasoning": REASONING_V30 | {"granite_thinking_parser", "hf", "minicpmv", "plamo3"},
    },
}

ADAPTER_STUBS_V30 = {
    "deepseekv32_engine",
    "deepseekv41_engine",
    "deepseekv4_engine",
    "gemma4_engine",
    "glm47_moe",
    "inkling",
    "kimi_k2",
    "minimax_m2",
    "mistral",
    "qwen3_engine",
    "seed_oss_engine",
    "ling3",
}
ADAPTER_STUBS = {
    "v0.30.0": ADAPTER_STUBS_V30,
    "v0.31.0": ADAPTER_STUBS_V30 | {"granite_engine"},
    "v0.32.0": ADAPTER_STUBS_V30 | {"granite_engine", "mimo", "minimax_m3", "plamo3_engine", "step3p5"},
}

PLANTS = {
    "v0.30.0": {
        ("lfm2", 417),
        ("llama4_pythonic", 199),
        ("minicpm5xml", 659),
        ("minicpm5xml", 684),
        ("minicpm5xml", 725),
        ("olmo3", 215),
        ("pythonic", 187),
    },
    "v0.31.0": {
        ("lfm2", 416),
        ("llama4_pythonic", 195),
        ("minicpm5xml", 659),
        ("minicpm5xml", 684),
        ("minicpm5xml", 725),
        ("olmo3", 212),
        ("pythonic", 184),
    },
}
PLANTS["v0.32.0"] = PLANTS["v0.31.0"]

# (name, kind, version) -> (impl, real file, real class) for names of each impl kind, read by hand
REAL = {
    ("glm47", "tool", "v0.30.0"): ("unified", "vllm/parser/glm47_moe.py", "Glm47MoeParser"),
    ("glm47", "tool", "v0.32.0"): ("unified", "vllm/parser/glm47_moe.py", "Glm47MoeParser"),
    ("qwen3_coder", "tool", "v0.31.0"): ("unified", "vllm/parser/qwen3.py", "Qwen3Parser"),
    ("mistral", "tool", "v0.32.0"): ("unified", "vllm/parser/mistral.py", "MistralParser"),
    ("hermes", "tool", "v0.32.0"): (
        "standalone",
        "vllm/tool_parsers/hermes_tool_parser.py",
        "Hermes2ProToolParser",
    ),
    ("deepseek_v3", "tool", "v0.30.0"): (
        "standalone",
        "vllm/tool_parsers/deepseekv3_tool_parser.py",
        "DeepSeekV3ToolParser",
    ),
    # composed by the parser manager into KimiK3Parser, a delegating wrapper (see test_real_logic.py)
    ("kimi_k3", "tool", "v0.30.0"): (
        "standalone",
        "vllm/tool_parsers/kimi_k3_tool_parser.py",
        "KimiK3ToolParser",
    ),
    ("cohere_command4", "tool", "v0.31.0"): (
        "name-check",
        "vllm/parser/cohere_command.py",
        "CohereCommandParser",
    ),
    ("hf", "tool", "v0.32.0"): ("name-check", "vllm/parser/response_template.py", "ResponseTemplateParser"),
    ("ling3", "reasoning", "v0.32.0"): ("unified", "vllm/parser/ling3.py", "Ling3Parser"),
}


def test_versions_indexed_in_order(real_db):
    assert rows(real_db, "select label, source, status, registry from versions order by ord") == [
        (v, "pypi", "complete", "found") for v in VERSIONS
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_registered_names(real_db, version):
    for kind in ("tool", "reasoning"):
        got = {
            r[0]
            for r in rows(
                real_db, "select name from registry where version = ? and kind = ?", (version, kind)
            )
        }
        assert got == NAMES[version][kind], (kind, got ^ NAMES[version][kind])


@pytest.mark.parametrize("version", VERSIONS)
def test_every_registered_module_is_a_file_of_its_version(real_db, version):
    missing = rows(
        real_db,
        """
        select r.name, r.module from registry r where r.version = ? and r.module is not null
          and not exists (select 1 from version_files f where f.version = r.version and f.module = r.module)""",
        (version,),
    )
    assert missing == []


@pytest.mark.parametrize("version", VERSIONS)
def test_every_name_resolves_to_an_existing_file(real_db, version):
    bad = rows(
        real_db,
        """
        select p.kind, p.name, p.impl, p.reason from parser_map_v p where p.version = ? and (p.impl = 'unresolved'
          or not exists (select 1 from version_files f where f.version = p.version and f.file = p.real_file))""",
        (version,),
    )
    assert bad == []


@pytest.mark.parametrize("version", VERSIONS)
def test_tool_parser_files_importing_an_adapter(real_db, version):
    got = {
        r[0].removeprefix("vllm/tool_parsers/").removesuffix("_tool_parser.py")
        for r in rows(
            real_db,
            "select file from adapter_imports where version = ? and file like 'vllm/tool_parsers/%'"
            " and role = 'tool'",
            (version,),
        )
    }
    assert got == ADAPTER_STUBS[version]
    ling3 = rows(
        real_db,
        "select module from adapter_imports where version = ? and file = ?",
        (version, "vllm/tool_parsers/ling3_tool_parser.py"),
    )
    assert ling3 == [("vllm.parser.ling3",)]  # the one stub importing from the model module


@pytest.mark.parametrize("version", VERSIONS)
def test_plant_sites(real_db, version):
    got = {
        (r[0].removeprefix("vllm/tool_parsers/").removesuffix("_tool_parser.py"), r[1])
        for r in rows(
            real_db,
            "select file, line from plants_v where version = ? and plant = 'prev_tool_call_arr_empty_arguments'",
            (version,),
        )
    }
    assert got == PLANTS[version]


@pytest.mark.parametrize("name,kind,version", sorted(REAL))
def test_real_implementation(real_db, name, kind, version):
    got = rows(
        real_db,
        "select impl, real_file, real_class from parser_map_v where version = ? and name = ? and kind = ?",
        (version, name, kind),
    )
    assert got == [REAL[(name, kind, version)]]


def test_archive_and_git_tree_of_one_release_give_identical_rows(pypi, real_db, tmp_path):
    """v0.31.0's archive, committed to a tmp git repo, indexes to the same rows as the archive itself."""
    archive, _ = pypi.archive("v0.31.0")
    repo = tmp_path / "repo"
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    top = next((tmp_path / "x").iterdir())
    for junk in [top / "PKG-INFO", *top.glob("*.egg-info")]:
        shutil.rmtree(junk) if junk.is_dir() else junk.unlink()
    top.rename(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "v0.31.0 release tree")
    git(repo, "tag", "v0.31.0")
    db = tmp_path / "git.db"
    build_tags(repo, db, "v0.31.0", jobs=2)
    for view, cols in {
        "version_files": "file, module, blob_id, parse_status",
        "registry": "kind, name, module, class, form, file, line",
        "parser_map_v": "kind, name, impl, registry_file, registry_line, reg_file, reg_line, real_class, real_file,"
        " real_line, adapter, alias_of, stub, reexport, parent_class, reason",
        "parser_hops_v": "kind, name, step, hop, class, module, file, line",
        "imports_v": "file, line, module, name, alias, level, star, type_checking",
        "class_hierarchy": "class, module, file, pos, base_written, base, base_file",
        "markers_v": "file, kind, line, text, class, function",
        "plants_v": "file, plant, line, text",
    }.items():
        sql = f"select {cols} from {view} where version = 'v0.31.0' order by {cols}"
        assert rows(db, sql) == rows(real_db, sql), view
