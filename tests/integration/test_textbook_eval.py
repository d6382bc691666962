"""`rag-agent eval` on the shared textbook sets meets the quality goals with the embedded defaults."""

import json
from pathlib import Path

import pytest

from rag_agent.evaluation import figures as eval_figures
from tests.integration.conftest import SHARED, run_cli

# Goals of the evaluation issue, on 30 + 14 in-scope turns and 20 + 1 + 224 out-of-scope ones.
GOALS_AT_LEAST = {"hit_at_1": 0.93, "hit_at_5": 0.97, "abstention_recall": 0.97, "followup_hit_at_5": 0.9,
                  "citation_validity": 1.0}
GOALS_AT_MOST = {"false_abstention_rate": 0.03, "errors": 0}


@pytest.fixture(scope="module")
def evaluation(textbook_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[dict]]:
    report = tmp_path_factory.mktemp("eval") / "report.jsonl"
    result = run_cli(
        textbook_dir, "eval", str(SHARED / "textbook" / "textbook-questions.jsonl"),
        str(SHARED / "ood" / "squad2-ood-questions.jsonl"),
        "--conversations", str(SHARED / "textbook" / "textbook-conversations.jsonl"),
        "--report", str(report), "--json",
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    print(figures)
    return figures, [json.loads(line) for line in report.read_text().splitlines()]


def test_counts_cover_every_question(evaluation: tuple[dict, list[dict]]) -> None:
    figures, lines = evaluation
    assert (figures["count_in_scope"], figures["count_out_of_scope"], figures["count_followups"]) == (44, 245, 7)
    assert len(lines) == 289


@pytest.mark.parametrize("name", sorted(GOALS_AT_LEAST))
def test_figure_meets_its_goal(evaluation: tuple[dict, list[dict]], name: str) -> None:
    assert evaluation[0][name] >= GOALS_AT_LEAST[name]


@pytest.mark.parametrize("name", sorted(GOALS_AT_MOST))
def test_failure_rate_stays_under_its_goal(evaluation: tuple[dict, list[dict]], name: str) -> None:
    assert evaluation[0][name] <= GOALS_AT_MOST[name]


def test_report_lines_recompute_the_figures(evaluation: tuple[dict, list[dict]]) -> None:
    figures, lines = evaluation
    out = [line for line in lines if line["expected"] == "NOT_FOUND"]
    assert {"id", "turn", "question", "expected", "status", "retrieval_query", "retrieved", "citations",
            "latency_ms"} <= set(lines[0])
    recomputed = sum(line["status"] == "not_found" for line in out) / len(out)
    assert recomputed == pytest.approx(figures["abstention_recall"], abs=1e-4)


@pytest.mark.parametrize(("question", "source"), [
    ("What is BLIP?", "module-4/multimodal-perception.md"),
    ("What is AMCL?", "module-3/nav2-navigation.md"),
])
def test_short_acronym_questions_are_answered(textbook_dir: Path, question: str, source: str) -> None:
    result = run_cli(textbook_dir, "ask", "--json", question)
    answer = json.loads(result.stdout)
    assert answer["status"] == "grounded", answer["answer"]
    assert source in {c["source"] for c in answer["citations"]}


@pytest.mark.parametrize(("question", "source", "heading"), [
    ("What is NITROS?", "module-3/isaac-ros-pipelines.md", "Isaac ROS NITROS (NVIDIA Isaac Transport for ROS)"),
    ("What is AMCL?", "module-3/nav2-navigation.md", "AMCL Configuration for NVIDIA Hardware"),
    ("What is Xacro?", "module-1/urdf-robot-models.md", "Using Xacro for Complex URDFs"),
])
def test_acronyms_retrieve_and_cite_their_sections(textbook_dir: Path, question: str, source: str,
                                                   heading: str) -> None:
    # The default (hybrid) index: BM25 matches a term the embedder has never learned.
    answer = json.loads(run_cli(textbook_dir, "ask", "--json", question).stdout)
    assert source in [c["source"] for c in answer["retrieved"][:5]]
    assert answer["status"] == "grounded", answer["answer"]
    assert any(c["source"] == source and heading in c["heading_hierarchy"] for c in answer["citations"]), [
        (c["source"], c["heading_hierarchy"]) for c in answer["citations"]]


def test_quoted_answers_are_fully_grounded(evaluation: tuple[dict, list[dict]]) -> None:
    answered = [line for line in evaluation[1] if line["status"] == "grounded"]
    assert answered and all(line["grounding"]["is_fully_grounded"] for line in answered)
    assert all(line["grounding"] is None for line in evaluation[1] if line["status"] == "not_found")


def test_confidence_is_calibrated(evaluation: tuple[dict, list[dict]]) -> None:
    figures, lines = evaluation
    assert all(0 <= line["confidence"] <= 1 for line in lines)
    assert figures["confidence_ece"] <= 0.05 and figures["confidence_brier"] <= 0.02
    # Higher confidence, more often right: the turns above 0.5 are mostly right, those below mostly not.
    table = figures["reliability"]
    high = [b for b in table if b["mean_confidence"] >= 0.5]
    low = [b for b in table if b["mean_confidence"] < 0.5]
    share = [sum(b["share_correct"] * b["count"] for b in part) / sum(b["count"] for b in part) for part in (low, high)]
    assert share[0] < 0.05 and share[1] > 0.85


def test_no_answer_cuts_a_lead_in_or_strips_a_code_block(evaluation: tuple[dict, list[dict]]) -> None:
    # The kinds this test was written for. answer_defects also names code blocks quoted cut off mid-way and
    # answers ending on a lead-in: 7 textbook answers have them today (t12, t19, t21, sn20, sg17, c04), which
    # the answer work of issue #24 (point 3) is to fix; `rag-agent eval` reports them in defects_by_kind.
    kinds = {":.", "empty code block", "empty code span", ",.", "value cut out"}
    defects = {line["id"]: kinds & set(eval_figures.answer_defects(line["answer"])) for line in evaluation[1]}
    assert {k: v for k, v in defects.items() if v} == {}
