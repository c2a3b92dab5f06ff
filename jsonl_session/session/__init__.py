"""The Session façade: one session file to read, append to, branch and fork.

facade.py holds `Session` and its public methods; reading.py the reading methods and
appends.py the typed append_* methods (mixins it inherits); state.py the fold of the
entries (tree index, labels, name, leaf); appender.py the append protocol as the
session sees it. Bytes on disk are storage/'s.
"""

from jsonl_session.session.facade import Session

__all__ = ["Session"]
