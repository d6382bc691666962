"""Streamed answers: model tokens buffered into sentences, each cleaned before anyone sees it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from logic import fences
from logic.canary import CANARY
from logic.echo import LEAK_RUN, PromptEcho
from logic.errors import LLMBadOutputError
from logic.hygiene import Numbering
from logic.types import Chunk, Citation

# A sentence ends at . ! or ? (with the [n] markers that cite it) followed by whitespace, or at a
# line break; the whitespace must be complete (text follows it). Only whole sentences are cleaned,
# so a URL or a tag is never cut in half (nor a host spelled "evil . example": a dot after a space ends nothing).
_BOUNDARY = re.compile(r"(?:(?<!\s)[.!?](?:\s?\[\d{1,2}\])*(\s+)|(\s*\n\s*))(?=\S)")
LEAKED = "the model's reply repeated its hidden instructions and was withheld"
NOT_FOUND = "NOT_FOUND"  # the prompt's reply for "the sources do not answer this"

Emit = Callable[[dict[str, Any]], None]


def flush_event(streamed: str, final: str) -> dict[str, str] | None:
    """Return the event that makes what was streamed read as `final`: its suffix, or a replacement."""
    if streamed == final:
        return None
    if final.startswith(streamed):
        return {"answer_delta": final[len(streamed):]}
    return {"answer_replace": final}


def pieces(text: str) -> list[str]:
    """Split finished text into sentences (each with the whitespace after it) that concatenate back to it."""
    out, start = [], 0
    for match in _BOUNDARY.finditer(text):
        if fences.unclosed(text[start:match.end()]):
            continue  # inside a code block: it goes out whole
        out.append(text[start:match.end()])
        start = match.end()
    return out + [text[start:]] if text[start:] else out


class AnswerStream:
    """Turn raw model tokens into cleaned `answer_delta` events; their concatenation is the answer."""

    def __init__(self, chunks: list[Chunk], clean: Callable[[str, list[Chunk]], str], emit: Emit,
                 echo: PromptEcho | None = None) -> None:
        """Clean with `clean`, emit through `emit`; with `echo`, withhold a reply that repeats the prompt."""
        self.chunks, self.clean, self.emit, self.echo = chunks, clean, emit, echo
        self.raw = ""  # every token received
        self.done = 0  # how much of `raw` has been turned into sentences
        self.numbering = Numbering(chunks)
        self.text = ""  # the cleaned answer so far: exactly what was emitted
        self.gap = ""  # whitespace owed before the next emitted sentence

    def feed(self, token: str) -> None:
        """Add a token; emit every sentence it completes, or fail if the reply leaks the prompt."""
        self.raw += token
        # The canary has no whitespace, so it always sits inside one not-yet-emitted sentence.
        if CANARY in self.raw or (self.echo is not None and self.echo.feed(token)):
            raise LLMBadOutputError(LEAKED)
        if self._may_be_not_found():
            return
        self._sentences(hold=self.echo is not None)

    def _sentences(self, *, hold: bool) -> None:
        """Emit each complete sentence not yet emitted (with `hold`, only those the echo scan has read past)."""
        for match in _BOUNDARY.finditer(self.raw, self.done):
            if hold and self.echo is not None and self.echo.lead(self.raw[match.end():]) < LEAK_RUN:
                # Held back until the echo scan has read far enough past it: a repeat of the prompt that
                # reaches into this sentence is caught before any of it is shown.
                break
            gap = match.lastindex or 0
            if fences.unclosed(self.raw[self.done:match.start(gap)]):
                continue  # inside a code block: it is cleaned and emitted whole, once its fence closes
            self._sentence(self.raw[self.done:match.start(gap)], match.group(gap))
            self.done = match.end()

    def finish(self) -> tuple[str, list[Citation]]:
        """Emit the last sentence and return the cleaned answer with its citations."""
        if self.raw.strip() == NOT_FOUND:
            return "", []
        self._sentences(hold=False)  # the whole reply has been scanned: what was held back goes out
        self._sentence(self.raw[self.done:], "")
        self.done = len(self.raw)
        return self.text, self.numbering.citations()

    def _may_be_not_found(self) -> bool:
        """Tell whether the reply so far could still be the bare NOT_FOUND, which is never shown."""
        head = self.raw.strip()
        return not self.text and (head.startswith(NOT_FOUND) or NOT_FOUND.startswith(head))

    def _sentence(self, raw: str, gap: str) -> None:
        """Clean one sentence and emit it after the whitespace that separated it from the last one."""
        text = self.numbering.renumber(self.clean(raw, self.chunks)).strip()
        if not text:
            return  # nothing survived hygiene: keep the gap owed by the previous sentence
        delta = (self.gap if self.text else "") + text
        self.text += delta
        self.gap = re.sub(r"[ \t]{2,}", " ", gap)  # as clean() collapses runs of spaces
        self.emit({"answer_delta": delta})


class StreamedAnswer:
    """A stream of answer events: the text they add up to so far, and the final flush."""

    def __init__(self, writer: Emit, text: str = "") -> None:
        self.writer, self.text = writer, text

    def __call__(self, event: dict[str, Any]) -> None:
        """Pass an answer event on and keep track of the text it leaves; other events are ignored."""
        if "answer_replace" in event:
            self.text = event["answer_replace"]
        elif "answer_delta" in event:
            self.text += event["answer_delta"]
        else:
            return
        self.writer(event)

    def settle(self, final: str) -> None:
        """Make the stream read as `final`: a note appended after generation arrives as a last delta."""
        event = flush_event(self.text, final)
        if event is not None:
            self.writer(event)
            self.text = final
