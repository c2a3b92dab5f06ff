"""``python -m jsonl_session`` runs the command line."""

from jsonl_session.cli import main

if __name__ == "__main__":
    main()
