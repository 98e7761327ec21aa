"""History from a clone (issue 31) against real releases: a database built from the package index holds no
commits, and says so with the build that would answer, naming its versions as the tags of a clone."""

from __future__ import annotations

import pytest
from fixtures.helpers import tpindex
from fixtures.real_releases import VERSIONS

pytestmark = pytest.mark.network


@pytest.mark.parametrize("args", [["contains", "#20028"], ["log", "glm47", "v0.30.0", "v0.32.0"]])
def test_a_package_index_database_says_why_it_cannot_answer(real_db, args):  # noqa: F811
    r = tpindex(*args, "--db", real_db, ok=False)
    assert r.exit_code == 2, r.output
    labels = ("v0.30.0", "v0.32.0") if args[0] == "log" else VERSIONS
    assert f"{', '.join(labels)} (the package index) have no commits" in r.output
    assert f"tpindex build --repo PATH/TO/vllm --tags {','.join(labels)} --replace" in r.output


def test_diff_of_package_index_versions_lists_no_commits(real_db):  # noqa: F811
    import json

    changes = json.loads(
        tpindex("diff", "v0.30.0", "v0.32.0", "--format", "json", "--db", real_db, ok=False).output
    )
    assert changes["changes"] and all(c["commits"] is None for c in changes["changes"])
