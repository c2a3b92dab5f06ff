"""Many sessions at once: listing the sessions of a folder or of every project, and
full-text search across them. One session's contents are session/'s.
"""
