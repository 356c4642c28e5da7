"""Export: training rows a trainer takes as they are.

OpenAI wire rows, TRL rows, preference pairs and a ``verifiers`` environment, written streaming
and atomically to JSONL or Parquet, or pushed to the Hugging Face Hub with a dataset card.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
