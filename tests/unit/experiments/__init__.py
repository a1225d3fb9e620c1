"""Test package (unique module names across test folders)."""
