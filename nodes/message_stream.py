"""The answer as chunks of one AI message in LangGraph's `messages` stream mode (Studio, agent-chat-ui, the SDK).

LangGraph streams a chat model's tokens to `messages` clients through the run's callbacks. The real model runs
with "nostream" (its raw tokens must never reach a client), so the node reports its cleaned sentences as the
tokens of a run of its own, "cleaned_answer": the same callbacks, so every `messages` client gets them as
they are written, and traces show what the reader saw.
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import get_callback_manager_for_config

from logic.answer_stream import pieces

NAME = "cleaned_answer"


class MessageStream:
    """Relay cleaned answer text as `AIMessageChunk`s that add up to the message the node stores."""

    def __init__(self, config: RunnableConfig | None) -> None:
        """Report through the callbacks of `config` (the node's); None (called outside a graph) reports nothing."""
        self.config, self.id = config, f"run-{uuid4()}"
        self.run: CallbackManagerForLLMRun | None = None
        self.text = ""  # what was sent so far
        self.open = True

    def _start(self) -> CallbackManagerForLLMRun | None:
        """Open the run on the first chunk: a turn that streams nothing reports nothing."""
        if self.run is None and self.config is not None:
            manager = get_callback_manager_for_config(self.config)
            # No prompt: the real one stays out of every stream and trace this run shows up in.
            serialized: dict[str, Any] = {"lc": 1, "type": "not_implemented", "id": ["rag_agent", NAME]}
            self.run = manager.on_chat_model_start(serialized, [[]], run_id=uuid4(), name=NAME)[0]
        return self.run

    def send(self, delta: str) -> None:
        """Stream one piece of the message's text."""
        run = self._start() if self.open and delta else None
        self.text += delta
        if run is not None:
            chunk = AIMessageChunk(content=delta, id=self.id)
            run.on_llm_new_token(delta, chunk=ChatGenerationChunk(message=chunk))

    def __call__(self, event: dict[str, Any]) -> None:
        """Pass on an `answer_delta` event of the cleaned stream (AnswerStream emits nothing else)."""
        if "answer_delta" in event:
            self.send(event["answer_delta"])

    def end(self, message: AIMessage | None) -> AIMessage | None:
        """Send what the message adds to the text streamed so far, sentence by sentence, and close the run.

        The message takes this stream's id, so LangGraph does not send it a second time. A message that does
        not continue what was streamed (a corrected or withdrawn answer) keeps its own id: it arrives whole,
        as a message of its own, and the thread's state holds only it.
        """
        follows = message is not None and message.text.startswith(self.text)
        if message is not None and follows:
            for piece in pieces(message.text[len(self.text):]):
                self.send(piece)
            message.id = self.id
        self.open = False
        if self.run is not None:
            kept = [ChatGeneration(message=message)] if message is not None and follows else []
            self.run.on_llm_end(LLMResult(generations=[list(kept)]))
        return message

