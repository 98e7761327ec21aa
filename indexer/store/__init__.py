"""Layer 2: the SQLite database (schema, migrations, views, reading) and the code store."""
