"""200 turns over the textbook through Agent.ask, then `rag-agent report`: counts, topics, feedback, masking."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from graph.context import Context
from rag_agent.service import Agent
from tests.integration.conftest import RAG_AGENT, SHARED, cli_env, postgres_schema

pytestmark = pytest.mark.integration
TEXTBOOK = SHARED / "textbook"
# Repeated traffic: the same missing topic asked in other words (the near-miss set has one of each).
FAMILIES = {
    "price": ["How much does a Unity Pro license cost for a university robotics lab?",
              "What is the price of an NVIDIA Jetson Orin Nano developer kit?",
              "How much does an Isaac Sim enterprise license cost per seat?",
              "What does a Unitree G1 humanoid robot cost?",
              "How much will an Intel RealSense D435 camera cost me?",
              "What's the price of a Unity Pro seat for students?",
              "How expensive is a Jetson AGX Orin for a student project?",
              "How much does it cost to rent a cloud GPU for running Isaac Sim?"],
    "zenoh": ["How do I switch my ROS 2 middleware from DDS to Zenoh?", "Can I use Zenoh instead of DDS in ROS 2?",
              "How do I configure rmw_zenoh for my robots?", "Is Zenoh a better RMW than Fast DDS for Wi-Fi robots?"],
    "foxglove": ["How do I view my ROS 2 topics in Foxglove Studio?",
                 "Can Foxglove show my robot's camera images live?",
                 "How do I connect Foxglove to a ROS 2 robot over the network?"],
    "px4": ["How do I set up PX4 with ROS 2 to fly a quadcopter?", "Can I control a PX4 drone from a ROS 2 node?",
            "How do I simulate a PX4 quadcopter in Gazebo with ROS 2?"],
}
SECRETS = ["sk-test-4f9a8b7c6d5e4f3a2b1c", "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
           "student.one@university.edu", "robo-lab+alerts@example.org"]
SECRET_QUESTIONS = [f"My OpenAI key is {SECRETS[0]}; what is DDS and why does ROS 2 use it?",
                    f"Using AWS key {SECRETS[1]}, how does Nav2 plan a path?",
                    f"token {SECRETS[2]} — what is URDF?",
                    f"Please email {SECRETS[3]}: what is Isaac Sim?",
                    f"What is the weather today? cc {SECRETS[4]}"]
NEGATIVE = {"What is the price of an NVIDIA Jetson Orin Nano developer kit?": f"No prices at all, mail {SECRETS[3]}",
            "How do I configure rmw_zenoh for my robots?": "Zenoh is what we use",
            "What's the weather today?": None, "Tell me about Nav2.": "Too vague"}
TURNS = 200
LABELS = {"price": ["cost", "price", "expensive"], "zenoh": ["zenoh"], "foxglove": ["foxglove"], "px4": ["px4"]}
PURE = {"price", "zenoh", "foxglove"}


def lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (TEXTBOOK / name).read_text().splitlines() if line.strip()]


def traffic() -> list[tuple[str, list[Any]]]:
    """Return (thread, questions) pairs: 200 turns of in-scope, near-miss, far-off, follow-up and odd input."""
    singles = [q["question"] for q in lines("textbook-questions.jsonl")]  # 30 in scope, 20 far off
    singles += [q["question"] for q in lines("textbook-nearmiss.jsonl")]  # 40 near-miss, 20 in scope
    singles += [q for family in FAMILIES.values() for q in family if q not in singles] + SECRET_QUESTIONS
    threads = [(f"s{i}", [q]) for i, q in enumerate(singles)]
    threads += [(c["id"], [t["question"] for t in c["turns"]]) for c in lines("textbook-conversations.jsonl")]
    threads += [("hi", ["hello", "thanks!"]), ("bad", ["   ", "x" * 5000])]  # chit-chat; refused input
    sent = sum(len(q) for _, q in threads)
    repeats = [q["question"] for q in lines("textbook-questions.jsonl") if q.get("gold")]
    threads += [(f"r{i}", [repeats[i % len(repeats)]]) for i in range(TURNS - sent)]
    return threads


@pytest.fixture(params=["sqlite", "postgres"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The conversation database: a SQLite file, or a fresh schema on the real Postgres server."""
    if request.param == "sqlite":
        yield str(tmp_path / "conversations.sqlite")
        return
    with postgres_schema("Postgres report test") as url:
        yield url


def stored_text(url: str) -> str:
    """Return every value of both record tables as one string."""
    query = "SELECT * FROM rag_agent_turns; SELECT * FROM rag_agent_feedback"
    if url.startswith("postgresql://"):
        with psycopg.connect(url) as conn:
            return " ".join(str(conn.execute(q).fetchall()) for q in query.split("; "))
    with sqlite3.connect(url) as conn:
        return " ".join(str(conn.execute(q).fetchall()) for q in query.split("; "))


def test_report_over_200_turns(textbook_dir: Path, checkpointer: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_AGENT_DATA_DIR", str(textbook_dir))  # the deployment's index, not a per-run choice
    sent: dict[str, str] = {}
    statuses: Counter[str] = Counter()
    with Agent(Context(), checkpointer) as agent:
        for thread, questions in traffic():
            thread_id = f"{thread}-{uuid.uuid4().hex[:6]}"
            for question in questions:
                response = agent.ask(question, thread_id)
                sent[response["turn_id"]] = question
                statuses[response["status"]] += 1
        by_question = {q: t for t, q in sent.items()}
        for question, comment in NEGATIVE.items():
            agent.feedback(by_question[question], "down", comment)
        agent.feedback(by_question["What is URDF?"], "up")
    assert len(sent) == TURNS

    html = tmp_path / "report.html"
    env = {"RAG_AGENT_CHECKPOINTER": checkpointer}
    result = subprocess.run([RAG_AGENT, "report", "--json", "--since", "1d", "--html", str(html)],
                            capture_output=True, text=True, env=cli_env(textbook_dir) | env, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["turns"] == TURNS and sum(report["counts"].values()) == TURNS
    counts = report["counts"]
    assert counts["error"] == statuses["error"] == 2  # the two refused inputs
    assert counts["answered"] + counts["flagged"] == statuses["grounded"]
    assert counts["not_found"] == statuses["not_found"]
    assert report["feedback"]["down"] == len(NEGATIVE) and report["feedback"]["up"] == 1
    assert {f["question"] for f in report["feedback"]["negative"]} == set(NEGATIVE)

    # Each repeated topic that went unanswered is one group, named by it, with the nearest sections the docs have.
    groups = {turn: i for i, g in enumerate(report["coverage_gaps"]) for turn in g["turn_ids"]}
    family_of = {q: name for name, family in FAMILIES.items() for q in family}
    for name, family in FAMILIES.items():
        gap_turns = [t for t, q in sent.items() if q in family and t in groups]
        assert len(gap_turns) >= 2, (name, gap_turns)
        (index,) = {groups[t] for t in gap_turns}
        group = report["coverage_gaps"][index]
        members = [family_of.get(sent[t]) for t in group["turn_ids"]]
        assert set(LABELS[name]) & set(group["topic"].split(" / ")), group["topic"]
        assert group["nearest_sections"] and group["count"] == len(members)
        if name in PURE:  # nothing else asked in the 200 turns is about prices, Zenoh or Foxglove
            assert set(members) == {name}, group["examples"]
        else:  # PX4 shares its group with other refused "…from a ROS 2 node" asks (Dynamixel servos, ros1_bridge)
            assert set(members) - {None} == {name} and members.count(name) >= len(members) / 2, group["examples"]

    stored = stored_text(checkpointer) + result.stdout + html.read_text()
    assert not [s for s in SECRETS if s in stored]
    assert "<svg" in html.read_text() and "<script" not in html.read_text()
