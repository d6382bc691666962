"""Log hygiene: secrets and the prompt canary are masked in every log record this process creates."""

from __future__ import annotations

import logging
from typing import Any

from logic.canary import CANARY
from logic.masking import SECRET_VARS, redact_secrets

__all__ = ["SECRET_VARS", "install_redaction", "redact"]
_installed = False


def redact(text: str) -> str:
    """Mask the configured secrets, key-shaped tokens and the canary in `text`."""
    return redact_secrets(text.replace(CANARY, "***"))


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
