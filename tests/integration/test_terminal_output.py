"""No escape sequence reaches the terminal: documents, questions, filter values and errors, through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.hostile import run_cli
from tools import embedded_index

OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"  # writes the clipboard
CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned\x1b\\"
C1_CSI = "\u009b2J"  # the 8-bit form of ESC[
# Anything a terminal acts on: C0 controls but tab and newline, DEL, C1 controls.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def docs_with_escapes(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "motors.md").write_text(
        f"# Motors{TITLE}\n\nRobots move with electric motors.{OSC52} A motor driver{CLEAR} sets the speed"
        f" of each motor{C1_CSI} from a control signal.\n", encoding="utf-8")
    return docs


def test_escapes_in_documents_questions_and_filters_never_reach_the_terminal(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ingest = run_cli(data, "ingest", str(docs_with_escapes(tmp_path)))
    assert ingest.returncode == 0, ingest.stderr
    snap = embedded_index.current(data, "docs")  # indexed text is clean too
    assert snap is not None
    stored = json.dumps([{"page_content": d.page_content, "metadata": d.metadata}
                         for d in (snap.document(r) for r in range(snap.rows))])
    assert "motor driver" in stored and not CONTROL.search(json.loads(stored)[0]["page_content"])

    answer = run_cli(data, "ask", "--threshold", "0", f"How do robots move?{OSC52}{CLEAR}")
    assert answer.returncode == 0, answer.stderr
    assert "motors" in answer.stdout
    refused = run_cli(data, "ask", "--filter", f"module=x{TITLE}{C1_CSI}", f"How do motors work?{OSC52}")
    assert refused.returncode == 2
    assert "module" in refused.stdout + refused.stderr
    # The not-found reply echoes the question: the echo is clean too.
    chat = run_cli(data, "chat", "--thread", "t1", stdin=f"What sets the speed?{OSC52}{CLEAR}\n/exit\n")
    assert chat.returncode == 0, chat.stderr
    assert "speed" in chat.stdout
    bad_thread = run_cli(data, "chat", "--thread", f"t1{TITLE}", stdin="What sets the speed?\n")
    assert "thread" in bad_thread.stdout
    for run in (ingest, answer, refused, chat, bad_thread):
        assert not CONTROL.search(run.stdout + run.stderr), repr(run.stdout + run.stderr)


def test_json_output_escapes_every_control_character(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_cli(data, "ingest", str(docs_with_escapes(tmp_path))).returncode == 0
    run = run_cli(data, "ask", "--json", "--filter", f"module=x{C1_CSI}{OSC52}", "How do motors work?")
    assert run.returncode == 2
    assert not CONTROL.search(run.stdout), repr(run.stdout)
    json.loads(run.stdout)  # still valid JSON
