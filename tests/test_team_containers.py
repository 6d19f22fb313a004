"""The Dockerfile and compose.yaml of a team deployment (issue 24, item 7), tested offline.

This machine may have no container daemon, so what is tested is what can be without one: the
compose file has two workers (built from the Dockerfile), PostgreSQL and Chroma's own image, and
validates with `docker compose config` (or docker-compose 1.x) where either is installed; every
worker's command line, with the environment compose gives it, is accepted by `skillbank server`'s
own argument parser, and the real CLI run with it fails only on reaching PostgreSQL (whose
error names it); the image installs every folder pyproject.toml packages, with the team extra.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "compose.yaml"
DOCKERFILE = REPO / "Dockerfile"
ENV = {"SKILLBANK_DB_PASSWORD": "compose-test-pw", "SKILLBANK_TOKEN": "compose-test-token"}


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?message}` (what compose.yaml uses)."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        if op == ":?":
            raise AssertionError(f"compose needs {name}: {arg}")
        return arg or ""

    return re.sub(r"\$\{([A-Z_]+)(?:(:-|:\?)([^}]*))?\}", one, value)


def compose(env: dict[str, str]) -> dict[str, Any]:
    return interpolate(yaml.safe_load(COMPOSE.read_text()), env)


def workers(config: dict[str, Any]) -> dict[str, Any]:
    return {name: s for name, s in config["services"].items() if s.get("build")}


def dockerfile_json(instruction: str) -> list[str]:
    match = re.search(rf"^{instruction}\s+(\[.*\])\s*$", DOCKERFILE.read_text(), re.M)
    assert match, f"no exec-form {instruction} in the Dockerfile"
    return json.loads(match.group(1))


def test_two_workers_postgres_and_chromas_own_image():
    import chromadb

    config = compose(ENV)
    services = config["services"]
    assert len(workers(config)) == 2
    for name, worker in workers(config).items():
        env = worker["environment"]
        assert env["SKILLBANK_DATABASE_URL"] == \
            "postgresql://skillbank:compose-test-pw@postgres:5432/skillbank", name
        assert env["SKILLBANK_CHROMA_URL"] == "http://chroma:8000"
        assert set(worker["depends_on"]) == {"postgres", "chroma"}
        assert "skillbank-root:/data" in worker["volumes"]  # one root for both (skills, rules)
    assert services["postgres"]["image"].startswith("postgres:15")
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == "compose-test-pw"
    image, _, tag = services["chroma"]["image"].partition(":")
    assert image == "chromadb/chroma"
    assert tag.split(".")[:2] == chromadb.__version__.split(".")[:2]  # server matches client
    assert "chroma-data:/data" in services["chroma"]["volumes"]
    ports = sorted(p for w in workers(config).values() for p in w["ports"])
    assert len(set(ports)) == 2
    with pytest.raises(AssertionError, match="SKILLBANK_DB_PASSWORD"):
        compose({})  # no default password: compose refuses to start without one


def test_each_workers_command_line_is_accepted_by_skillbank_server(tmp_path, monkeypatch):
    from skillbank.team.server import parse_args

    entry = dockerfile_json("ENTRYPOINT")
    assert entry == ["skillbank", "server"]
    for name, worker in workers(compose(ENV)).items():
        for key in list(os.environ):
            if key.startswith("SKILLBANK_") and key != "SKILLBANK_MODEL_DIR":
                monkeypatch.delenv(key)
        for key, value in worker["environment"].items():
            monkeypatch.setenv(key, str(value))
        args = parse_args([str(a) for a in worker["command"]])
        assert (args.host, args.port, args.root) == ("0.0.0.0", 8080, "/data"), name
        assert args.database_url.endswith("@postgres:5432/skillbank")
        assert args.chroma_url == "http://chroma:8000" and args.token == "compose-test-token"
        assert not args.tokens and not args.auth_config and not args.oidc_issuer
    cmd = parse_args([str(a) for a in dockerfile_json("CMD")])
    assert (cmd.host, cmd.port) == ("0.0.0.0", 8080)


def test_the_real_cli_runs_a_workers_command_until_it_reaches_for_postgres(tmp_path):
    """`skillbank server` + worker-a's command and environment (the root moved off /data): the
    options parse (no usage error) and the worker stops on the one thing missing here, the
    `postgres` host, with an error naming PostgreSQL and what to check."""
    worker = workers(compose(ENV))["worker-a"]
    root = tmp_path / "data"
    argv = [str(a).replace("/data", str(root)) for a in worker["command"]]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SKILLBANK_") or k == "SKILLBANK_MODEL_DIR"}
    env.update({k: str(v) for k, v in worker["environment"].items()})
    env["SKILLBANK_DATABASE_URL"] = env["SKILLBANK_DATABASE_URL"].replace(
        "@postgres:5432", "@127.0.0.1:9")  # nothing listens there: fails at once, offline
    done = subprocess.run([str(Path(sys.executable).parent / "skillbank"), "server", *argv],
                          env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "PostgreSQL at postgresql://skillbank:***@127.0.0.1:9" in done.stderr
    assert "check that PostgreSQL is running" in done.stderr
    assert "Traceback" not in done.stderr and "compose-test-pw" not in done.stderr


def test_the_image_installs_every_packaged_folder_with_the_team_extra():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    text = DOCKERFILE.read_text()
    copied = {m.group(1).rstrip("/") for m in re.finditer(r"^COPY\s+(\S+)\s+\S+\s*$", text, re.M)}
    assert folders <= copied, f"the image misses {folders - copied}"
    assert pyproject["project"]["readme"] in " ".join(re.findall(r"^COPY .*$", text, re.M))
    # the licence text goes into the image's install too (hunt-wheel #4, session 38)
    for licence in pyproject["project"]["license-files"]:
        assert licence in " ".join(re.findall(r"^COPY .*$", text, re.M))
    assert re.search(r'pip install "\.\[team\]"', text)
    ignored = {line.strip().rstrip("/") for line in (REPO / ".dockerignore").read_text()
               .splitlines() if line.strip() and not line.startswith("#")}
    assert not (folders | {"pyproject.toml", "README.md",
                           *pyproject["project"]["license-files"]}) & ignored
    assert re.search(r"^EXPOSE 8080$", text, re.M) and "127.0.0.1:8080/healthz" in text
    assert re.search(r"^USER skillbank$", text, re.M)  # never root


def compose_cli() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True,
                                 timeout=60).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_config_accepts_the_file(tmp_path):
    cli = compose_cli()
    if cli is None:
        pytest.skip("neither `docker compose` nor docker-compose is installed")
    env = {**os.environ, **ENV}
    done = subprocess.run([*cli, "-f", str(COMPOSE), "config"], capture_output=True, text=True,
                          timeout=120, env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    assert sorted(config["services"]) == ["chroma", "postgres", "worker-a", "worker-b"]
    for name in ("worker-a", "worker-b"):
        command = [str(a) for a in config["services"][name]["command"]]
        assert command[:4] == ["--host", "0.0.0.0", "--port", "8080"]
