"""The house rules of the layout (issue #16): modules of one job, and no Python in `plugins/`.

`plugins/` holds assistant plugins only (manifests, MCP configs, skills); installing one must not
copy Python into a user's plugin folder. Source modules stay under the hard limit of 700 lines
(the aim is ~500): a module that grows past it has more than one job and should be split, as
`skillbank/distill/` and `skillbank/memories/*/` were.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("skillbank", "adapters", "mcp_server")
HARD_LIMIT = 700


def source_modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (REPO / package).rglob("*.py")
                  if "__pycache__" not in p.parts)


def test_no_source_module_is_over_the_hard_limit():
    sizes = {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines())
             for p in source_modules()}
    assert len(sizes) > 20  # the packages are where this test thinks they are
    over = {path: lines for path, lines in sorted(sizes.items()) if lines > HARD_LIMIT}
    assert not over, f"modules over {HARD_LIMIT} lines (split them by job): {over}"


def test_plugins_hold_no_python():
    """What installing a plugin copies (links followed, as the installer does): no Python but a
    skill's own `scripts/`, which are part of the Agent Skills format."""
    plugins = REPO / "plugins"
    assert (plugins / "claude-code").is_dir()
    python = []
    for folder, dirs, names in os.walk(plugins, followlinks=True):
        relative = Path(folder).relative_to(plugins)
        python += [str(relative / d) for d in dirs if d == "__pycache__"]
        python += [str(relative / n) for n in names if n.endswith((".py", ".pyc"))
                   and relative.name != "scripts"]
    assert not python, f"plugins/ must hold no Python: {sorted(python)}"


def test_the_plugin_links_every_bundled_skill():
    """plugins/claude-code/skills holds one link per bundled skill (not the package folder)."""
    linked = REPO / "plugins" / "claude-code" / "skills"
    bundled = {p.parent.name for p in (REPO / "skills").glob("*/SKILL.md")}
    links = {p.name for p in linked.iterdir()}
    assert links == bundled
    for name in links:
        assert (linked / name).is_symlink() and (linked / name / "SKILL.md").is_file()


def test_every_package_folder_is_listed_for_the_wheel():
    """A package folder missing from pyproject's list is left out of the wheel (the editable
    install used in development would not notice)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = config.get("package-dir", {})

    def folder(name: str) -> Path:
        """Where setuptools looks for a package: its own mapping, else its nearest parent's."""
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in mapped:
                return REPO / mapped[prefix] / Path(*parts[cut:])
        return REPO / Path(*parts)

    folders = {name: folder(name) for name in config["packages"]}
    listed = {folder.resolve() for folder in folders.values()}
    found = {p.parent.resolve() for package in PACKAGES for p in (REPO / package).rglob("__init__.py")
             if "__pycache__" not in p.parts}
    missing = sorted(str(p.relative_to(REPO)) for p in found - listed)
    assert not missing, f"add these to [tool.setuptools] packages in pyproject.toml: {missing}"
