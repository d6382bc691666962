"""Log hygiene: secrets and the prompt canary are masked in every log record this process creates."""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import unquote, urlsplit

from logic.canary import CANARY
from logic.masking import SECRET_VARS, redact_secrets

__all__ = ["SECRET_VARS", "URL_VARS", "install_redaction", "mask_url", "redact"]
# The password of a URL with credentials (scheme://user:password@host), wherever a URL is printed.
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@", re.IGNORECASE)
# Settings that may hold a URL with credentials: their password is masked even where no scheme is printed.
URL_VARS = ("OPENAI_BASE_URL", "QDRANT_URL", "RAG_AGENT_CHECKPOINTER", "COHERE_BASE_URL")
_installed = False


def _url_passwords() -> list[str]:
    """Return the passwords inside the configured URLs, as written and percent-decoded."""
    found = []
    for name in URL_VARS:
        try:
            password = urlsplit(os.environ.get(name, "")).password
        except ValueError:
            continue
        if password and len(password) >= 3:
            found += [password, unquote(password)]
    return found


def mask_url(url: str) -> str:
    """Return a URL with its password, if any, replaced by ***."""
    return _URL_PASSWORD.sub(r"\1***@", url)


def redact(text: str) -> str:
    """Mask the configured secrets, passwords in URLs, key-shaped tokens and the canary in `text`."""
    for password in _url_passwords():
        text = text.replace(password, "***")
    # Configured secrets and key-shaped tokens: the same masking turn records use (logic/masking.py).
    return redact_secrets(mask_url(text).replace(CANARY, "***"))


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


# The name the checkpointer modules use: error messages name a store URL with its password masked.
redact_url = mask_url
