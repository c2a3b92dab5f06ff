"""Sessions as people read them: one-line descriptions (describe.py), what each entry
says (transcript.py), the branch structure as runs (runs.py), the plain-text
transcript for git (textconv.py), and redaction of secrets (redact.py). Whole
documents are export/'s.
"""
