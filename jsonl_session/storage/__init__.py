"""Bytes on disk: finding lines, loading a file (whole or in chunks), the index cache
and its tables, locked appends and atomic rewrites, the write protocol, where session
files live, and writing forks. What a line means is format/'s; the tree is tree.py's.
"""
