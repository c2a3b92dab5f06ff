"""The Session façade: one session file to read, append to, branch and fork."""

from jsonl_session.session.facade import Session

__all__ = ["Session"]
