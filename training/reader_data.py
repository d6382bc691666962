"""Build the reading model's labelled (question, passage) pairs from ../shared's labelled sets only.

    .venv/bin/python -m training.reader_data --sites-dir /tmp/sites --out /tmp/reader-data.jsonl

Pairs, each tagged with its `group` (the corpus it comes from, for leave-one-site-out training):

- SQuAD 2.0 subset (group `squad`): each paragraph cut into the passages the agent reads
  (logic/reading.py). An answerable question's passages holding an answer are positives; its paragraph's
  other passages and those of the two most similar paragraphs are negatives. Every passage of an
  unanswerable question's own paragraph is a negative: those questions were written against it to be
  answered by nothing in it, the near misses a docs site gets.
- Each docs site and the textbook (groups `mkdocs`, `pydantic`, `rust-book`, `textbook`), over the indexes
  `benchmarks/sites.py` built in --sites-dir: every single question is retrieved as the agent retrieves it
  and the passages of its top chunks are labelled. In scope with answer keywords: a passage holding at
  least half of them is a positive, one holding none a negative (those holding some are left out). Every
  passage retrieved for a near miss or a far-off question is a negative.
- Answer taken out (kind `answer_removed`, both sources): each answering passage again, without the units
  (sentences, list, code) that hold the answer, as a negative: on topic, in the corpus's words, silent on
  what is asked, which is what a near miss retrieves.

MTRAG-UN is not used: it stays a held-out check of the gate on a public set. With `--users`, the project's own
sets written as users write (benchmarks/tuning/) join their sites' pairs, marked `set: users`, for experiments
(docs/benchmarks.md); the shipped model is built without them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from logic import ranking  # noqa: E402
from logic.hygiene import to_chunk  # noqa: E402
from logic.injection import without_instructions  # noqa: E402
from logic.lexical import terms  # noqa: E402
from logic.passages import units  # noqa: E402
from logic.reading import heading_of, passage_text, shown, windows  # noqa: E402
from tools import lexicon_store, manifest, search  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402

SHARED = ROOT.parent / "shared" / "eval"
SITE_TOP_K = 5  # chunks read per question: the gate reads three, the answerer quotes up to three
FAR_OFF_CHUNKS = 2  # a far-off question's retrieved passages are easy negatives; a few suffice
SIMILAR_PARAGRAPHS = 2


def _pair(query: str, text: str, label: int, group: str, kind: str, qid: str,
          question_set: str = "shared") -> dict[str, Any]:
    return {"query": query, "text": text, "label": label, "group": group, "kind": kind, "qid": qid, "set": question_set}


def _ablated(query: str, found: list[Any], passage: Any, heading: str, holds: Any, group: str,
             qid: str) -> list[dict[str, Any]]:
    """Return the answering passage with its answering units taken out, as a negative (when words remain).

    The passage is still on the question's topic, in the site's words, but no longer says the answer: the
    near miss a reader must refuse ("What's the default X?" against the section on X that gives none).
    """
    kept = [k for k in passage.unit_positions if not holds(shown(found[k]))]
    text = passage_text(found, kept, heading)
    if not kept or len(kept) == len(passage.unit_positions) or holds(text) or len(text.split()) < 8:
        return []
    return [_pair(query, text, 0, group, "answer_removed", qid)]


def squad_pairs(path: Path) -> list[dict[str, Any]]:
    """Label the passages of each SQuAD question's paragraph (and of the most similar others)."""
    rows: list[dict[str, Any]] = []
    for article in json.loads(path.read_text())["data"]:
        title = article["title"].replace("_", " ")
        found = [units(p["context"]) for p in article["paragraphs"]]
        cut = [windows(f, title) for f in found]
        bags = [set(terms(p["context"])) for p in article["paragraphs"]]
        for n, paragraph in enumerate(article["paragraphs"]):
            for qa in paragraph["qas"]:
                query, qid = qa["question"], qa["id"]
                if qa["is_impossible"]:
                    rows += [_pair(query, p.text, 0, "squad", "unanswerable", qid) for p in cut[n]]
                    continue
                answers = {a["text"].lower() for a in qa["answers"]}

                def has(text: str, answers: set[str] = answers) -> bool:
                    return any(a in text.lower() for a in answers)
                for p in cut[n]:
                    rows.append(_pair(query, p.text, int(has(p.text)), "squad", "answerable", qid))
                    if has(p.text):
                        rows += _ablated(query, found[n], p, title, has, "squad", qid)
                asked = set(terms(query))
                others = sorted((m for m in range(len(cut)) if m != n), key=lambda m: -len(asked & bags[m]))
                for m in others[:SIMILAR_PARAGRAPHS]:
                    rows += [_pair(query, p.text, 0, "squad", "other_paragraph", qid) for p in cut[m]
                             if not any(a in p.text.lower() for a in answers)]
    return rows


def site_questions(site: str, users: bool = False) -> list[dict[str, Any]]:
    """Return a site's single questions with their kind: in_scope, near_miss or far_off.

    With `users`, the project's own set for the site written as users write (benchmarks/tuning/) too, marked
    with `set: users`.
    """
    if site == "textbook":
        files = [(SHARED / "textbook" / "textbook-questions.jsonl", "far_off"),
                 (SHARED / "textbook" / "textbook-nearmiss.jsonl", "near_miss")]
    else:
        files = [(SHARED / "sites" / site / "questions.jsonl", "")]
    if users:
        files.append((ROOT / "benchmarks" / "tuning" / site / "questions.jsonl", ""))
    out = []
    for path, refusal in files:
        for line in path.read_text().splitlines():
            q = json.loads(line) if line.strip() else {}
            if not q.get("question") or q.get("selection_file"):
                continue
            if q.get("expected") == "GROUNDED":
                kind = "in_scope"
            else:
                kind = refusal or ("near_miss" if q.get("kind") == "near_miss" else "far_off")
            out.append({**q, "kind": kind, "set": "users" if path.parent.parent.name == "tuning" else "shared"})
    return out


def retrieved(data_dir: Path, questions: list[str], top_k: int) -> dict[str, list[Any]]:
    """Retrieve and rank each question's chunks as the retrieve node does."""
    embeddings = get_embeddings(LOCAL_MODEL)
    info = manifest.collection_info(str(data_dir), "docs", LOCAL_MODEL) or {}
    lexicon = lexicon_store.load(str(data_dir), "docs")
    found = {}
    for question in questions:
        vector = embeddings.embed_query(question)
        hits = search.find(data_dir, "docs", embeddings, vector, ranking.candidates_for(top_k),
                           mode=manifest.retrieval_mode(info), text=question)
        found[question] = ranking.order(question, [to_chunk(d.metadata, s) for d, s in hits], lexicon, top_k,
                                        ranking.page_sizes(d.metadata for d, _ in hits))
    return found


def _any_of(keywords: list[str], text: str) -> bool:
    return holds(text, keywords) > 0


def holds(text: str, keywords: list[str]) -> float:
    """Return the share of answer keywords a passage holds, case-insensitively."""
    lowered = text.lower()
    return sum(k.lower() in lowered for k in keywords) / len(keywords)


def site_pairs(site: str, data_dir: Path, users: bool = False) -> list[dict[str, Any]]:
    """Label the passages retrieved for each of a site's single questions."""
    questions = site_questions(site, users)
    chunks = retrieved(data_dir, [q["question"] for q in questions], SITE_TOP_K)
    rows: list[dict[str, Any]] = []
    for q in questions:
        top = chunks[q["question"]]
        if q["kind"] == "far_off":
            top = top[:FAR_OFF_CHUNKS]
        keywords = q.get("answer_keywords") or []
        if q["kind"] == "in_scope" and not keywords:
            continue  # nothing says which passage answers
        for chunk in top:
            found, heading = units(without_instructions(chunk["text"])), heading_of(chunk)
            for p in windows(found, heading):
                if q["kind"] != "in_scope":
                    rows.append(_pair(q["question"], p.text, 0, site, q["kind"], q["id"], q["set"]))
                    continue
                share = holds(p.text, keywords)
                label = 1 if share >= 0.5 else 0 if share == 0 else -1  # -1: scored, never trained on
                rows.append(_pair(q["question"], p.text, label, site, "in_scope", q["id"], q["set"]))
                if label == 1:
                    rows += [{**r, "set": q["set"]} for r in _ablated(q["question"], found, p, heading,
                                                                       partial(_any_of, keywords), site, q["id"])]
    return rows


def main() -> None:
    """Write every pair as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites-dir", type=Path, default=Path("/tmp/rag-agent-sites"),
                        help="a benchmarks/sites.py work dir: <dir>/<site>/data holds each site's index")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--users", action="store_true",
                        help="add the project's sets written as users write (benchmarks/tuning/), marked set=users")
    args = parser.parse_args()
    rows = squad_pairs(SHARED / "squad2" / "dev-v2.0.subset-3articles.json")
    for site in ("mkdocs", "pydantic", "rust-book", "textbook"):
        data_dir = args.sites_dir / site / "data"
        if not (data_dir / "manifest.json").is_file():
            sys.exit(f"no index for {site} in {data_dir}: run benchmarks/sites.py --work-dir {args.sites_dir} first")
        rows += site_pairs(site, data_dir, args.users)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    counts: dict[str, list[int]] = {}
    for r in rows:
        counts.setdefault(r["group"], [0, 0, 0])[r["label"] + 1] += 1
    for group, (unsure, neg, pos) in counts.items():
        print(f"{group}: {pos} positive, {neg} negative, {unsure} partial", file=sys.stderr)


if __name__ == "__main__":
    main()
