"""``python -m jsonl_session`` runs the command line."""

from jsonl_session.cli import main

main()
