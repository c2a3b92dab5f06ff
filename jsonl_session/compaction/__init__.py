"""Compaction: planning (planning.py); summarizers and execution come beside it.
Compaction never deletes history: it appends an entry that changes what later
contexts contain."""
