"""Provider adapters: from a session's context to requests the real APIs accept.

history.py is the step every adapter starts from (plain roles, normalizing, repair);
common.py holds the request and tool types and `history_of`; anthropic.py and openai.py
are the adapters; counting.py asks the providers' own counting endpoints. What a
message's content says as text is messages.py's; token estimates are tokens.py's.
"""
