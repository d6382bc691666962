"""The prompt canary: a per-process secret whose appearance in a reply means the instructions leaked."""

from __future__ import annotations

import secrets

# A per-process secret in the system prompt: a reply containing it is echoing the instructions
# (a prompt-injection or extraction attempt) and is withheld, and logs mask it.
CANARY = f"canary-{secrets.token_hex(8)}"
