"""Text helpers shared by the report writers (a leaf module: it imports no other report module).
"""

from __future__ import annotations

import re


def looks_like_prose(text: str) -> bool:
    """Whether ``text`` is a sentence rather than a formula (then it is not typeset)."""
    stripped = re.sub(r"\\(?:text|mathrm|operatorname|mathit|textrm)\s*\{[^}]*\}", " ", text)
    stripped = re.sub(r"\\[A-Za-z]+", " ", stripped)
    words = re.findall(r"(?<![A-Za-z_^])[A-Za-z]{4,}(?![A-Za-z])", stripped)
    return len(words) >= 3
