"""A generated evaluation for detection: risky seeds times transforms, sessions, benign corpora."""
