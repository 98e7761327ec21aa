"""Present: answers read from the database (which, diff, lifecycle, export)."""
