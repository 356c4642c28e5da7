"""A tiny causal LM and its tokenizer built locally, for smoke runs on CPU with no download.

The tokenizer is a word-level vocabulary learnt from the rendered conversations themselves, with a
small chat template that marks the agent's turns with ``{% generation %}`` (what TRL's
``assistant_only_loss`` reads) and renders tool-call arguments with ``| tojson`` as Hugging Face
templates do. The model is a two-layer Llama with random weights: it learns nothing useful, but it
exercises the same masks, losses, generation and callbacks a real base model goes through.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from whileai.defaults import DEFAULT_SEED, TRAIN_TINY_HIDDEN, TRAIN_TINY_LAYERS

__all__ = ["TINY_CHAT_TEMPLATE", "TINY_SPECIAL_TOKENS", "build_tiny_model", "tiny_rollouts"]

#: Special tokens of the tiny tokenizer: role openers, the end of a turn, tool-call brackets, pad, unknown.
TINY_SPECIAL_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|end|>", "<call>", "</call>",
                       "<|pad|>", "<|unk|>")

#: The tiny chat template: agent turns inside {% generation %}, tool-call arguments through | tojson.
TINY_CHAT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}"
    "<|assistant|>{% generation %}{{ m.content or '' }}"
    "{%- if m.tool_calls -%}{%- for c in m.tool_calls -%}"
    "<call>{{ c.function.name }} {{ c.function.arguments | tojson }}</call>"
    "{%- endfor -%}{%- endif -%}<|end|>{% endgeneration %}"
    "{%- else -%}<|{{ m.role }}|>{{ m.content }}<|end|>{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
)


def _texts(conversations: Iterable[Any]) -> list[str]:
    """Every string a conversation carries (contents, tool names, argument JSON), for the vocabulary."""
    out: list[str] = []
    for item in conversations:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            out.extend(_texts(item.values()))
            out.extend(str(k) for k in item)
        elif isinstance(item, Sequence):
            out.extend(_texts(item))
        elif item is not None:
            out.append(json.dumps(item))
    return out


def build_tiny_model(path: str | os.PathLike[str], texts: Iterable[Any], *, extra_words: Sequence[str] = (),
                     hidden: int = TRAIN_TINY_HIDDEN, layers: int = TRAIN_TINY_LAYERS,
                     seed: int = DEFAULT_SEED) -> str:
    """Write a tiny Llama and a word-level tokenizer learnt from ``texts`` to ``path``; return the path.

    The directory loads with ``AutoModelForCausalLM.from_pretrained(path)`` and
    ``AutoTokenizer.from_pretrained(path)``, so it goes wherever a hub name goes
    (``base_model=path``). ``texts`` may be strings, row dicts or whole conversations: every
    string inside is read, and the rendered JSON of tool-call arguments is added so the template's
    ``| tojson`` output tokenizes without unknowns.

    Args:
        path: Directory to write (created).
        texts: Strings, rows or conversations the vocabulary is learnt from.
        extra_words: Words added to the vocabulary (a phrase a planted judge pays, say).
        hidden: Hidden size.
        layers: Decoder layers.
        seed: Seed of the random weights.

    Returns:
        ``str(path)``.

    Raises:
        MissingExtraError: ``transformers``, ``tokenizers`` or ``torch`` is not installed.
    """
    from whileai.train._extra import require

    require("torch", "transformers", "tokenizers")
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    corpus = _texts(texts) + list(extra_words)
    tok = Tokenizer(models.WordLevel(unk_token="<|unk|>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=list(TINY_SPECIAL_TOKENS), min_frequency=1)
    tok.train_from_iterator([*corpus, *(json.dumps(t) for t in corpus)], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>",
                                   unk_token="<|unk|>")
    fast.chat_template = TINY_CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=2048, pad_token_id=fast.pad_token_id,
                         eos_token_id=fast.eos_token_id, bos_token_id=None, tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = fast.pad_token_id
    model.generation_config.eos_token_id = fast.eos_token_id
    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(target))
    fast.save_pretrained(str(target))
    return str(target)


def tiny_rollouts(n_tasks: int = 8, k: int = 4, *, seed: int = DEFAULT_SEED, task_prefix: str = "sc-",
                  pass_rate: float = 0.5, reply_chars: int = 60) -> Any:
    """Graded rollouts for a smoke run: ``whileai.testing.rollout_table`` with one phrasing per ask.

    Every rollout of a task shares the first rollout's user turn (so pairs of the same ask share
    their prompt, as preference training needs) and the agent's last reply is cut to
    ``reply_chars`` (so a few CPU steps go far).
    """
    import polars as pl

    from whileai.testing import rollout_table

    df = rollout_table(n_tasks, k, seed=seed, messages=True, pass_rates=[pass_rate] * n_tasks, task_prefix=task_prefix)
    rows = df.to_dicts()
    first: dict[str, str] = {}
    for row in rows:
        prompt = first.setdefault(row["scenario_id"], row["prompt"])
        row["prompt"] = prompt
        row["final_text"] = row["final_text"][:reply_chars]
        msgs = row["messages"]
        msgs[0]["content"] = prompt
        msgs[-1]["content"] = row["final_text"]
    return pl.DataFrame(rows, schema=df.schema)
