"""Other agents' session files: recognising who wrote a file, reading Claude Code and
Codex transcripts natively (never writing to them) into pi's tree of entries, and
converting sessions between the agents. The loader reaches the readers through
storage/foreign.py; everything else comes through the public API.
"""
