"""Versioned benchmark suites and running them."""
