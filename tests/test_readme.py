"""The README's Python examples run as written, and its generated blocks are present."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_python_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "the README has no Python example"
    for code in blocks:
        exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})


def test_quick_start_has_two_commands_and_ci_runs_them():
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", quick, re.S)
    assert len(commands) == 2, commands
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m pytest" in commands[1] and "python3 -m pytest" in ci
    install, job = commands[0].strip().split(" && ")
    assert install in ci
    for option in job.split()[2:]:
        assert option in ci, option


def test_generated_blocks_are_filled():
    text = README.read_text(encoding="utf-8")
    for name in ("findings", "verdicts", "knobs", "hyperparameters"):
        block = re.search(rf"<!-- BEGIN {name} -->\n(.*?)<!-- END {name} -->", text, re.S)
        assert block and block.group(1).strip(), f"README block {name!r} is empty"


def test_the_papers_page_lists_every_reading():
    """``docs/papers.md`` indexes every reading id defined in the per-paper pages."""
    docs = README.parent / "docs"
    index = (docs / "papers.md").read_text(encoding="utf-8")
    for page in sorted((docs / "papers").glob("*.md")):
        defined = set(re.findall(r"\*\*([A-Z]+-[RIL]\d+)\b", page.read_text(encoding="utf-8")))
        missing = sorted(r for r in defined if f"`{r}`" not in index)
        assert not missing, f"{page.name}: readings missing from docs/papers.md: {missing}"
