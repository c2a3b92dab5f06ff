"""``python -m jsonl_session`` runs the command line."""

if __name__ == "__main__":
    # Imported here, not above: a spawned worker imports this module again (as
    # __mp_main__), and the command line's modules (Typer, Rich) are not for it.
    from jsonl_session.cli import main

    main()
