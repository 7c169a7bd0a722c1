import re
from pathlib import Path

import pytest

from motivegym.envdocs import render_environment_docs

ROOT = Path(__file__).resolve().parents[1]


def test_environment_docs_match_the_registry():
    committed = (ROOT / "docs" / "environments.md").read_text()
    assert committed == render_environment_docs(), "docs/environments.md is stale: run `motivegym docs`"


@pytest.mark.parametrize("block", re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S))
def test_readme_examples_run(block):
    exec(compile(block, "README.md", "exec"), {})


def test_readme_has_exactly_two_setup_commands():
    setup = (ROOT / "README.md").read_text().split("## Set-up", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"```bash\n", setup)) == 2


@pytest.mark.parametrize("run_dir", ["keydoorgift", "crafter"])
def test_intrinsic_doc_quotes_the_committed_comparison_table(run_dir):
    """docs/intrinsic.md's comparison tables are the experiment's own comparison.md, not hand-edited numbers."""
    table = (ROOT / "docs" / "intrinsic" / run_dir / "comparison.md").read_text().strip()
    assert table.startswith("| layer |")
    assert table in (ROOT / "docs" / "intrinsic.md").read_text(), f"docs/intrinsic.md does not quote docs/intrinsic/{run_dir}/comparison.md"
