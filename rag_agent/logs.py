"""Log hygiene: secrets and the prompt canary are masked in every log record this process creates."""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from logic.canary import CANARY

SECRET_VARS = ("OPENAI_API_KEY", "COHERE_API_KEY", "QDRANT_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY",
               "RAG_AGENT_API_KEYS")
# Key-shaped tokens a provider may echo back in an error ("Incorrect API key provided: sk-...").
_KEY_LIKE = re.compile(r"\b(?:sk|lsv2)[-_][A-Za-z0-9_-]{6,}")
_installed = False


def redact(text: str) -> str:
    """Mask the configured secrets, key-shaped tokens and the canary in `text`."""
    for name in SECRET_VARS:
        value = os.environ.get(name, "")
        if len(value) >= 4:
            text = text.replace(value, "***")
    return _KEY_LIKE.sub("***", text.replace(CANARY, "***"))


def install_redaction() -> None:
    """Mask every record at creation, whichever logger or handler it goes to (libraries' too)."""
    global _installed
    if _installed:
        return
    make_record = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return record

    logging.setLogRecordFactory(factory)
    _installed = True


def redact_url(url: str) -> str:
    """Return the URL with any password replaced, so errors can name it safely."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
