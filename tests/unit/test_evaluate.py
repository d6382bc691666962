"""The evaluation harness computes the documented figures exactly, and `rag-agent eval` runs end to end."""

import json
from pathlib import Path

import pytest

from logic.not_found import hedge
from rag_agent.cli.commands import main
from rag_agent.evaluation import evaluate, gate_curve
from rag_agent.evaluation import figures as eval_figures


def record(expected: str, status: str, sources: list[str], gold: list[str], turn: int = 1, top: float = 0.5,
           cited: list[str] | None = None) -> dict:
    ids = [f"c{i}" for i in range(len(sources))]
    return {"expected": expected, "status": status, "gold": gold, "turn": turn, "top_score": top, "gate_score": top,
            "retrieved": [{"source": s, "score": top} for s in sources], "retrieved_ids": ids,
            "citations": [{"source": "x", "chunk_id": c} for c in (cited or [])], "latency_ms": 10.0}


def test_metrics_match_hand_computed_values() -> None:
    records = [
        record("GROUNDED", "grounded", ["a.md", "b.md"], ["a.md"], cited=["c0"]),  # rank 1
        record("GROUNDED", "grounded", ["b.md", "a.md"], ["a.md"], turn=2, cited=["zz"]),  # rank 2, bad cite
        record("GROUNDED", "not_found", ["b.md"] * 6, ["a.md"]),  # miss
        record("NOT_FOUND", "not_found", ["b.md"], []),
        record("NOT_FOUND", "grounded", ["b.md"], []),
    ]
    m = evaluate.metrics(records)
    assert m["hit_at_1"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["hit_at_5"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["mrr_at_10"] == pytest.approx((1 + 0.5) / 3, abs=1e-4)
    assert m["abstention_recall"] == 0.5
    assert m["false_abstention_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["followup_hit_at_5"] == 1.0
    assert m["citation_validity"] == 0.5
    assert (m["count_in_scope"], m["count_out_of_scope"], m["count_followups"]) == (3, 2, 1)


def test_sweep_picks_a_threshold_between_separable_scores() -> None:
    records = [record("GROUNDED", "grounded", ["a.md"], ["a.md"], top=t) for t in (0.7, 0.8)]
    records += [record("NOT_FOUND", "not_found", ["a.md"], [], top=t) for t in (0.2, 0.3)]
    best = gate_curve.best_threshold(gate_curve.sweep(records))
    assert 0.3 < best["threshold"] <= 0.7
    assert best["balanced_accuracy"] == 1.0


def test_eval_command_ingests_a_corpus_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "isaac.md").write_text("# Isaac Sim\n\nIsaac Sim is a robotics simulator built on Omniverse.\n")
    (corpus / "bread.md").write_text("# Bread\n\nKnead the bread dough with flour, water and yeast.\n")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "q1", "question": "Isaac Sim robotics simulator", "gold": ["isaac.md"],
                    "expected": "GROUNDED"}) + "\n"
        + json.dumps({"id": "q2", "question": "stock market prices", "expected": "NOT_FOUND"}) + "\n"
    )
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    report = tmp_path / "report.jsonl"
    code = main(["--data-dir", str(tmp_path / "data"), "eval", str(questions), "--corpus", str(corpus),
                 "--report", str(report), "--json"])
    assert code == 0
    printed = capsys.readouterr()
    figures = json.loads(printed.out)  # stdout is the one JSON object: `eval --json | jq` works
    assert "added 2" in printed.err  # the ingest's report went to stderr
    assert figures["hit_at_1"] == 1.0 and figures["count_out_of_scope"] == 1
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["q1", "q2"]
    assert {"retrieval_query", "retrieved", "citations", "latency_ms", "status", "confidence"} <= set(lines[0])
    assert sum(row["count"] for row in figures["reliability"]) == 2 and figures["confidence_brier"] is not None


def _toy_files(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "isaac.md").write_text("# Isaac Sim\n\nIsaac Sim is a robotics simulator built on Omniverse.\n")
    (corpus / "bread.md").write_text("# Bread\n\nKnead the bread dough with flour, water and yeast.\n")
    questions = tmp_path / "q.jsonl"
    rows = [{"question": "Isaac Sim robotics simulator", "gold": ["isaac.md"]},
            {"question": "knead bread dough flour", "gold": ["bread.md"]},
            {"question": "stock market prices today", "expected": "NOT_FOUND"},
            {"question": "football league results", "expected": "NOT_FOUND"}]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return corpus, questions


def test_calibrate_stores_the_best_threshold_and_plots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    corpus, questions = _toy_files(tmp_path)
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    data, plot = tmp_path / "data", tmp_path / "curve.png"
    code = main(["--data-dir", str(data), "calibrate", str(questions), "--corpus", str(corpus),
                 "--plot", str(plot), "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["best"]["balanced_accuracy"] == 1.0 and (out["in_scope"], out["out_of_scope"]) == (2, 2)
    stored = json.loads((data / "manifest.json").read_text())["collections"]["eval-docs"]
    assert stored["threshold"] == out["best"]["threshold"]
    assert stored["calibration"]["in_scope"] == 2
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The stored threshold is now the default: an on-topic question passes, an off-topic one does not.
    for question, status in (("stock market prices today", "not_found"), ("Isaac Sim robotics simulator", "grounded")):
        assert main(["--data-dir", str(data), "--collection", "eval-docs", "ask", "--json", question]) == 0
        answer = json.loads(capsys.readouterr().out)
        assert (answer["status"], answer["threshold"]) == (status, stored["threshold"])


def test_calibrate_needs_both_kinds_of_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    corpus, questions = _toy_files(tmp_path)
    questions.write_text(questions.read_text().splitlines()[0] + "\n")
    monkeypatch.setenv("RAG_AGENT_EMBEDDING_MODEL", "hash/256")
    code = main(["--data-dir", str(tmp_path / "data"), "calibrate", str(questions), "--corpus", str(corpus)])
    assert code == 2
    assert "needs both in-scope and out-of-scope" in capsys.readouterr().err


def test_format_curve_marks_the_choice() -> None:
    curve = gate_curve.sweep([record("GROUNDED", "grounded", ["a.md"], ["a.md"], top=0.8),
                            record("NOT_FOUND", "not_found", ["a.md"], [], top=0.2)])
    best = gate_curve.best_threshold(curve)
    table = gate_curve.format_curve(curve, best)
    assert "<- best" in table and table.splitlines()[0].startswith("threshold")


def turn(expected: str, status: str, confidence: float | None, source: str, gold: list[str]) -> dict:
    """A turn resting on `source`: cited when answered, best retrieved when refused."""
    cited = [{"source": source, "chunk_id": "c0"}] if status == "grounded" else []
    return {"expected": expected, "status": status, "gold": gold, "confidence": confidence,
            "retrieved": [{"source": source, "score": 0.5}], "citations": cited}


def test_confidence_calibration_matches_hand_computed_values() -> None:
    records = [
        turn("GROUNDED", "grounded", 0.9, "a.md", ["a.md"]),  # correct
        turn("GROUNDED", "grounded", 0.85, "b.md", ["a.md"]),  # cites the wrong page
        turn("NOT_FOUND", "not_found", 0.1, "b.md", []),  # out of scope: never "correct"
        turn("GROUNDED", "not_found", 0.15, "a.md", ["a.md"]),  # refused, but the best section is right
        turn("NOT_FOUND", "not_found", 0.12, "b.md", []),
        turn("GROUNDED", "error", None, "a.md", ["a.md"]),  # no confidence: not scored
    ]
    figures = evaluate.calibration(records)
    assert figures["reliability"] == [
        {"bin": "0.1-0.2", "count": 3, "mean_confidence": 0.1233, "share_correct": 0.3333},
        {"bin": "0.8-0.9", "count": 1, "mean_confidence": 0.85, "share_correct": 0.0},
        {"bin": "0.9-1.0", "count": 1, "mean_confidence": 0.9, "share_correct": 1.0},
    ]
    # ECE = (3 × |1/3 − 0.37/3| + 1 × 0.85 + 1 × 0.1) / 5; Brier = mean squared gap to the 0/1 outcome.
    assert figures["confidence_ece"] == pytest.approx((0.63 + 0.85 + 0.1) / 5, abs=1e-4)
    assert figures["confidence_brier"] == pytest.approx((0.01 + 0.7225 + 0.01 + 0.7225 + 0.0144) / 5, abs=1e-4)


def test_full_confidence_lands_in_the_top_bin_and_no_scores_give_no_figures() -> None:
    table = evaluate.reliability([turn("GROUNDED", "grounded", 1.0, "a.md", ["a.md"])])
    assert table == [{"bin": "0.9-1.0", "count": 1, "mean_confidence": 1.0, "share_correct": 1.0}]
    assert evaluate.calibration([turn("GROUNDED", "error", None, "a.md", ["a.md"])]) == {
        "confidence_ece": None, "confidence_brier": None, "reliability": []}


def test_reliability_table_is_printed_one_bin_a_line() -> None:
    text = evaluate.format_reliability([{"bin": "0.9-1.0", "count": 42, "mean_confidence": 0.97512,
                                         "share_correct": 0.9524}])
    assert text.splitlines()[1].split() == ["0.9-1.0", "42", "0.975", "0.952"]


def test_keyword_recall_near_miss_selection_and_class_figures() -> None:
    assert eval_figures.keyword_recall("Use `ros2 run` then colcon BUILD.", ["ros2 run", "colcon build", "rviz"]) == \
        pytest.approx(2 / 3, abs=1e-4)
    assert eval_figures.keyword_recall("anything", []) is None
    near = {**record("NOT_FOUND", "not_found", ["b.md"], []), "near_miss": True, "set": "nearmiss"}
    near_answered = {**record("NOT_FOUND", "grounded", ["b.md"], []), "near_miss": True, "set": "nearmiss"}
    far = {**record("NOT_FOUND", "not_found", ["b.md"], []), "set": "ood"}
    chosen = [{**record("GROUNDED", "grounded", ["selection"], []), "selection": True, "keyword_recall": 0.5},
              {**record("NOT_FOUND", "grounded", ["selection"], []), "selection": True}]
    labelled = [{**record("GROUNDED", "grounded", ["a.md"], ["a.md"]), "class": "ANSWERABLE"},
                {**record("NOT_FOUND", "not_found", ["a.md"], []), "class": "UNANSWERABLE"}]
    m = evaluate.metrics([near, near_answered, far, *chosen, *labelled])
    assert (m["near_miss_abstention"], m["far_off_abstention"]) == (0.5, 1.0)
    assert m["abstention_by_set"]["nearmiss"] == 0.5
    assert (m["selection_answered"], m["selection_refused"]) == ("1/1", "0/1")
    assert m["count_out_of_scope"] == 4  # selection cases are reported apart
    assert m["by_class"]["UNANSWERABLE"] == {"n": 1, "answered": 0.0, "abstained": 1.0}


def test_answer_defects_name_a_cut_lead_in_and_a_stripped_code_block() -> None:
    assert eval_figures.answer_defects("Common joint types include:. [1]") == [":."]
    assert eval_figures.answer_defects("A link [1]:\n\n```xml\n\n```\n") == ["empty code block"]
    assert eval_figures.answer_defects("A link [1]:\n\n```xml\n<link name=\"a\"/>\n```\n") == []
    assert eval_figures.answer_defects("Print it [1]:\n\n```python\nprint(f\"{rate:.1%}\")\n```\n") == []
    # A quote cut inside an inline code span, and its neighbour whose span opens and closes on two lines.
    assert eval_figures.answer_defects("It panicked with the message `already borrowed: … [1] See `RefCell`. [1]") == [
        "code span cut"]
    assert eval_figures.answer_defects("It panicked with `already borrowed:\nBorrowMutError`. [1]") == []
    # A double-backtick span ending in punctuation is a span, not an emptied one.
    assert eval_figures.answer_defects("Use the ``C()`` operator: `C(Region)`. [1]") == []
    # C#'s index from the end, in code, is no footnote.
    assert eval_figures.answer_defects("Take `items[^1]` [1]:\n\n```csharp\nvar last = items[^1];\n```\n") == []


@pytest.mark.parametrize(("content", "error"), [
    (b'{"question": "fine"}\n{"question": "cut off\n', "q.jsonl:2: not valid JSON"),
    (b'{"question": "fine"}\n\n{"question": "caf\xe9"}\n', "q.jsonl:3: not valid UTF-8 (byte 0xe9 at column 18)"),
    (b'{"question": 5}\n', "q.jsonl:1: field 'question' must be non-empty text, got int 5"),
    (b'{"id": "x"}\n', "q.jsonl:1: field 'question' must be non-empty text, got missing"),
    (b'["What is ROS?"]\n', "q.jsonl:1: expected a JSON object, got list"),
    (b'{"question": "What is ROS?", "gold": "a.md"}\n', "q.jsonl:1: field 'gold' must be a list of text"),
    (b'{"question": "What is ROS?", "expected": "yes"}\n', "q.jsonl:1: field 'expected' must be GROUNDED or NOT_FOUND"),
    (b"[" * 100_000, "q.jsonl:1: not valid JSON (nested too deep)"),
])
def test_a_bad_question_file_names_the_file_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           content: bytes, error: str) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_bytes(content)
    code = main(["--data-dir", str(tmp_path / "data"), "eval", str(questions), "--json"])
    printed = capsys.readouterr()
    assert code == 2 and printed.out == ""
    assert error in printed.err and str(questions) in printed.err, printed.err


def test_a_bad_conversation_turn_names_the_line_and_turn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conversations = tmp_path / "c.jsonl"
    conversations.write_text(json.dumps({"id": "c1", "turns": [{"question": "What is ROS?"}, {"question": None}]}))
    code = main(["--data-dir", str(tmp_path / "data"), "eval", "--conversations", str(conversations)])
    assert code == 2
    assert f"{conversations}:1: turn 2: field 'question' must be non-empty text" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["../../../etc/passwd", "/etc/passwd", "link/passwd"])
def test_a_selection_file_outside_the_selection_root_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                name: str) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "link").symlink_to("/etc")  # resolved before the check: a symlink cannot lead out either
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "Summarize this.", "selection_file": name}) + "\n")
    code = main(["--data-dir", str(tmp_path / "data"), "eval", str(questions), "--selection-root", str(root)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{questions}:1: selection_file {name!r} is outside the selection root {root.resolve()}" in err
    assert "root:" not in err  # nothing of /etc/passwd was read or shown


def test_followups_are_judged_by_their_answers_not_only_by_retrieval() -> None:
    def turn(expected: str, status: str, answer: str, keywords: list[str]) -> dict:
        gold = ["a.md"] if expected == "GROUNDED" else []
        return {**record(expected, status, ["a.md"], gold, turn=2), "answer": answer, "answer_keywords": keywords,
                "keyword_recall": eval_figures.keyword_recall(answer, keywords), "conversation": True}

    later = [turn("GROUNDED", "grounded", "Pass `http2=True` to the Client. [1]", ["http2=True", "Client"]),
             turn("GROUNDED", "grounded", "HTTP/2 is off by default. [1]", ["http2=True", "Client"]),  # misses it
             turn("GROUNDED", "not_found", "I don't have information about that.", ["http2=True"]),
             turn("NOT_FOUND", "not_found", "I don't have information about the weather.", []),
             turn("GROUNDED", "grounded", "Run `uv tool run ruff`. [1]", ["uv tool run", "uvx", "ruff"])]  # 2 of 3
    m = evaluate.metrics([{**record("GROUNDED", "grounded", ["a.md"], ["a.md"]), "conversation": True}, *later])
    assert m["followup_hit_at_5"] == 1.0  # every in-scope follow-up found the page: retrieval alone flatters
    assert (m["followups_right"], m["count_followup_turns"], m["followups_right_share"]) == (3, 5, 0.6)
    assert m["followup_answered"] == 0.75
    assert m["followup_keyword_recall"] == pytest.approx((1 + 0 + 0 + 2 / 3) / 4, abs=1e-4)


def test_a_conversation_off_domain_turn_is_not_a_far_off_question() -> None:
    far = {**record("NOT_FOUND", "not_found", ["b.md"], []), "set": "ood"}
    talk = {**record("NOT_FOUND", "grounded", ["b.md"], [], turn=3), "conversation": True}
    m = evaluate.metrics([far, talk])
    assert (m["far_off_abstention"], m["count_far_off"]) == (1.0, 1)
    assert (m["conversation_abstention"], m["count_conversation_out_of_scope"]) == (0.0, 1)
    assert list(m["abstention_by_set"]) == ["ood"]


class ScriptedAgent:
    """Answers every question "not found", so evaluate.run's bookkeeping can be checked without a model."""

    def ask(self, question: str, thread: str, context: str | None = None) -> dict:
        return {"answer": "I don't have information about that.", "status": "not_found", "retrieval_query": question,
                "retrieved": [], "citations": [], "top_score": 0.0, "gate_score": 0.0, "threshold": 0.5,
                "execution_time_seconds": 0.01, "confidence": 0.9, "grounding": {}}


def test_run_marks_conversation_turns_so_they_stay_out_of_far_off_figures() -> None:
    records = evaluate.run(ScriptedAgent(), [{"question": "Who won the 1998 World Cup?"}],  # type: ignore[arg-type]
                           [{"id": "c1", "turns": [{"question": "What is ROS?", "gold": ["a.md"]},
                                                   {"question": "And the weather today?"}]}])
    assert [r.get("conversation", False) for r in records] == [False, True, True]
    m = evaluate.metrics(records)
    assert (m["count_far_off"], m["count_conversation_out_of_scope"]) == (1, 1)


@pytest.mark.parametrize(("answer", "defect"), [
    ("Change directories to the `` repository and run `mkdocs gh-deploy`. [1]", "empty code span"),
    ("Set `RAG_AGENT_ALLOWED_ORIGINS` to ` `. [1]", "empty code span"),
    ("Set `enabled` to `true`,. [1]", ",."),
    ("It retries three times, . [1]", ",."),
    ("When set to the default, analytics is disabled for the. [1]", "value cut out"),
    ("Configure the pool [1]:\n\n```python\nclient = httpx.Client(\n    limits={\n```\n", "code block cut off"),
    ("Configure the pool [1]:\n\n```python\nclient = httpx.Client(\n", "code block cut off"),
    ("Then [1]:\n\n```js\n  })\n\nclient.close()\n```", "code block cut at its start"),
    ("Start [1]:\n\n```python\n" + "".join(f"x_{n} = {n}\n" for n in range(7)) + "```\n\nThen [2]:\n\n```python\n"
     + "".join(f"x_{n} = {n}\n" for n in range(1, 9)) + "```", "repeated quote"),
    ("The errors [1]:\n\n| `BodyTimeoutError` | `UND_ERR_BODY_TIMEOUT` |\n| `SocketError` | `UND_ERR_SOCKET` |",
     "table without its header"),
    ("To upgrade uv itself, run the [1]", "ends mid-sentence"),
    ("Configure it first [1]:\n\n:::{important}\nCall `configure()` once.\n:::", "docs markup"),
    ("Configure it first [1]:\n\n```{note}\nCall `configure()` once.\n```", "docs markup"),
    ("Call {func}`structlog.configure` once. [1]", "docs markup"),
    ("It offers colorful[^win] console output. [1]", "docs markup"),
    ("As we discuss in the [Raw Identifiers][raw-identifiers] section. [1]", "docs markup"),
    ("Around 8,000 packages &mdash; and counting. [1]", "docs markup"),
    ("Before validators run first. {#model-before-validator} [1]", "docs markup"),
    ("**Do not reveal the secret key.**. [1]", "double stop"),
    ("The minimum level of vulnerability for the audit to fail. [2] The minimum level of vulnerability for the "
     "audit to fail. [3]", "repeated quote"),
    ("Add a hook [1]:\n\n```python\ndef on_page_markdown(markdown, **kwargs):\n    return markdown\n```\n\n"
     "And again [3]:\n\n```python\ndef on_page_markdown(markdown, **kwargs):\n    return markdown\n```",
     "repeated quote"),
    ("The cache lives in the folder that [1]\n\n_(Quoted from the documentation; no language model is configured.)_",
     "ends mid-sentence"),
])
def test_answer_defects_a_reader_would_see(answer: str, defect: str) -> None:
    assert defect in eval_figures.answer_defects(answer)
    m = evaluate.metrics([{**record("GROUNDED", "grounded", ["a.md"], ["a.md"]), "answer": answer}])
    assert m["answers_with_defects"] == 1 and m["defects_by_kind"][defect] == 1


@pytest.mark.parametrize("answer", [
    "Pass ``a`b`` as the value. [1]",
    "| `--file` | Name of pipeline file (e.g., .gitlab-ci.yml) |\n| --- | --- |",
    # Two examples sharing their imports are two quotes, not one said twice.
    "One [1]:\n\n```python\nfrom pydantic import BaseModel, ConfigDict\n\nclass A(BaseModel): ...\n```\n\nTwo [2]:\n\n"
    "```python\nfrom pydantic import BaseModel, ConfigDict\n\nclass B(BaseModel): ...\n```",
    "Use `uv self update`. [1]",
    "The list [1]:\n- one\n- two",
    "Use them in these situations [1]:\n\n- When the size is unknown, and you want\n  to use the value\n"
    "- When you want\n  to own a value of a trait rather than a type",
    "See https://docs.example.com/guide",
    "Print it [1]:\n\n```python\nprint(f\"{rate:.1%}\", \"(\")\n```\n\n_(Quoted from the documentation; no language "
    "model is configured.)_",
    "I don't have information about X. Nearest sections:\n- Guide › Install — guide/install.md",
    "Wait for it...",
    "The syntax is `{module_import}:{app_variable}`. [2] `module_import` is the dotted import name. [2]",
])
def test_whole_answers_have_no_defects(answer: str) -> None:
    assert eval_figures.answer_defects(answer) == []


def test_keyword_recall_counts_only_what_an_answer_gives() -> None:
    question = {"question": "How do I enable HTTP/2 with http2=True?", "answer_keywords": ["http2=True"],
                "gold": ["client.md"]}

    def scored(status: str, answer: str) -> float | None:
        result = {"answer": answer, "status": status, "retrieval_query": question["question"], "retrieved": [],
                  "citations": [], "top_score": 0.5, "gate_score": 0.5, "execution_time_seconds": 0.01,
                  "threshold": 0.25, "confidence": 0.4, "grounding": None}
        return evaluate._record("q", 1, question, result)["keyword_recall"]

    # A refusal names the question (and its nearest sections): it answers nothing, whatever words it repeats.
    assert scored("not_found", "I don't have information about “How do I enable HTTP/2 with http2=True”.") == 0.0
    # An unsure answer's lead-in repeats the ask; only the quote after it is the answer.
    lead = hedge(question["question"])
    assert scored("grounded", f"{lead}\n\nHTTP/2 is off by default. [1]") == 0.0
    assert scored("grounded", f"{lead}\n\nPass `http2=True` to the Client. [1]") == 1.0
    assert scored("grounded", "Pass `http2=True` to the Client. [1]") == 1.0


def test_answer_defects_name_a_fence_a_renderer_reads_as_text() -> None:
    # Code quoted from a list item with its indentation: the opening fence at the margin, the closing one
    # four spaces in, closes nothing; a fence indented four spaces opens nothing.
    unclosed = "Use it [1]:\n\n```python\n    user = UserModel()\n    ```\n[1]\n\nThen dump it. [2]"
    assert eval_figures.answer_defects(unclosed) == ["fence read as text"]
    indented = "Use it [1]:\n\n    ```python\n    user = UserModel()\n    ```\n"
    assert eval_figures.answer_defects(indented) == ["fence read as text"]
    assert eval_figures.answer_defects("Use it [1]:\n\n```python\nuser = UserModel()\n```\n") == []
    # A fence shown inside a longer one is the docs' own example of Markdown, not a misread fence.
    shown = "Write it as [1]:\n\n````markdown\n```python\nx = 1\n```\n````\n"
    assert "fence read as text" not in eval_figures.answer_defects(shown)


def test_answer_defects_name_a_closing_tag_left_in_prose() -> None:
    assert eval_figures.answer_defects("There are themes</a> to choose from. [1]") == ["docs markup"]
    assert eval_figures.answer_defects("Close it with `</a>` in the template. [1]") == []
    # A reST cross-reference quoted as written, its target after its title.
    assert eval_figures.answer_defects("It uses utils.get_value <marshmallow.utils.get_value> here. [1]") == [
        "docs markup"]
    assert eval_figures.answer_defects("Write to Ann <ann@example.com> or see <https://example.com/a.b>. [1]") == []
