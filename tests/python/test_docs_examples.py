"""Every Python code block in the docs marked as a complete program runs here
(issue 41; the JS ones in tests/js/docs-examples.test.mjs). The convention
(CONTRIBUTING.md): the line right before the opening fence is the HTML comment
``<!-- run -->``. The block runs as a script with this interpreter (the venv
the package is installed in) and passes when it exits 0."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- run -->"
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w-]*)")


def doc_files():
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "js" / "README.md"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    return [f for f in files if f.is_file()]


def marked_blocks(text):
    """[(line of the fence, language, code)] for each block marked as a program."""
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == MARK:
            match = FENCE.match(lines[i + 1] if i + 1 < len(lines) else "")
            assert match, f"line {i + 1}: {MARK} is not followed by a code fence"
            indent, fence, info = match.groups()
            body = []
            j = i + 2
            while j < len(lines) and not lines[j].strip().startswith(fence):
                body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
                j += 1
            assert j < len(lines), f"line {i + 2}: the fence never closes"
            blocks.append((i + 2, info.lower(), "\n".join(body) + "\n"))
            i = j
        i += 1
    return blocks


BLOCKS = [
    pytest.param(code, id=f"{path.relative_to(ROOT)}:{line}")
    for path in doc_files()
    for line, lang, code in marked_blocks(path.read_text(encoding="utf-8"))
    if lang in ("python", "py")
]


def test_there_are_python_examples():
    assert BLOCKS, "no Python block is marked with <!-- run -->"


@pytest.mark.parametrize("code", BLOCKS)
def test_docs_example_runs(code, tmp_path):
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
