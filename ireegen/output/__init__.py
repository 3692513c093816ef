"""The output directory: which files a configuration writes, how they are committed, and the content key."""
