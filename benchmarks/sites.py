"""Multi-site benchmark: each shared docs site (and the textbook) ingested and asked its sets; one row per site.

For every site under ../shared/eval/sites (a folder with corpus/ and questions.jsonl) and the textbook,
the corpus is ingested into its own data folder under --work-dir (reused while the corpus, the embedder
and the source of the ingest code are unchanged; rebuilt from scratch otherwise, since the incremental
ingest re-chunks a page only when its text changes), then its questions, conversations and selection
cases run through the real graph with rag_agent/evaluation/evaluate.py. Offline defaults: the bundled embedder,
extractive answers, every API key and service URL removed from the environment first.

Figures per site (passage hit, follow-ups and keyword calibration: rag_agent/evaluation/passages.py):
hit@5 (a top-5 chunk from a gold page), passage hit@5 (a top-5 chunk holding half the answer keywords),
in-scope answered, answer keyword recall, near-miss and far-off abstention (single questions only),
follow-up turns right (conversation turns after the first), answers with defects (every turn), ECE of
the confidence against "the answer holds its keywords", and the share of answers at confidence >= 0.9
that hold them. The textbook's sets: textbook-questions (in-scope, far-off), textbook-nearmiss (near
misses, in-scope with keywords), its conversations and selection cases; not the 224 SQuAD questions.
`--answers` asks only the in-scope questions that name answer keywords: keyword recall over every set in about a
minute, the quick check of a change to how answers are chosen (then run the whole benchmark).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Offline, before any import reads the environment: the figures are the embedded defaults'.
for _name in [n for n in os.environ if n.endswith(("_API_KEY", "_BASE_URL")) or n == "QDRANT_URL"]:
    del os.environ[_name]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ["LANGSMITH_TRACING"] = "false"
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from benchmarks._common import machine  # noqa: E402
from graph.context import Context  # noqa: E402
from rag_agent.evaluation import evaluate  # noqa: E402
from rag_agent.evaluation import figures as eval_figures  # noqa: E402
from rag_agent.evaluation import passages as eval_passages  # noqa: E402
from rag_agent.service import Agent  # noqa: E402
from tools import embedded_index  # noqa: E402
from tools.embeddings import LOCAL_MODEL, get_embeddings  # noqa: E402
from tools.ingest import ingest_folder  # noqa: E402
from tools.settings import overridden  # noqa: E402

SHARED = Path(os.environ.get("RAG_AGENT_SHARED", ROOT.parent / "shared")) / "eval"
COLLECTION = "docs"
# Table columns: (key in a site's figures, header).
COLUMNS = [("hit_at_5", "hit@5"), ("passage_hit_at_5", "passage hit@5"), ("in_scope_answered", "in-scope answered"),
           ("answer_keyword_recall", "keyword recall"), ("near_miss_abstention", "near-miss abstention"),
           ("far_off_abstention", "far-off abstention"), ("followups_right_share", "follow-ups right"),
           ("answers_with_defects", "answers with defects"), ("keyword_ece", "ECE"),
           ("high_confidence_holding", "conf ≥ 0.9 holding")]


@dataclass
class Site:
    """One corpus and its labelled sets."""

    name: str
    corpus: Path
    questions: list[Path]
    near_miss_files: list[Path]  # files whose not-found questions are all near misses
    conversations: Path | None
    selection: Path | None
    index: str = ""  # the folder under --work-dir its index lives in, when another set shares it (default: name)


def _site(folder: Path, corpus: Path) -> Site:
    """Return a site whose sets are in `folder` in the shared sites' layout, its pages in `corpus`."""
    extra = {name: folder / f"{name}.jsonl" for name in ("conversations", "selection")}
    return Site(folder.name, corpus, [folder / "questions.jsonl"], [],
                *(p if p.is_file() else None for p in extra.values()))


def known_sites(shared: Path) -> dict[str, Site]:
    """Return every site under shared/sites, then the textbook, by name."""
    found = {}
    for folder in sorted((shared / "sites").iterdir()) if (shared / "sites").is_dir() else []:
        if (folder / "corpus").is_dir() and (folder / "questions.jsonl").is_file():
            found[folder.name] = _site(folder, folder / "corpus")
    book = shared / "textbook"
    if (book / "corpus").is_dir():
        found["textbook"] = Site("textbook", book / "corpus", [book / "textbook-questions.jsonl"],
                                 [book / "textbook-nearmiss.jsonl"], book / "textbook-conversations.jsonl",
                                 book / "textbook-selection.jsonl")
    return found


HELDOUT = ROOT / "benchmarks" / "heldout"


def heldout_sites() -> dict[str, Site]:
    """Return the held-out sites: sets in benchmarks/heldout/<name>/, corpus where corpus.txt says it is installed.

    Their sets were written before the agent was run on them, and nothing is tuned on them: they tell whether
    a change carries to a site nobody tuned on. A site whose corpus is not installed here is left out.
    """
    found = {}
    for folder in sorted(p for p in HELDOUT.iterdir() if p.is_dir()) if HELDOUT.is_dir() else []:
        corpus = Path((folder / "corpus.txt").read_text().strip()) if (folder / "corpus.txt").is_file() else None
        if corpus is None or not corpus.is_dir():
            print(f"{folder.name}: held-out corpus not installed here ({corpus}); skipped", file=sys.stderr)
            continue
        found[folder.name] = _site(folder, corpus)
    return found


TUNING = ROOT / "benchmarks" / "tuning"


def _if_file(path: Path) -> Path | None:
    """Return the path when the file exists, else None."""
    return path if path.is_file() else None


def users_sites(shared: Path) -> dict[str, Site]:
    """Return the project's own tuning sets (benchmarks/tuning/<site>/) as sites <site>-users on the shared indexes."""
    known = known_sites(shared)
    return {f"{name}-users": Site(f"{name}-users", known[name].corpus, [TUNING / name / "questions.jsonl"], [],
                                  _if_file(TUNING / name / "conversations.jsonl"), None, index=name)
            for name in sorted(p.name for p in TUNING.iterdir() if (p / "questions.jsonl").is_file())
            if name in known} if TUNING.is_dir() else {}


def _first(rows: list[dict[str, Any]], limit: int | None, key: Any) -> list[dict[str, Any]]:
    """Keep the first `limit` rows of each group `key` names (all of them without a limit)."""
    if limit is None:
        return rows
    seen: dict[Any, int] = {}
    kept = []
    for row in rows:
        group = key(row)
        if seen.get(group, 0) < limit:
            seen[group] = seen.get(group, 0) + 1
            kept.append(row)
    return kept


# What people type around a question in a chat box; `--courtesies` wraps every single question in them.
OPENERS = ("Hi, ", "Hello! ", "Hey there, ", "", "Good morning. ", "Hi team, quick question: ", "ok so, ")
CLOSERS = (" Thanks!", "", " thx", "\n\nThanks in advance.", "", " Cheers")
# ...and before a follow-up: thanks for the answer before it.
FOLLOW_UP_OPENERS = ("Thanks! ", "ok, ", "Great. ", "Thank you. ", "Cool, ")


def courteous(question: dict[str, Any], openers: tuple[str, ...] = OPENERS) -> dict[str, Any]:
    """Return the question with a greeting before it or thanks after it (or both), the same for the same id."""
    pick = int(hashlib.sha256(str(question.get("id", "")).encode()).hexdigest(), 16)
    opener, closer = openers[pick % len(openers)], CLOSERS[pick // len(openers) % len(CLOSERS)]
    if not opener and not closer:
        opener = openers[0]
    text = question["question"]
    lower = opener.rstrip().endswith((",", ":")) and text[1:2].islower()  # "Hi, how …", "Hello! How …"
    return {**question, "question": opener + (text[:1].lower() + text[1:] if lower else text) + closer}


def load_sets(site: Site, limit: int | None, answers: bool = False,
              courtesies: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the site's questions (single and selection, tagged) and conversations (turns tagged).

    With `answers`, only the in-scope single questions that name answer keywords, and no conversation; with
    `courtesies`, each single question comes with a greeting or thanks around it (`courteous`), and each follow-up
    with thanks for the answer before it.
    """
    questions = []
    for path in [*site.questions, *site.near_miss_files]:
        for q in evaluate.load_jsonl(path):
            out = q.get("expected") == "NOT_FOUND" or (not q.get("gold") and not q.get("expected"))
            near = out and (q.get("kind") == "near_miss" or path in site.near_miss_files)
            questions.append({**(courteous(q) if courtesies else q), "set": "questions", "near_miss": near})
    if answers:
        kept = [q for q in questions if q.get("expected") == "GROUNDED" and q.get("answer_keywords")]
        return _first(kept, limit, lambda q: q.get("expected")), []
    questions = _first(questions, limit, lambda q: (q.get("expected"), q["near_miss"]))
    if site.selection:
        chosen = [{**q, "set": "selection"} for q in evaluate.load_jsonl(site.selection)]
        questions += _first(chosen, limit, lambda q: q.get("expected"))
    conversations = []
    for conv in evaluate.load_jsonl(site.conversations) if site.conversations else []:
        turns = [{**t, "set": "conversation"} for t in conv["turns"]]
        if courtesies:  # a follow-up is often thanks for the answer before it, then the next question
            turns = [t if n == 0 else courteous({**t, "id": f"{conv['id']}-{n}"}, FOLLOW_UP_OPENERS)
                     for n, t in enumerate(turns)]
        conversations.append({**conv, "turns": turns})
    return questions, conversations[:limit] if limit is not None else conversations


def ingest_code_digest() -> str:
    """Hash the source of every project module the ingest pipeline imports (run in a fresh interpreter)."""
    # Ingest loads the bundled embedder (and its model files' locator) only when it first embeds: imported here
    # too, or a change to how chunks and passages are embedded would leave a stale index in use.
    probe = ("import sys, tools.ingest, tools.embeddings, tools.onnx_embedder, logic.bundled_model; "
             "from pathlib import Path; r = Path.cwd().resolve(); "
             "print('\\n'.join(sorted(m.__file__ for m in list(sys.modules.values()) "
             "if getattr(m, '__file__', None) and Path(m.__file__).resolve().is_relative_to(r) "
             "and '.venv' not in Path(m.__file__).parts)))")
    files = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    digest = hashlib.sha256()
    for name in files.stdout.split():
        digest.update(Path(name).resolve().relative_to(ROOT).as_posix().encode() + b"\0" + Path(name).read_bytes())
    return digest.hexdigest()


def corpus_digest(corpus: Path) -> str:
    """Hash every file of a corpus: its path and its bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        digest.update(path.relative_to(corpus).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def ensure_index(site: Site, folder: Path, model: str, code: str) -> str:
    """Ingest the site into folder/data unless the index there was built from the same corpus, code and embedder."""
    stamp = json.dumps({"corpus": corpus_digest(site.corpus), "code": code, "embedding_model": model})
    marker, data_dir = folder / "index-stamp.json", folder / "data"
    if marker.is_file() and marker.read_text() == stamp and (data_dir / "manifest.json").is_file():
        return "reused"
    folder.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)  # a run stopped mid-ingest must not leave the old stamp on a new index
    report = ingest_folder(site.corpus, data_dir=data_dir, collection=COLLECTION, embeddings=get_embeddings(model),
                           embedding_model=model, recreate=True, progress=False)
    marker.write_text(stamp)
    return f"ingested {report.chunks} chunks in {report.seconds:.0f}s"


def chunk_texts(data_dir: Path) -> dict[str, str]:
    """Return every chunk's quoted text by chunk id, read from the collection's embedded export."""
    snap = embedded_index.current(data_dir, COLLECTION)
    if snap is None:
        return {}
    texts = {}
    for row in range(snap.rows):
        doc = snap.document(row)
        texts[str(doc.metadata.get("chunk_id", ""))] = str(doc.metadata.get("text") or doc.page_content)
    return texts


def _share(values: list[bool]) -> float | None:
    """Return the share of true values, rounded (None for none)."""
    return round(sum(values) / len(values), 4) if values else None


def figures(records: list[dict[str, Any]], texts: dict[str, str]) -> dict[str, Any]:
    """Compute one site's row from its turn records."""
    single = [r for r in records if r["set"] == "questions"]
    talk = [r for r in records if r["set"] == "conversation"]
    chosen = [r for r in records if r["set"] == "selection"]
    base = evaluate.metrics(single)  # single questions only: conversation turns are not far-off questions
    inscope = [r for r in single if r["expected"] == "GROUNDED"]
    return {
        "hit_at_5": base["hit_at_5"], **eval_passages.passage_hits(single, texts),
        "in_scope_answered": _share([r["status"] == "grounded" for r in inscope]),
        "answer_keyword_recall": base["answer_keyword_recall"],
        "near_miss_abstention": base["near_miss_abstention"], "far_off_abstention": base["far_off_abstention"],
        **eval_figures.followups(talk),
        "answers_with_defects": eval_figures.answers(records)["answers_with_defects"],
        **eval_passages.keyword_calibration(records),
        **eval_passages.missed_passages([*single, *talk], texts),
        "count_in_scope": len(inscope), "count_near_miss": base["count_near_miss"],
        "count_far_off": base["count_far_off"], "count_turns": len(records),
        **eval_figures.selection_figures(chosen),
        "page_ece": base["confidence_ece"], "citation_validity": base["citation_validity"],
        "errors": sum(r["status"] == "error" for r in records), "latency_p50_ms": base["latency_p50_ms"],
    }


def dump_rows(name: str, records: list[dict[str, Any]], texts: dict[str, str]) -> list[dict[str, Any]]:
    """Shape each turn for a person to read: the answer, its status and confidence, what it cites."""
    rows = []
    for r in records:
        keywords = r["answer_keywords"]
        rows.append({
            "site": name, "id": r["id"], "turn": r["turn"], "set": r["set"], "kind": r["kind"],
            "near_miss": r["near_miss"], "question": r["question"], "retrieval_query": r["retrieval_query"],
            "expected": r["expected"], "status": r["status"], "confidence": r["confidence"],
            "gate_score": r["gate_score"], "answer": r["answer"], "answer_keywords": keywords,
            "keyword_recall": r["keyword_recall"],
            "holds_keywords": eval_passages.holds(eval_figures.answer_given(r["answer"], r["status"]), keywords)
            if keywords else None,
            "gold": r["gold"], "page_rank": next((i for i, x in enumerate(r["retrieved"], 1)
                                                  if x["source"] in r["gold"]), None),
            "passage_rank": eval_passages.passage_rank(r, texts) if keywords else None,
            "citations": [{"source": c["source"], "text": texts.get(c["chunk_id"], "")[:600]} for c in r["citations"]],
            "retrieved": [x["source"] for x in r["retrieved"]],
            "retrieved_relevance": [x.get("relevance") for x in r["retrieved"]],
            "retrieved_ids": r.get("retrieved_ids") or [],
        })
    return rows


def run_site(site: Site, work: Path, model: str, code: str, limit: int | None,
             readers: Path | None = None, answers: bool = False,
             courtesies: bool = False) -> tuple[dict[str, Any], list[Any]]:
    """Index one site if needed, ask its sets, and return its figures and its turns for the dump.

    With `readers`, the site is read by readers/reader-<site>.onnx, a reading model trained without it.
    """
    folder = work / (site.index or site.name)
    how = ensure_index(site, folder, model, code)
    print(f"{site.name}: index {how}", file=sys.stderr)
    questions, conversations = load_sets(site, limit, answers, courtesies)
    reader = {}
    if readers is not None:
        if not (readers / f"reader-{site.name}.onnx").is_file():
            sys.exit(f"no reading model trained without {site.name}: {readers}/reader-{site.name}.onnx")
        reader = {"reader_model": str(readers / f"reader-{site.name}.onnx")}
    with overridden(data_dir=str(folder / "data"), collection=COLLECTION, records="off", **reader):
        ctx = Context(collection=COLLECTION, embedding_model=model, answer_mode="extractive")
        with Agent(ctx, InMemorySaver()) as agent:
            records = evaluate.run(agent, questions, conversations, site.corpus)
        texts = chunk_texts(folder / "data")
    return figures(records, texts), dump_rows(site.name, records, texts)


def macro(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Average each table figure over the sites that have it."""
    out = {}
    for key, _ in COLUMNS:
        values = [row[key] for row in rows.values() if isinstance(row.get(key), int | float)]
        out[key] = round(statistics.fmean(values), 4) if values else None
    return out


def _cell(key: str, row: dict[str, Any]) -> str:
    """Format one table cell; follow-ups as right/total on a site's row."""
    value = row.get(key)
    if key == "followups_right_share" and "count_followup_turns" in row:
        return f"{row['followups_right']}/{row['count_followup_turns']}"
    if key == "high_confidence_holding" and "count_high_confidence" in row:
        return "n/a (0)" if value is None else f"{value:.2f} ({row['count_high_confidence']})"
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def render(rows: dict[str, dict[str, Any]], average: dict[str, Any]) -> str:
    """Render the sites and their macro average as a Markdown table."""
    lines = ["| site | " + " | ".join(h for _, h in COLUMNS) + " |", "| --- |" + " ---: |" * len(COLUMNS)]
    for name, row in rows.items():
        lines.append(f"| {name} | " + " | ".join(_cell(k, row) for k, _ in COLUMNS) + " |")
    lines.append("| **macro average** | " + " | ".join(_cell(k, average) for k, _ in COLUMNS) + " |")
    # Where to look next: retrieval, the choice of section, or the choice of passage within the section.
    misses = ", ".join(f"{name} {row.get('misses_not_retrieved', 0)}/{row.get('misses_not_quoted', 0)}/"
                       f"{row.get('misses_other_part', 0)}" for name, row in rows.items())
    lines.append(f"\nAnswers missing their keywords, by where the passage holding them was (not retrieved / retrieved, "
                 f"not quoted / quoted, another part chosen): {misses}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sites one after another and print their rows and the macro average."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", help="comma-separated sites to run (default: all)")
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared eval folder (default ../shared/eval)")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/rag-agent-sites"),
                        help="where each site's index is kept between runs")
    parser.add_argument("--embedding-model", default=LOCAL_MODEL)
    parser.add_argument("--limit", type=int, help="ask only the first N questions of each kind (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print one JSON object, nothing else, on stdout")
    parser.add_argument("--dump", type=Path, help="write every turn (answer, status, confidence, citations) here")
    parser.add_argument("--reader-dir", type=Path,
                        help="read each site with DIR/reader-<site>.onnx, a reading model trained without that site "
                             "(training/README.md), instead of the bundled one trained on every site")
    parser.add_argument("--heldout", action="store_true",
                        help="run the held-out sites of benchmarks/heldout/ (never tuned on), not the shared ones")
    parser.add_argument("--answers", action="store_true",
                        help="ask only the in-scope questions that name answer keywords (no near misses, far-off "
                             "questions, selection cases or conversations): a quick check of how answers are chosen")
    parser.add_argument("--users", action="store_true",
                        help="run the project's own tuning sets of benchmarks/tuning/ (questions as users write them) "
                             "against the shared sites' indexes")
    parser.add_argument("--courtesies", action="store_true",
                        help="ask every single question with a greeting before it or thanks after it (\"Hi, …\", "
                             "\"… Thanks!\"), and every follow-up after thanks (\"Thanks! …\"): the figures should "
                             "be the plain run's")
    args = parser.parse_args(argv)
    available = (heldout_sites() if args.heldout else users_sites(args.shared) if args.users
                 else known_sites(args.shared))
    names = args.sites.split(",") if args.sites else list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        parser.error(f"unknown site(s) {', '.join(unknown)}; known: {', '.join(available)}")
    rows, turns = {}, []
    code = ingest_code_digest()
    with contextlib.redirect_stdout(sys.stderr):  # with --json, stdout carries the JSON alone
        for name in names:
            rows[name], dumped = run_site(available[name], args.work_dir, args.embedding_model, code, args.limit,
                                          args.reader_dir, args.answers, args.courtesies)
            turns += dumped
    average = macro(rows)
    if args.dump:
        args.dump.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in turns))
    if args.json:
        print(json.dumps({"sites": rows, "macro_average": average, "embedding_model": args.embedding_model,
                          "limit": args.limit}))
        return 0
    print(machine())
    print(f"embedder {args.embedding_model}, extractive answers, every other setting at its default")
    print(render(rows, average))
    return 0


if __name__ == "__main__":
    sys.exit(main())
