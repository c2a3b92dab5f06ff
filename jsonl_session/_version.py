"""The package's version, in one place: pyproject.toml reads it from here (setuptools'
dynamic version), `jsonl_session.__version__` re-exports it and the CLI's
``--version`` prints it. Nothing else lives here."""

__version__ = "0.1.0"
