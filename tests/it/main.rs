//! Integration tests: the real app on loopback.
