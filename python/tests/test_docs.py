"""Every ```python example of docs/python.md runs, from the repository root, without error."""
import re
import sys

import pytest

from conftest import ROOT, run_python

DOC = ROOT / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S) if DOC.exists() else []


def test_the_page_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("code", BLOCKS, ids=["example%d" % i for i in range(len(BLOCKS))])
def test_example_runs(code):
    if "import torch" in code:
        pytest.importorskip("torch")
    p = run_python("import os; os.chdir(%r)\n" % str(ROOT) + code, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip(), "the example printed nothing"
