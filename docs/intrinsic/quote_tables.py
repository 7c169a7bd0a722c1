"""Copy the experiment's own tables into docs/intrinsic.md (run from the repository root after `--tables-only`).

Replaces the Markdown table after each anchor line with: KeyDoorGift's and CrafterTeam's ``comparison.md`` (which
tests/test_docs.py requires verbatim), and CrafterTeam's ``achievements.md`` rows where some layer reaches 1 %
(without its "Crafter score" row). The bullets that quote numbers are edited by hand.
"""

from pathlib import Path

DOC = Path("docs/intrinsic.md")
ANCHORS = {
    "`comparison.md`, from `comparison.csv`; welfare is out of 8;": "docs/intrinsic/keydoorgift/comparison.md",
    "differences to `none` with Welch intervals (`comparison.md`):": "docs/intrinsic/crafter/comparison.md",
}
RATES_ANCHOR, RATES_FILE = "per agent in `crafter_score.csv`):", "docs/intrinsic/crafter/achievements.md"


def common_rates(table: str, floor: float = 1.0) -> str:
    lines = table.strip().splitlines()
    rows = [r for r in lines[2:] if (cells := [c.strip() for c in r.strip("|").split("|")])[0] != "Crafter score"
            and max(float(c.split()[0]) for c in cells[1:]) >= floor]
    return "\n".join(lines[:2] + rows)


def replace_after(lines: list[str], anchor: str, table: str) -> None:
    start = next(k for k, line in enumerate(lines) if anchor in line) + 1
    while not lines[start].startswith("|"):
        start += 1
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    lines[start:end] = table.strip().splitlines()


if __name__ == "__main__":
    lines = DOC.read_text().splitlines()
    for anchor, path in ANCHORS.items():
        replace_after(lines, anchor, Path(path).read_text())
    replace_after(lines, RATES_ANCHOR, common_rates(Path(RATES_FILE).read_text()))
    DOC.write_text("\n".join(lines) + "\n")
