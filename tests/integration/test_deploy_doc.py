"""Every command docs/deploy.md shows is one the repository can run: scripts, compose services, CLI options."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploy.md"
COMPOSE = ["docker", "compose", "-f", "deploy/docker-compose.yml", "--env-file", "deploy/.env"]
RAG_AGENT = Path(sys.executable).parent / "rag-agent"


def commands() -> list[list[str]]:
    """Return the commands of the page's sh blocks, split like a shell would."""
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), flags=re.S)
    return [shlex.split(line, comments=True) for block in blocks for line in block.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())["services"])


def cli_help(*subcommand: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    result = subprocess.run([str(RAG_AGENT), *subcommand, "--help"], capture_output=True, text=True, env=env,
                            timeout=60)
    assert result.returncode == 0, (subcommand, result.stderr)
    return result.stdout


def check_compose(args: list[str], services: dict[str, Any]) -> None:
    assert args[:len(COMPOSE)] == COMPOSE, f"compose commands use the stack's file and env file: {args}"
    sub, rest = args[len(COMPOSE)], args[len(COMPOSE) + 1:]
    assert sub in {"up", "ps", "logs", "run", "pull"}, sub
    names = [a for a in rest if not a.startswith("-")]
    if sub == "run":
        service, command = names[0], names[1:]
        assert service in services and services[service]["entrypoint"] == ["rag-agent"]
        subcommand = rest[rest.index(service) + 1]
        usage = cli_help(subcommand)  # the subcommand exists and takes every option shown
        for option in [a for a in rest[rest.index(service) + 1:] if a.startswith("--")]:
            assert option in usage, f"rag-agent {subcommand} has no {option}"
        assert command
    else:
        assert set(names) <= set(services), names


def test_every_command_on_the_page_is_checked(services: dict[str, Any]) -> None:
    seen = set()
    for args in commands():
        seen.add(args[0])
        if args[:2] == ["docker", "compose"]:
            check_compose(args, services)
        elif args[0] == "deploy/build-image.sh":
            assert os.access(ROOT / args[0], os.X_OK) and "--dockerfile" in (ROOT / args[0]).read_text()
        elif args[0] == "cp":
            assert (ROOT / args[1]).is_file() and args[2] == "deploy/.env"
            assert "deploy/.env" not in subprocess.run(["git", "ls-files", "deploy"], cwd=ROOT, capture_output=True,
                                                        text=True).stdout
        elif args[0] == "openssl":
            assert args[1:] == ["rand", "-hex", "24"]  # 48 characters: passes the server's 24-character floor
        elif args[0] == "curl":
            assert args[1].startswith("https://") and args[1].endswith("/ok")  # the API's health route, via TLS
        else:
            raise AssertionError(f"docs/deploy.md shows a command no test checks: {shlex.join(args)}")
    assert {"docker", "deploy/build-image.sh", "cp", "curl"} <= seen


def test_the_page_names_the_compose_services_and_the_real_setting_names(services: dict[str, Any]) -> None:
    text = DOC.read_text()
    for name in services:
        assert f"`{name}`" in text, f"docs/deploy.md does not mention the {name} service"
    environment = services["langgraph-api"]["environment"]
    for name in re.findall(r"`((?:RAG_AGENT|QDRANT|REDIS|DATABASE)_[A-Z_]+)`", text):
        if name not in {"RAG_AGENT_DOMAIN", "RAG_AGENT_RATE_LIMIT_VISITOR"}:  # Caddy's; a setting left at its default
            assert name in environment or f"${{{name}" in (ROOT / "deploy" / "docker-compose.yml").read_text(), name
