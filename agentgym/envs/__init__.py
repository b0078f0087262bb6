"""The environment families, one subpackage each."""
