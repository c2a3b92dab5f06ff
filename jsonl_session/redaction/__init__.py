"""Finding secrets in text and replacing them, for views and exports (on the way out)
and for sessions that redact what they write (on the way in).

shapes.py holds the secrets known by their shape (a provider's key prefix, a JSON Web
Token, a private key block); context.py those known by where they stand (a
``password=`` pair, ``Authorization: Basic``, a URL's password, ``mysql -pX``,
``curl -u user:pass``, a netrc line) and judge.py which values stand for a secret
rather than a placeholder, a reference or code; finding.py runs them all over a text
(only those a text may hold) and engine.py's `Redactor` replaces what they find (in a
text, every string of a JSON value, or an entry's line) and counts it. Everything
here is pure: no I/O, nothing about sessions beyond which keys of an entry are
structure. views/redact.py re-exports the public names.
"""

from jsonl_session.redaction.engine import PLACEHOLDER, Redactor, redact_text, redactor_for

__all__ = ["PLACEHOLDER", "Redactor", "redact_text", "redactor_for"]
