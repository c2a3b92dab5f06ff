"""``python -m jsonl_session`` runs the command line."""

from jsonl_session.cli import main

if __name__ == "__main__":  # not when a spawned worker imports it again
    main()
