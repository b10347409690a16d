"""benchmarks/tempest_run.py's patches to the installed Tempest: applied
once, left alone when applied, refused when they do not fit."""

from pathlib import Path

import pytest

from benchmarks import tempest_run

ORIGINAL = "def f():\n    if glance:\n        make()\n"
PATCHED = "def f():\n    if glance or scope:\n        make()\n"
DIFF = """Why this patch (leading text patch ignores).

--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,3 +1,3 @@
 def f():
-    if glance:
+    if glance or scope:
         make()
"""


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    site, patches = tmp_path / "site", tmp_path / "patches"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "mod.py").write_text(ORIGINAL)
    patches.mkdir()
    (patches / "one.patch").write_text(DIFF)
    return site, patches


def test_applies_a_patch_once(tree):
    site, patches = tree
    assert tempest_run.apply_patches(site, patches) == ["one.patch"]
    assert (site / "pkg" / "mod.py").read_text() == PATCHED
    assert tempest_run.apply_patches(site, patches) == []
    assert (site / "pkg" / "mod.py").read_text() == PATCHED
    assert sorted(p.name for p in (site / "pkg").iterdir()) == ["mod.py"]


def test_refuses_a_patch_that_does_not_fit(tree):
    site, patches = tree
    (site / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    with pytest.raises(RuntimeError, match="does not apply"):
        tempest_run.apply_patches(site, patches)
    assert (site / "pkg" / "mod.py").read_text() == "def f():\n    return 1\n"


def test_the_repository_patches_are_diffs_of_tempest():
    patches = sorted(tempest_run.PATCHES.glob("*.patch"))
    assert patches
    for patch in patches:
        assert "+++ b/tempest/" in patch.read_text()
