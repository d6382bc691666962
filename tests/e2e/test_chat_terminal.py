"""`rag-agent chat` and `ask` as a person uses them: on a terminal, with Ctrl-C, Ctrl-D and line history.

The installed command runs on a pseudo-terminal (pexpect) over the tiny corpus, embedded with the
hash embedder. A chat model stub on 127.0.0.1 holds the first answer about kneading until the test
ends, so Ctrl-C always lands while an answer is being written.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.integration.stub_server import JSONStub, Raw, serve
from tests.tiny_corpus import CORPUS

pytestmark = pytest.mark.e2e

RAG_AGENT = str(Path(sys.executable).with_name("rag-agent"))
SLOW = "How long should I knead bread dough?"
QUICK = "What is Isaac Sim?"
ANSWER = "Isaac Sim is a robotics simulator [1]."
release, arrived = threading.Event(), threading.Event()


class HeldChat(JSONStub):
    """OpenAI chat completions: the first call about kneading waits for the test to end, others answer at once."""

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | Raw]:
        if not arrived.is_set() and "knead" in json.dumps(body).lower():  # only the first call of that turn
            arrived.set()
            release.wait(120)
        message = {"role": "assistant", "content": ANSWER}
        if body.get("stream"):
            chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "delta": message, "finish_reason": "stop"}]}
            return 200, Raw(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(), "text/event-stream")
        return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18}}


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a user with an indexed tiny corpus and a chat model."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    release.clear()
    arrived.clear()
    with serve(HeldChat) as url:
        values = {k: v for k, v in os.environ.items() if k not in {"COHERE_API_KEY", "QDRANT_URL"}}
        values |= {"RAG_AGENT_EMBEDDING_MODEL": "hash/256", "RAG_AGENT_DATA_DIR": str(tmp_path / "data"),
                   "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"{url}/v1", "TERM": "dumb"}
        ingest = pexpect.run(f"{RAG_AGENT} ingest {docs}", env=values, withexitstatus=True, timeout=300)
        assert ingest[1] == 0, ingest[0]
        yield values
        release.set()


def spawn(env: dict[str, str], *args: str) -> pexpect.spawn:
    return pexpect.spawn(RAG_AGENT, list(args), env=env, encoding="utf-8", timeout=120, dimensions=(40, 200))


def ctrl_d(child: pexpect.spawn) -> None:
    """Press Ctrl-D at the prompt and wait for the end; pressed again if readline was not yet reading (a race
    of the test driver's speed, not a person's)."""
    for _ in range(10):
        child.sendeof()
        if child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=3) == 0:
            return
    raise AssertionError(f"Ctrl-D did not end the chat: {child.before!r}")


def test_ctrl_c_cancels_the_answer_and_ctrl_d_ends_the_chat(env: dict[str, str]) -> None:
    chat = spawn(env, "chat", "--thread", "t1")
    chat.expect_exact("you> ")
    chat.sendline(SLOW)
    assert arrived.wait(60)  # the turn is waiting for the model: the answer is being written
    chat.sendintr()
    chat.expect_exact("(cancelled")
    chat.expect_exact("you> ")
    chat.sendline(QUICK)  # the same thread still answers after a cancelled turn
    chat.expect_exact(ANSWER)
    chat.expect_exact("you> ")
    ctrl_d(chat)
    chat.close()
    assert chat.exitstatus == 0
    assert "Traceback" not in (chat.before or "")


def test_history_from_an_earlier_chat_comes_back_with_the_up_arrow(env: dict[str, str]) -> None:
    first = spawn(env, "chat")
    first.expect_exact("you> ")
    first.sendline(QUICK)
    first.expect_exact(ANSWER)
    first.expect_exact("you> ")
    ctrl_d(first)
    second = spawn(env, "chat")
    second.expect_exact("you> ")
    second.send("\x1b[A")  # up arrow: readline brings back the last question
    second.expect_exact(QUICK)
    second.send("\r")
    second.expect_exact(ANSWER)
    ctrl_d(second)


def test_ctrl_c_during_ask_exits_quietly(env: dict[str, str]) -> None:
    # --data-dir after the subcommand, as people type it.
    ask = spawn({k: v for k, v in env.items() if k != "RAG_AGENT_DATA_DIR"}, "ask", SLOW,
                "--data-dir", env["RAG_AGENT_DATA_DIR"])
    assert arrived.wait(60)
    ask.sendintr()
    ask.expect(pexpect.EOF)
    ask.close()
    assert ask.exitstatus == 130
    assert "rag-agent: cancelled" in (ask.before or "")
    assert "Traceback" not in (ask.before or "")
