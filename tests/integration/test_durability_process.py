"""Durability across processes: a process killed like `kill -9` mid-turn, resumed by another."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from graph.context import Context
from rag_agent.service import Agent
from tests.unit import conftest as unit
from tests.unit.test_durability import count_nodes
from tools import vectorstore
from tools.settings import get_settings

# The hash-embedded corpus and the hermetic environment of the unit tests.
hermetic, data_dir, make_context = unit.hermetic, unit.data_dir, unit.make_context

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


# A separate process whose score_gate exits at once, like `kill -9`: no finally block or exit handler runs.
CHILD = """
import os, sys
import graph.builder
graph.builder.score_gate = lambda state: os._exit(137)
from graph.context import Context
from rag_agent.service import Agent
os.environ["RAG_AGENT_DATA_DIR"] = sys.argv[1]  # a child process of its own: the deployment it runs as
Agent(Context(embedding_model="hash/256", score_threshold=0.2)).ask("What is Isaac Sim?", "kill9")
"""


def test_hard_killed_process_resumes_without_redoing_finished_nodes(
    make_context: Callable[..., Context], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_context()
    vectorstore.close_clients()  # local Qdrant admits one process at a time
    child = subprocess.run([sys.executable, "-c", CHILD, get_settings().data_dir], cwd=ROOT, capture_output=True,
                           text=True,
                           timeout=300)
    assert child.returncode == 137, child.stderr
    counts = count_nodes(monkeypatch)
    with Agent(ctx) as restarted:
        response = restarted.resume("kill9")
        messages = restarted.graph.get_state({"configurable": {"thread_id": "kill9"}}).values["messages"]
    assert response["status"] == "grounded"
    assert counts == {"score_gate": 1, "generate_grounded": 1}  # classify and retrieve ran in the dead process
    assert [type(m) for m in messages] == [HumanMessage, AIMessage]


