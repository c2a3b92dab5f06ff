"""Redaction as views and exports use it: `Redactor` and `redact_text`.

The engine (the patterns, the judging of values, the counting) lives in
jsonl_session/redaction/, below session/, so a session can redact what it writes too;
this module keeps the names where views, exports and users have imported them from.
export/ and transcript.py decide which texts go through a redactor.
"""

from __future__ import annotations

from jsonl_session.redaction.engine import PLACEHOLDER, Redactor, redact_text

__all__ = ["PLACEHOLDER", "Redactor", "redact_text"]
