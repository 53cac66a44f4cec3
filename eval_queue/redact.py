"""Masking secrets in text that may become public (request files, the UI, log lines).

One function, used by the hub store for client error messages and by the queue for
the ``error`` a worker records on a FAILED request.
"""

from __future__ import annotations

import re

# Anything shaped like a Hugging Face token; 8+ characters so that names such as
# ``hf_hub_download`` are left alone.
TOKEN_LIKE = re.compile(r"hf_[A-Za-z0-9]{8,}")
MASK = "***"


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every given secret and anything shaped like an HF token masked."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return TOKEN_LIKE.sub(f"hf_{MASK}", text)
