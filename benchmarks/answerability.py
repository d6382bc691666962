"""Fit the answerability gate (logic/answerability.py) and print per-set figures on the parts held out.

The question files given with --check are asked of the index at --check-index (the shared textbook):
every question of the first file and the odd-numbered questions of the others are fitted, the
even-numbered ones are held out. --sites DIR (a `benchmarks/sites.py` work dir: DIR/<site>/data) asks every
single question of each shared docs site and the textbook of that site's index and fits leaving one site out:
on three sites, threshold by balanced accuracy there (or --answer-floor), judged on the fourth; with --heldout DIR
(a `benchmarks/sites.py --heldout` work dir) it also prints the shipped gate on the held-out sites, from cached
retrieval in about a minute: the quick check of a gate change before the end-to-end benchmarks. --sources
adds public sets, held out as a check of how the gate carries to other corpora: SQuAD 2.0 (answerable vs
unanswerable over their own paragraphs) and MTRAG-UN (ANSWERABLE vs UNANSWERABLE final questions, asked as
written, over its passage pool).
"""

from __future__ import annotations

import argparse
import json
import math
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
from logic.hygiene import to_chunk  # noqa: E402
from logic.lexical import matches, terms  # noqa: E402
from tools import lexicon_store, manifest, search  # noqa: E402
from tools.embedded_index import passage_vectors  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402
from tools.ingest import ingest_folder  # noqa: E402
from tools.reader import read_best  # noqa: E402
from tools.settings import overridden  # noqa: E402
from tools.words import english  # noqa: E402

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
        row["features"] = answerability.features(row["question"], known[row["question"]], lexicon,
                                                 ordinary=english())


def _retrieve(data_dir: Path, rows: list[dict[str, Any]], model: str, collection: str) -> None:
    """Retrieve and rank the top chunks for each question as the agent does."""
    embeddings = get_embeddings(model)
    lexicon = lexicon_store.load(str(data_dir), collection)
    info = manifest.collection_info(str(data_dir), collection, model)
    for row in rows:
        vector = embeddings.embed_query(row["question"])
        # As the agent searches: the embedded snapshot, or the Qdrant server with QDRANT_URL.
        hits = search.find(str(data_dir), collection, embeddings, vector, ranking.candidates_for(TOP_K),
                           mode=manifest.retrieval_mode(info), text=row["question"])
        row["chunks"] = ranking.order(row["question"], [to_chunk(d.metadata, s) for d, s in hits], lexicon, TOP_K,
                                      ranking.page_sizes(d.metadata for d, _ in hits))


def site_rows(shared: Path, site: str) -> list[dict[str, Any]]:
    """Return a site's single questions: in-scope (label 1), near miss or far off (label 0), by `kind`."""
    if site == "textbook":
        files = [(shared / "textbook" / "textbook-questions.jsonl", "far_off"),
                 (shared / "textbook" / "textbook-nearmiss.jsonl", "near_miss")]
    else:
        files = [(shared / "sites" / site / "questions.jsonl", "")]
    # The project's own sets for the same corpora (benchmarks/tuning/): questions as users write them, chatty, with
    # near misses in the site's own words; their kinds carry "_users" so each set's figures stay apart.
    users = ROOT / "benchmarks" / "tuning" / site / "questions.jsonl"
    files += [(users, "_users")] if users.is_file() else []
    return _labelled(files, site)


def _labelled(files: list[tuple[Path, str]], site: str) -> list[dict[str, Any]]:
    """Return the single questions of (file, refusal kind) pairs, each with its label and kind."""
    rows = []
    for path, refusal in files:
        for line in path.read_text().splitlines():
            q = json.loads(line) if line.strip() else {}
            if not q.get("question") or q.get("selection_file"):
                continue
            answerable = q.get("expected") == "GROUNDED"
            if refusal == "_users":
                kind = ("in_scope" if answerable else "near_miss") + refusal
            elif answerable:
                kind = "in_scope"
            else:
                kind = refusal or ("near_miss" if q.get("kind") == "near_miss" else "far_off")
            rows.append({"question": q["question"], "label": int(answerable), "set": site, "kind": kind})
    return rows


def heldout_rows(folder: Path) -> list[dict[str, Any]]:
    """Return a held-out site's single questions (benchmarks/heldout/<site>/questions.jsonl), labelled as site_rows."""
    return _labelled([(folder / "questions.jsonl", "")], folder.name)


def read_site(data_dir: Path, rows: list[dict[str, Any]], model: str, reader: Path | None,
              collection: str = "docs") -> None:
    """Add the reading model's `read` feature to each row, as the retrieve node reads (reader: a model file)."""
    embeddings = get_embeddings(model)
    with overridden(reader_model=str(reader) if reader else None):
        store = passage_vectors(str(data_dir), collection, model)
        for row in rows:
            found = read_best(row["question"], row["chunks"][:answerability.DEPTH], embeddings, store)
            row["features"]["read"] = answerability.log_odds(found[0]["answers"]) if found else -answerability.READ_CLIP


def measure_site(data_dir: Path, rows: list[dict[str, Any]], model: str, cache: Path,
                 collection: str = "docs") -> None:
    """Retrieve for each question as the retrieve node does (tools.search, ranking.order) and record the features."""
    known = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [r for r in rows if r["question"] not in known]
    if todo:
        embeddings = get_embeddings(model)
        info = manifest.collection_info(str(data_dir), collection, model) or {}
        lexicon = lexicon_store.load(str(data_dir), collection)
        for row in todo:
            vector = embeddings.embed_query(row["question"])
            hits = search.find(data_dir, collection, embeddings, vector, ranking.candidates_for(TOP_K),
                               mode=manifest.retrieval_mode(info), text=row["question"])
            known[row["question"]] = ranking.order(row["question"], [to_chunk(d.metadata, s) for d, s in hits],
                                                   lexicon, TOP_K, ranking.page_sizes(d.metadata for d, _ in hits))
        cache.write_text(json.dumps(known))
    lexicon = lexicon_store.load(str(data_dir), collection)
    for row in rows:
        row["chunks"] = known[row["question"]]
        row["features"] = answerability.features(row["question"], known[row["question"]], lexicon,
                                                 ordinary=english())
        row["features"].update(candidates(row["question"], known[row["question"]], lexicon))


def candidates(query: str, best: list[Any], lexicon: Any) -> dict[str, float]:
    """Candidate features not (yet) in the gate, measured to see whether they carry across sites."""
    top = best[:answerability.DEPTH]
    query_terms = list(dict.fromkeys(terms(query)))
    if not top or not query_terms:
        return {"rarest_missing": 0.0, "union_missing": 0.0}
    joined = " ".join(answerability.section_text(c) for c in top).lower()
    ceiling = math.log((lexicon.chunks + 1) / 0.5)
    missing = [lexicon.idf(t) for t in query_terms if lexicon.df.get(t, 0) and not matches(t, joined)]
    known = [t for t in query_terms if lexicon.df.get(t, 0)]
    weights = {t: lexicon.idf(t) for t in query_terms}
    total = sum(weights.values()) or 1.0
    words = english()
    unseen = [t for t in query_terms if not lexicon.df.get(t, 0) and not matches(t, joined)]
    rare = [t for t in unseen if t not in words and f"{t}s" not in words]
    return {"rarest_missing": round(max(missing, default=0.0) / ceiling, 4),
            "union_missing": round(1 - lexicon.coverage(query_terms, joined), 4),
            "coverage_known": round(max((lexicon.coverage(known, answerability.section_text(c)) for c in top),
                                        default=0.0), 4) if known else 0.0,
            "unknown_rare": round(sum(weights[t] for t in rare) / total, 4),
            "unknown_common": round(sum(weights[t] for t in unseen if t not in rare) / total, 4)}


def per_kind(rows: list[dict[str, Any]], weights: list[float], threshold: float,
             names: tuple[str, ...]) -> dict[str, str]:
    """Share of in-scope questions answered and of near misses and far-off questions refused."""
    counts: dict[str, list[int]] = {}
    for row in rows:
        x = weights[0] + sum(w * row["features"][f] for w, f in zip(weights[1:], names, strict=True))
        p = answerability._sigmoid(x) * (answerability.TYPE_MISSING_FACTOR if row["features"].get("type_missing")
                                         else 1.0)
        cell = counts.setdefault(row["kind"], [0, 0])
        cell[0] += (p >= threshold) == bool(row["label"])
        cell[1] += 1
    return {k: f"{counts[k][0]}/{counts[k][1]} = {counts[k][0] / counts[k][1]:.2f}"
            for k in ("in_scope", "near_miss", "far_off", "in_scope_users", "near_miss_users") if k in counts}


def balanced_threshold(rows: list[dict[str, Any]], weights: list[float], names: tuple[str, ...]) -> float:
    """Return the threshold with the best balanced accuracy (sites weighed alike) on the training rows."""
    def score(t: float) -> float:
        total = 0.0
        for site in {r["set"] for r in rows}:
            mine = [r for r in rows if r["set"] == site]
            cells = per_kind(mine, weights, t, names)
            shares = [float(v.rsplit("= ", 1)[1]) for v in cells.values()]
            total += sum(shares) / len(shares)
        return total
    return max((t / 100 for t in range(5, 96)), key=score)


def answering_threshold(rows: list[dict[str, Any]], weights: list[float], names: tuple[str, ...],
                        floor: float) -> float:
    """Return the highest threshold at which every training site still answers `floor` of its in-scope questions."""
    def worst(t: float) -> float:
        return min(float(per_kind([r for r in rows if r["set"] == s], weights, t, names)["in_scope"].rsplit("= ", 1)[1])
                   for s in {r["set"] for r in rows})
    return max((t / 100 for t in range(5, 96) if worst(t / 100) >= floor), default=0.05)


def leave_one_site_out(rows: list[dict[str, Any]], names: tuple[str, ...], l2: float,
                       floor: float | None = None) -> None:
    """Fit on all sites but one, threshold there, and print the left-out site's figures; then fit on all."""
    shipped = [answerability.INTERCEPT, *(answerability.WEIGHTS[f] for f in FITTED)]
    sites = sorted({r["set"] for r in rows})
    print(f"features {names}, l2 {l2}")
    for site in sites:
        train = [r for r in rows if r["set"] != site]
        mine = [r for r in rows if r["set"] == site]
        weights = fit([(tuple(r["features"][f] for f in names), bool(r["label"])) for r in train], l2=l2)
        threshold = balanced_threshold(train, weights, names) if floor is None else \
            answering_threshold(train, weights, names, floor)
        print(f"  {site:10s} shipped {per_kind(mine, shipped, answerability.THRESHOLD, FITTED)}")
        print(f"  {site:10s} left out (t={threshold:.2f}) {per_kind(mine, weights, threshold, names)}")
    weights = fit([(tuple(r["features"][f] for f in names), bool(r["label"])) for r in rows], l2=l2)
    threshold = balanced_threshold(rows, weights, names) if floor is None else \
        answering_threshold(rows, weights, names, floor)
    print("  all sites:", json.dumps({"intercept": round(weights[0], 3), "threshold": threshold,
                                      "weights": {f: round(w, 3) for f, w in zip(names, weights[1:], strict=True)}}))
    for site in sites:
        mine = [r for r in rows if r["set"] == site]
        print(f"  {site:10s} fitted on all {per_kind(mine, weights, threshold, names)}")


def veto_grid(rows: list[dict[str, Any]]) -> None:
    """Print, for each reading weight and centre, the shipped gate's figures with the reader's veto on each site.

    The reader's verdict lowers the gate's log-odds by weight × (centre − read) when read is below the centre
    (logic/answerability.py); weight 0 is the gate without it. Rows: every site's single questions, each read
    by the model trained without that site (--reader-dir), so the choice of two numbers is all that sees the site.
    """
    saved = answerability.READ_WEIGHT, answerability.READ_CENTRE
    print("reading veto: weight centre | right decisions | per site in-scope answered / near misses / far off refused")
    try:
        for weight in (0.0, 0.3, 0.5, 0.7, 1.0):
            for centre in (-3.0, -2.0, -1.0, 0.0):
                answerability.READ_WEIGHT, answerability.READ_CENTRE = weight, centre
                cells, right = [], 0
                for site in sorted({r["set"] for r in rows}):
                    shares = []
                    for kind in ("in_scope", "near_miss", "far_off"):
                        mine = [r for r in rows if r["set"] == site and r["kind"] == kind]
                        ok = sum((answerability.gate_score(r["features"]) >= answerability.THRESHOLD)
                                 == bool(r["label"]) for r in mine)
                        right += ok
                        shares.append(f"{ok / len(mine):.2f}")
                    cells.append(f"{site} {'/'.join(shares)}")
                print(f"  {weight:.1f} {centre:+.0f} | {right} | " + " | ".join(cells))
                if weight == 0.0:
                    break
    finally:
        answerability.READ_WEIGHT, answerability.READ_CENTRE = saved


def report(rows: list[dict[str, Any]], weights: list[float], threshold: float) -> dict[str, dict[str, Any]]:
    """Per set: how many answerable questions pass the gate and how many others it refuses."""
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        x = sum(w * row["features"][f] for w, f in zip(weights[1:], FITTED, strict=True))
        # As the gate scores: the asked-type rule scales the fitted probability (logic/answerability.py).
        factor = answerability.TYPE_MISSING_FACTOR if row["features"].get("type_missing") else 1.0
        passed = answerability._sigmoid(weights[0] + x) * factor >= threshold
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
    parser.add_argument("--sites", type=Path, help="a benchmarks/sites.py work dir: fit leaving one site out")
    parser.add_argument("--answer-floor", type=float, help="threshold: the highest at which every training site "
                        "answers this share of its in-scope questions (default: best balanced accuracy)")
    parser.add_argument("--features", nargs="*", default=list(FITTED), help="features the --sites fit uses")
    parser.add_argument("--heldout", type=Path, help="with --sites: also print the shipped gate on the held-out "
                        "sites indexed under DIR (a `benchmarks/sites.py --heldout` work dir); never fitted on")
    parser.add_argument("--reader-dir", type=Path, help="with --sites: add the `read` feature, each site read by "
                        "DIR/reader-<site>.onnx (a reading model trained without it)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.sites:
        site_data: list[dict[str, Any]] = []
        for site in ("mkdocs", "pydantic", "rust-book", "textbook"):
            part = site_rows(SHARED, site)
            measure_site(args.sites / site / "data", part, args.embedding_model, args.work / f"{site}-chunks.json")
            if args.reader_dir:
                reader = args.reader_dir / f"reader-{site}.onnx"
                read_site(args.sites / site / "data", part, args.embedding_model, reader)
            site_data += part
        leave_one_site_out(site_data, tuple(args.features), args.l2, args.answer_floor)
        shipped = [answerability.INTERCEPT, *(answerability.WEIGHTS[f] for f in FITTED)]
        for folder in sorted(p for p in (ROOT / "benchmarks" / "heldout").iterdir() if p.is_dir()) \
                if args.heldout else []:
            if (args.heldout / folder.name / "data").is_dir():
                part = heldout_rows(folder)
                measure_site(args.heldout / folder.name / "data", part, args.embedding_model,
                             args.work / f"{folder.name}-chunks.json")
                figures = per_kind(part, shipped, answerability.THRESHOLD, FITTED)
                print(f"  {folder.name:10s} shipped, held out {figures}")
        if args.reader_dir:
            veto_grid(site_data)
        return
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
