"""Sessions as people read them: one-line descriptions, the entry views and transcript
(`textconv` for git), and redaction of secrets. Whole documents are export/'s.
"""
