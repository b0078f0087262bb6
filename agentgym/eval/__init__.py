"""Evaluation: the episode loop, records, metrics and runners."""
