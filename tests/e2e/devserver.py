"""Start the project's `langgraph dev` in a scratch folder over a tiny hash-embedded corpus, and stop it cleanly.

Shared by tests/e2e and benchmarks/load.py. The server runs from a scratch folder that links the
project's packages and copies its langgraph.json, because `langgraph dev` keeps its threads in
`./.langgraph_api` and resolves graph paths against the working directory: a developer's own
`make dev` state is neither read nor overwritten.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.tiny_corpus import CORPUS

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LANGGRAPH = BIN / "langgraph"
RAG_AGENT = BIN / "rag-agent"
PACKAGES = ("graph", "nodes", "logic", "tools", "rag_agent")

# Every setting that keeps `langgraph dev` and the agent off the network.
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}
# Keys that would send the agent to a real provider or service.
_DROPPED = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "COHERE_API_KEY", "QDRANT_URL", "QDRANT_API_KEY",
            "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "RAG_AGENT_CHECKPOINTER", "RAG_AGENT_API_KEYS")


# No proxy: the server is on 127.0.0.1 whatever HTTP(S)_PROXY says.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def require_langgraph() -> None:
    """Skip the calling test when `langgraph dev` is not installed, saying so; in CI its absence is a failure."""
    import pytest  # here, not at the top: benchmarks/load.py uses this module without pytest

    if not LANGGRAPH.exists():
        message = f"langgraph dev end-to-end tests need {LANGGRAPH} (install the `server` extra)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def free_port() -> int:
    """Return a port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class DevServer:
    """A running `langgraph dev`; `stop()` ends its whole process group."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path
    workdir: Path
    env: dict[str, str] = field(repr=False)

    def log_tail(self, lines: int = 40) -> str:
        """Return the end of the server's log, for failure messages."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the process group, then SIGKILL it if it has not exited in time."""
        if self.process.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        # Workers in the group may outlive the leader by a moment; make sure none is left.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Build the server's environment: offline, hash embedder, the given data dir."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    return env | OFFLINE | {"RAG_AGENT_DATA_DIR": str(data_dir), "RAG_AGENT_EMBEDDING_MODEL": "hash/256"} | extra


def prepare(workdir: Path, *, ingest_args: Sequence[str] = (), **extra: str) -> dict[str, str]:
    """Ingest the tiny corpus with the real CLI and lay out the scratch project; return the server env."""
    docs, data = workdir / "docs", workdir / "data"
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    env = server_env(data, **extra)
    # Same env as the server, so the index is built with the embedder the server will query with.
    result = subprocess.run([str(RAG_AGENT), "ingest", str(docs), *ingest_args], env=env, capture_output=True,
                            text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"rag-agent ingest failed: {result.stderr[-2000:]}")
    project = workdir / "project"
    project.mkdir(exist_ok=True)
    for package in PACKAGES:
        link = project / package
        if not link.exists():
            link.symlink_to(ROOT / package, target_is_directory=True)
    shutil.copy(ROOT / "langgraph.json", project / "langgraph.json")
    return env


def start(workdir: Path, env: dict[str, str], *, args: Sequence[str] = (), attempts: int = 3,
          timeout: float = 120.0) -> DevServer:
    """Run `langgraph dev` (plus `args`) from the scratch project and wait for /ok; retry if the port was taken."""
    project = workdir / "project"
    last = ""
    for attempt in range(attempts):
        port = free_port()
        log = workdir / f"server-{attempt}.log"
        with log.open("wb") as out:
            # Own session: stop() can signal the CLI and the server it spawns as one group.
            process = subprocess.Popen(
                [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
                 *args],
                cwd=project, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        server = DevServer(f"http://127.0.0.1:{port}", process, log, workdir, env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if _ok(server.url):
                return server
            time.sleep(0.25)
        last = server.log_tail()
        server.stop()
        if "address already in use" not in last.lower():
            break
    raise RuntimeError(f"langgraph dev did not become ready; log tail:\n{last}")


def _ok(url: str) -> bool:
    """Return True once the server answers /ok."""
    try:
        with _DIRECT.open(f"{url}/ok", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False
