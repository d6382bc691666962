"""Masking of what must not be stored or logged: configured secrets, key-shaped tokens and e-mail addresses."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Key-shaped tokens a provider may echo back in an error ("Incorrect API key provided: sk-...") or a user
# may paste into a question: OpenAI/Anthropic-style sk-, LangSmith lsv2_, GitHub, Slack, AWS access key ids.
KEY_LIKE = re.compile(r"\b(?:(?:sk|lsv2|pk|rk)[-_][A-Za-z0-9_-]{6,}|gh[pousr]_[A-Za-z0-9]{20,}"
                      r"|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})")
EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
SECRET_MASK = "***"
EMAIL_MASK = "[email]"


def redact_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask the given secret values (the deployment's, tools/settings.secrets) and key-shaped tokens in `text`."""
    for value in secrets:
        if value:
            text = text.replace(value, SECRET_MASK)
    return KEY_LIKE.sub(SECRET_MASK, text)


def mask_personal(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask secrets and e-mail addresses: what a stored question may keep of the user's words."""
    return EMAIL.sub(EMAIL_MASK, redact_secrets(text, secrets))
