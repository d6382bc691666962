"""Fit the gate's conversation check (logic/answerability.py: CONTEXT_HINGE, CONTINUES_AT, WEIGHTS["off_topic"]).

MTRAG-UN's final questions are the only labelled follow-ups: each is rewritten as the offline classify node
does, retrieved from the MTRAG-UN passage pool as the agent does, and scored with the shipped gate plus
weight × off_topic. A grid picks the hinge, the weight and the continuation cosine that refuse the most
UNANSWERABLE finals while at least --answered of the ANSWERABLE ones still pass the shipped threshold (the
other weights and the threshold stay as fitted on single questions, whose scores this term never changes).
Five-fold cross-validation by conversation, repeated, says how well the choice carries to unseen conversations.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.answerability import SHARED, measure, mtrag  # noqa: E402
from logic import answerability  # noqa: E402
from logic.heuristics import chitchat_reply, rewrite_followup  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402

HINGES = [round(0.30 + 0.05 * i, 2) for i in range(11)]
WEIGHTS = [float(w) for w in range(1, 16)]
CONTINUES = [-1.0, 0.1, 0.15, 0.2, 0.25, 0.3]  # -1: every follow-up counts as continuing


def finals(work: Path, model: str, limit: int | None) -> tuple[Path, list[dict[str, Any]]]:
    """Return the MTRAG-UN index and, per ANSWERABLE/PARTIAL/UNANSWERABLE task, the final standalone query."""
    data_dir, _ = mtrag(work, model)
    rows = []
    for line in (SHARED / "mtrag" / "mtragun" / "reference.govt-clapnq.jsonl").read_text().splitlines()[:limit]:
        task = json.loads(line)
        label = task["answerability"][0]
        if label == "UNDERSPECIFIED":
            continue
        users = [m["text"].strip() for m in task["input"] if m["speaker"] == "user"]
        last, query = "", users[0]
        for text in users:  # classify's offline rewrite; chit-chat turns leave the topic alone
            if chitchat_reply(text) is not None:
                continue
            query = rewrite_followup(text, last)
            last = last if query != text else query
        earlier = [t for t in users[:-1] if chitchat_reply(t) is None][-answerability.CONTEXT_TURNS:]
        rows.append({"question": query, "previous": earlier, "label": label,
                     "conversation": task["conversation_id"]})
    return data_dir, rows


def conversation_cosines(rows: list[dict[str, Any]], model: str) -> None:
    """Record, per follow-up, the question's cosine with its earlier turns and the best section's with all of them."""
    embedder = get_embeddings(model)
    for row in rows:
        if not row["previous"] or not row["chunks"]:
            row["continues"], row["with_conversation"] = -2.0, 1.0
            continue
        query, *turns = embedder.embed_documents([row["question"], *row["previous"]])
        section = embedder.embed_query(answerability.section_text(row["chunks"][0]))
        centre = answerability._centre(turns)
        row["continues"] = answerability._dot(answerability._unit(query), centre)
        row["with_conversation"] = answerability.CONTEXT_HINGE - answerability.off_topic(query, turns, section)


def _logit(row: dict[str, Any]) -> float:
    """Return the shipped gate's log-odds without the conversation term."""
    f = row["features"]
    return answerability.INTERCEPT + sum(answerability.WEIGHTS[n] * f[n] for n in answerability.FEATURES
                                         if n != "off_topic")


def passes(row: dict[str, Any], hinge: float, weight: float, continues: float) -> bool:
    """Tell whether a final question clears the shipped threshold with this conversation term."""
    term = max(0.0, hinge - row["with_conversation"]) if row["continues"] >= continues else 0.0
    p = 1 / (1 + math.exp(-(_logit(row) - weight * term)))
    return p * (answerability.TYPE_MISSING_FACTOR if row["features"].get("type_missing") else 1.0) \
        >= answerability.THRESHOLD


def figures(rows: list[dict[str, Any]], choice: tuple[float, float, float]) -> dict[str, float]:
    """Share of ANSWERABLE and PARTIAL finals answered and of UNANSWERABLE ones refused."""
    out = {}
    for label in ("ANSWERABLE", "PARTIAL", "UNANSWERABLE"):
        part = [passes(r, *choice) for r in rows if r["label"] == label]
        out[label] = round((sum(part) if label != "UNANSWERABLE" else len(part) - sum(part)) / max(len(part), 1), 3)
    return out


def best(rows: list[dict[str, Any]], answered: float) -> tuple[float, float, float]:
    """Return the (hinge, weight, continues) that refuses most UNANSWERABLE finals with enough ANSWERABLE ones."""
    grid = [(h, w, c) for h in HINGES for w in WEIGHTS for c in CONTINUES]
    scored = [(figures(rows, g), g) for g in grid]
    ok = [(f["UNANSWERABLE"], f["ANSWERABLE"], g) for f, g in scored if f["ANSWERABLE"] >= answered]
    return max(ok)[2] if ok else (0.0, 0.0, 0.0)


def main() -> None:
    """Measure, pick the constants on all conversations, and cross-validate the choice."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rag-agent-answerability"))
    parser.add_argument("--embedding-model", default=LOCAL_MODEL, help="the constants are for the bundled one")
    parser.add_argument("--limit", type=int, help="first N MTRAG-UN tasks only (a smoke run)")
    parser.add_argument("--answered", type=float, default=0.88, help="least share of ANSWERABLE finals answered")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    data_dir, rows = finals(args.work, args.embedding_model, args.limit)
    measure(data_dir, rows, args.embedding_model)
    cache = json.loads((data_dir.parent / f"{data_dir.name}-features.json").read_text())
    for row in rows:
        row["chunks"] = cache[row["question"]]
    conversation_cosines(rows, args.embedding_model)
    print("without the conversation term:", figures(rows, (0.0, 0.0, 9.0)))
    choice = best(rows, args.answered)
    print(f"chosen on all conversations: hinge {choice[0]}, weight {choice[1]}, continues at {choice[2]}:",
          figures(rows, choice))
    print("shipped:", figures(rows, (answerability.CONTEXT_HINGE, -answerability.WEIGHTS["off_topic"],
                                     answerability.CONTINUES_AT)))
    conversations = sorted({r["conversation"] for r in rows})
    held: dict[str, list[bool]] = {"ANSWERABLE": [], "PARTIAL": [], "UNANSWERABLE": []}
    for repeat in range(args.repeats):
        shuffled = random.Random(repeat).sample(conversations, len(conversations))
        fold = {c: n % 5 for n, c in enumerate(shuffled)}
        for k in range(5):
            picked = best([r for r in rows if fold[r["conversation"]] != k], args.answered)
            for r in rows:
                if fold[r["conversation"]] == k:
                    held[r["label"]].append(passes(r, *picked) != (r["label"] == "UNANSWERABLE"))
    print(f"cross-validated ({args.repeats} x 5 folds by conversation):",
          {k: round(sum(v) / max(len(v), 1), 3) for k, v in held.items()})


if __name__ == "__main__":
    main()
