"""The demo (placeholder)."""
