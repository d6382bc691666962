"""Fit the answerability gate (logic/answerability.py) and print per-set figures on the parts held out.

The question files given with --check are asked of the index at --check-index (the shared textbook):
every question of the first file and the odd-numbered questions of the others are fitted, the
even-numbered ones are held out. --sources adds public sets, held out as a check of how the gate
carries to other corpora: SQuAD 2.0 (answerable vs unanswerable over their own paragraphs) and MTRAG-UN
(ANSWERABLE vs UNANSWERABLE final questions, asked as written, over its passage pool).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from logic import answerability, ranking  # noqa: E402
from logic.confidence import fit  # noqa: E402
from nodes.retrieve import to_chunk  # noqa: E402
from tools import lexicon_store, manifest, qdrant_search, vectorstore  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402
from tools.ingest import ingest_folder  # noqa: E402

SHARED = ROOT.parent / "shared" / "eval"
TOP_K = 5
# The single-question features; off_topic is 0 on every question here (no conversation): conversation_gate.py fits it.
FITTED = tuple(f for f in answerability.FEATURES if f != "off_topic")


def _index(pages: dict[str, str], data_dir: Path, model: str) -> None:
    """Write pages as Markdown files and ingest them once (an existing index is reused)."""
    if (data_dir / "manifest.json").exists():
        return
    folder = data_dir.parent / f"{data_dir.name}-pages"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
    ingest_folder(folder, data_dir=data_dir, collection="docs", embeddings=get_embeddings(model),
                  embedding_model=model, progress=False)


def squad(work: Path, model: str) -> tuple[Path, list[dict[str, Any]]]:
    """Index the SQuAD subset's paragraphs; every question, answerable (1) or not (0)."""
    pages, rows = {}, []
    for article in json.loads((SHARED / "squad2" / "dev-v2.0.subset-3articles.json").read_text())["data"]:
        for n, paragraph in enumerate(article["paragraphs"]):
            pages[f"{article['title']}-{n:03d}.md"] = (
                f"# {article['title'].replace('_', ' ')} ({n})\n\n{paragraph['context']}\n")
            rows += [{"question": qa["question"], "label": int(not qa["is_impossible"]), "set": "squad-held-out"}
                     for qa in paragraph["qas"]]
    _index(pages, work / "squad", model)
    return work / "squad", rows


def mtrag(work: Path, model: str) -> tuple[Path, list[dict[str, Any]]]:
    """Index the MTRAG-UN pool; final questions labelled ANSWERABLE (1) or UNANSWERABLE (0)."""
    folder = SHARED / "mtrag" / "mtragun"
    pages = {}
    for n, line in enumerate((folder / "passages.govt-clapnq.jsonl").read_text().splitlines()):
        passage = json.loads(line)
        title, _, body = passage["text"].partition("\n")
        pages[f"p{n:04d}.md"] = f"# {title.strip()}\n\n{body.strip()}\n"
    rows = []
    for line in (folder / "reference.govt-clapnq.jsonl").read_text().splitlines():
        task = json.loads(line)
        label = task["answerability"][0]
        if label in ("ANSWERABLE", "UNANSWERABLE"):
            last = [m["text"] for m in task["input"] if m["speaker"] == "user"][-1]
            rows.append({"question": last, "label": int(label == "ANSWERABLE"),
                         "set": "mtrag-held-out"})
    _index(pages, work / "mtrag", model)
    return work / "mtrag", rows


def measure(data_dir: Path, rows: list[dict[str, Any]], model: str, collection: str = "docs") -> None:
    """Retrieve for each question as the agent does and record the gate's features (cached next to the index)."""
    cache = data_dir.parent / f"{data_dir.name}-features.json"
    known = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [r for r in rows if r["question"] not in known]
    if todo:
        _retrieve(data_dir, todo, model, collection)
        known.update({r["question"]: r["chunks"] for r in todo})
        cache.write_text(json.dumps(known))
    lexicon = lexicon_store.load(str(data_dir), collection)
    for row in rows:
        row["features"] = answerability.features(row["question"], known[row["question"]], lexicon)


def _retrieve(data_dir: Path, rows: list[dict[str, Any]], model: str, collection: str) -> None:
    """Retrieve and rank the top chunks for each question as the agent does."""
    embeddings = get_embeddings(model)
    client = vectorstore.open_client(str(data_dir))
    lexicon = lexicon_store.load(str(data_dir), collection)
    info = manifest.collection_info(str(data_dir), collection, model)
    for row in rows:
        vector = embeddings.embed_query(row["question"])
        hits = qdrant_search.search(client, collection, embeddings, vector, ranking.candidates_for(TOP_K),
                                  mode=manifest.retrieval_mode(info), text=row["question"])
        row["chunks"] = ranking.order(row["question"], [to_chunk(d.metadata, s) for d, s in hits], lexicon, TOP_K,
                                      ranking.page_sizes(d.metadata for d, _ in hits))
    client.close()


def report(rows: list[dict[str, Any]], weights: list[float], threshold: float) -> dict[str, dict[str, Any]]:
    """Per set: how many answerable questions pass the gate and how many others it refuses."""
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        x = sum(w * row["features"][f] for w, f in zip(weights[1:], FITTED, strict=True))
        passed = answerability._sigmoid(weights[0] + x) >= threshold
        entry = table.setdefault(row["set"], {"answered_answerable": [0, 0], "refused_unanswerable": [0, 0]})
        key = "answered_answerable" if row["label"] else "refused_unanswerable"
        entry[key][0] += passed if row["label"] else not passed
        entry[key][1] += 1
    return table


def best_threshold(rows: list[dict[str, Any]], weights: list[float]) -> float:
    """Return the threshold with the best balanced accuracy on the training rows."""
    def balanced(t: float) -> float:
        cells = report(rows, weights, t).values()
        yes = sum(c["answered_answerable"][0] for c in cells) / max(sum(c["answered_answerable"][1] for c in cells), 1)
        no = sum(c["refused_unanswerable"][0] for c in cells) / max(sum(c["refused_unanswerable"][1] for c in cells), 1)
        return (yes + no) / 2
    return max((t / 100 for t in range(5, 96)), key=balanced)


def main() -> None:
    """Measure features, fit, and print the coefficients and per-set figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, default=Path("/tmp/rag-agent-answerability"))
    parser.add_argument("--embedding-model", default=LOCAL_MODEL)
    parser.add_argument("--check", type=Path, nargs="*", default=[], help="held-out question files (JSON Lines)")
    parser.add_argument("--check-index", type=Path, help="data dir of the index the --check questions ask")
    parser.add_argument("--l2", type=float, default=0.1)
    parser.add_argument("--sources", nargs="*", default=[], choices=["squad", "mtrag"],
                        help="public sets to measure and report (held out)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    checks = [{"question": q["question"], "label": int(q.get("expected") == "GROUNDED"),
               "set": f"{path.stem}-{'fit' if not k or n % 2 else 'held-out'}"}
              for k, path in enumerate(args.check)
              for n, q in enumerate(json.loads(line) for line in path.read_text().splitlines() if line.strip())
              if q.get("question") and not q.get("selection_file")]
    if checks and args.check_index:
        measure(args.check_index, checks, args.embedding_model)
    rows: list[dict[str, Any]] = []
    for build in [{"squad": squad, "mtrag": mtrag}[name] for name in args.sources]:
        data_dir, part = build(args.work, args.embedding_model)
        measure(data_dir, part, args.embedding_model)
        rows += part
    train = [r for r in checks if r["set"].endswith("-fit")]
    if not train:
        return
    weights = fit([(tuple(r["features"][f] for f in FITTED), bool(r["label"])) for r in train],
                  l2=args.l2)
    threshold = best_threshold(train, weights)
    print(json.dumps({"intercept": round(weights[0], 3),
                      "weights": {f: round(w, 3) for f, w in zip(FITTED, weights[1:], strict=True)},
                      "threshold": threshold, "l2": args.l2}))
    shipped = [answerability.INTERCEPT, *(answerability.WEIGHTS[f] for f in FITTED)]
    print(f"shipped coefficients, threshold {answerability.THRESHOLD}:")
    for name, cells in report(checks + rows, shipped, answerability.THRESHOLD).items():
        print(" ", name, {k: f"{v[0]}/{v[1]}" for k, v in cells.items()})
    print("this fit:")
    for name, cells in report(checks + rows, weights, threshold).items():
        print(name, {k: f"{v[0]}/{v[1]}" for k, v in cells.items()})


if __name__ == "__main__":
    main()
