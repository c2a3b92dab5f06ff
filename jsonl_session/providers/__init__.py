"""Provider adapters: from a session's context to requests the real APIs accept.

`history` holds what every adapter shares (plain roles, repair); one module per
API family holds the adapter itself.
"""
