"""tpindex: index vLLM's tool-calling code across versions.

The pipeline, one package per stage: sources -> extract -> store -> resolve -> present.
"""

__version__ = "0.1.0"
