"""Layer 8 (the only click importer): the `tpindex` command group and its commands."""
