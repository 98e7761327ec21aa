"""`python -m indexer.schemas`: rewrite the schema files from the answers' data classes."""

from . import write

for path in write():
    print(path)
