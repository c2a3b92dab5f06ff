"""What a line of a session file means, with no I/O: the typed model of entries and
messages, ids and timestamps, JSON as JavaScript reads and writes it, the entry record
(StoredEntry and envelopes), version migration, problems, and building new entries.
Everything here is pure; bytes on disk are storage/'s.
"""
