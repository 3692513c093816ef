"""Shared by every stage: one-line user errors, progress lines, fault injection for the crash tests, and where ireegen's data files are."""
