"""Log hygiene: secrets and the prompt canary are masked in every log record this process creates."""

from __future__ import annotations

import logging
import re
from typing import Any

from logic.canary import CANARY
from logic.masking import redact_secrets
from tools import settings

__all__ = ["install_redaction", "mask_url", "redact"]
# The password of a URL with credentials (scheme://user:password@host), wherever a URL is printed.
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@", re.IGNORECASE)
_installed = False


def mask_url(url: str) -> str:
    """Return a URL with its password, if any, replaced by ***."""
    return _URL_PASSWORD.sub(r"\1***@", url)


def redact(text: str) -> str:
    """Mask the configured secrets, passwords in URLs, key-shaped tokens and the canary in `text`."""
    # The configured secrets (URL passwords too, wherever no scheme is printed) go first: masking a URL's
    # password by pattern would leave its percent-decoded form elsewhere in the text.
    return mask_url(redact_secrets(text, settings.secrets()).replace(CANARY, "***"))


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
