"""The behaviour atlas on real vLLM releases (issue 44): hermes at the release before its streaming fix and at
the fix (v0.10.2, v0.11.0), run by each release's own code in the replay environment on cases made from each
release's own files (its chat template, rendered). What the releases showed (`tpindex atlas hermes --tags
v0.10.2,v0.11.0`, and every release from v0.6.3 in the README's atlas section):
- the template renders `<tool_call>\\n{json}\\n</tool_call>`, which both parse right non-streaming;
- streamed one token (or one character) per delta, the arguments are not JSON at v0.10.2 and are right at
  v0.11.0 (its rewritten argument diff), a change the atlas marks at v0.11.0;
- the template renders no text beside tool calls: `content-before` is not the template's (a test literal's);
- adding v0.11.0 to a database whose atlas already ran v0.10.2 runs only v0.11.0's cells.
Skipped, loudly, only when the package index cannot be reached.
"""

from __future__ import annotations

import pytest
from fixtures.helpers import tpindex

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def hermes_db(pypi, tmp_path_factory):
    db = tmp_path_factory.mktemp("real-atlas") / "hermes.db"
    tpindex("build", "--from-pypi", "--tags", "v0.10.2", "--db", db, "-q")
    return db


def cell(answer, version, case, mode):
    (row,) = [r for r in answer.rows if r.version == version]
    (c,) = [c for c in row.cells if (c.case, c.mode) == (case, mode)]
    return c


def test_hermes_streaming_fix_at_v0_11_0_and_a_release_added(hermes_db):
    from indexer.api import run_atlas

    first = run_atlas(hermes_db, ["hermes"])
    assert cell(first, "v0.10.2", "single", "nonstream").status == "ok"
    streamed = cell(first, "v0.10.2", "single", "stream:token")
    assert streamed.status == "wrong" and streamed.detail.startswith("arguments not valid JSON")
    (row,) = first.rows
    (single,) = [s for s in row.sources if s.case == "single"]
    assert single.source == "template" and single.origin == "examples/tool_chat_template_hermes.jinja"
    assert single.text.startswith("<tool_call>\n{")
    tpindex("build", "--from-pypi", "--tags", "v0.11.0", "--db", hermes_db, "-q")
    added = run_atlas(hermes_db, ["hermes"])
    assert added.run.ran == ["hermes v0.11.0"]
    assert cell(added, "v0.11.0", "single", "stream:token").status == "ok"
    fixed = [c for c in added.changes if (c.case, c.mode, c.version) == ("single", "stream:token", "v0.11.0")]
    assert fixed and (fixed[0].before, fixed[0].after) == ("wrong", "ok")
