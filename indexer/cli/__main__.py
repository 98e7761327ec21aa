"""`python -m indexer.cli`: the `tpindex` command."""

from .main import main

main()
