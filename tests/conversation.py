"""One three-turn conversation over the tiny corpus, sent the way each client sends it: only what changed.

Turn 1 carries a filter, turn 2 a selection, turn 3 nothing but the message. If a turn's inputs leaked into
the next one, turn 2 would be refused (a selection with filters) and turn 3 answered from the wrong place.
"""

from __future__ import annotations

from typing import Any

SELECTION = ("Inverse kinematics solves for the joint angles of a robot arm that place its end effector at a "
             "target pose. Forward kinematics computes the pose from the joint angles.")
# (message, extra input sent with it)
TURNS: list[tuple[str, dict[str, Any]]] = [
    ("What is Isaac Sim?", {"filters": {"source": "baking"}}),
    ("What does inverse kinematics solve for?", {"context": SELECTION}),
    ("How does Isaac Sim generate synthetic data?", {}),
]
# What every path must show, turn by turn: the status and the sources cited.
EXPECTED = [("not_found", []), ("grounded", ["selection"]), ("grounded", ["isaac-sim.md"])]


def summary(result: dict[str, Any]) -> tuple[str, list[tuple[int, str, str]]]:
    """Reduce a turn's final state or response to what the three paths must agree on."""
    return result["status"], [(c["index"], c["source"], c["chunk_id"]) for c in result.get("citations") or []]


def sources(summaries: list[tuple[str, list[tuple[int, str, str]]]]) -> list[tuple[str, list[str]]]:
    """Return each turn's status and the distinct sources it cited, in citation order."""
    return [(status, list(dict.fromkeys(source for _, source, _ in cited))) for status, cited in summaries]
