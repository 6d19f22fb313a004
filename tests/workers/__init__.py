"""Helper processes for the reliability tests (crash, concurrency, reindex). Not tests."""
