"""Proof against the real consumer: our TRL rows through TRL's own data utilities and trainer.

Skipped unless the ``trl`` extra is installed (``pip install 'whileai[trl]'``, ``make test-trl``).
The tokenizer is built here (a byte-level BPE trained on the test's own text, with a small chat
template that renders tool calls with ``| tojson`` and marks agent turns with ``{% generation %}``),
so nothing is downloaded. The checks decode exactly the tokens TRL would train on and compare them
with the agent's turns.
"""

from __future__ import annotations

import json

import pytest

trl = pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
datasets = pytest.importorskip("datasets")

from trl.data_utils import (  # noqa: E402
    is_conversational,
    maybe_apply_chat_template,
    maybe_extract_prompt,
    maybe_unpair_preference_dataset,
)

from whileai.exporters import (  # noqa: E402
    export_dataset,
    export_preference,
    preference_rows,
    training_rows,
    trl_dataset,
)
from whileai.train._tiny import TINY_CHAT_TEMPLATE, TINY_SPECIAL_TOKENS  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # transformers' own deprecations

SYS = "You help customers with orders."
TOOLS = [
    {"type": "function", "function": {"name": "get_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
    {"type": "function", "function": {"name": "refund_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}}}}},
]
# The tiny chat template and special tokens wai.train uses: agent turns wrapped in {% generation %}
# so TRL's assistant_only_loss can find them, tool-call arguments rendered with | tojson as HF
# chat templates do. The tokenizer below is byte-level BPE (not the tiny model's word level), so
# the masks are checked against sub-word tokens.
SPECIAL = list(TINY_SPECIAL_TOKENS)
TEMPLATE = TINY_CHAT_TEMPLATE


def _call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def conversations():
    """Three-agent-turn conversations calling two tools with different argument keys."""
    rows = []
    for i in range(4):
        msgs = [
            {"role": "user", "content": f"Refund order A-{i}, it never came."},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [_call("c0", "get_order", {"order_id": f"A-{i}"})]},
            {"role": "tool", "content": json.dumps({"status": "lost", "total": 20 + i}), "tool_call_id": "c0", "name": "get_order"},
            {"role": "assistant", "content": "", "tool_calls": [_call("c1", "refund_order", {"order_id": f"A-{i}", "amount": 20 + i})]},
            {"role": "tool", "content": json.dumps({"status": "refunded"}), "tool_call_id": "c1", "name": "refund_order"},
            {"role": "assistant", "content": f"Refunded {20 + i} for order A-{i}."},
        ]
        rows.append({"scenario_id": f"t{i // 2}", "rollout_index": i % 2, "messages": msgs, "reward": 1.0})
    return rows


def agent_text(message: dict) -> str:
    """What the template renders inside one agent turn's generation block."""
    out = message.get("content") or ""
    for c in message.get("tool_calls") or []:
        args = c["function"]["arguments"]
        args = json.loads(args) if isinstance(args, str) else args
        out += f"<call>{c['function']['name']} {json.dumps(args)}</call>"
    return out + "<|end|>"


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [json.dumps(r) for r in conversations()] * 3
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>")
    fast.chat_template = TEMPLATE
    return fast


def _trained_text(tokenizer, input_ids, mask) -> str:
    return tokenizer.decode([t for t, m in zip(input_ids, mask) if m])


def _trainer_trained_text(tokenizer, example, mask_column) -> str:
    """The tokens the trainer puts loss on: its mask column, or (newer TRL) labels != -100."""
    if mask_column in example:
        return _trained_text(tokenizer, example["input_ids"], example[mask_column])
    return tokenizer.decode([t for t, label in zip(example["input_ids"], example["labels"]) if label != -100])


# ------------------------------------------------------------------------------------------
# data utilities
# ------------------------------------------------------------------------------------------


def test_sft_rows_are_conversational_and_render_arguments_once(tokenizer):
    rows = training_rows(conversations(), format="trl", system_prompt=SYS, tools=TOOLS)
    for row in rows:
        assert is_conversational(row)
        text = maybe_apply_chat_template(row, tokenizer)["text"]
        assert text.startswith(f"<|system|>{SYS}<|end|><|user|>")
        assert '<call>refund_order {"amount": ' in text  # an object, rendered once by | tojson
        assert '\\"' not in text
    # the OpenAI wire shape (arguments as JSON strings) is quoted twice by the same template:
    # exactly the bug the trl format exists to avoid
    wire = training_rows(conversations(), format="openai", system_prompt=SYS)[0]
    doubled = tokenizer.apply_chat_template(wire["messages"], tokenize=False)
    assert '"{\\"order_id\\"' in doubled


def test_a_prompt_string_next_to_messages_breaks_trl():
    """Why the TRL rows carry no prompt string: TRL reads the column set and refuses the mix."""
    row = training_rows(conversations(), format="trl")[0]
    assert "prompt" not in row and row["prompt_text"].startswith("Refund")
    with pytest.raises(KeyError):
        trl.data_utils.apply_chat_template({**row, "prompt": row["prompt_text"]}, None)


def test_prompt_completion_rows_render_the_last_turn_as_completion(tokenizer):
    rows = training_rows(conversations(), format="trl", mask_mode="final", system_prompt=SYS)
    for row in rows:
        assert is_conversational(row)
        out = maybe_apply_chat_template(row, tokenizer)
        assert out["prompt"].endswith("<|assistant|>")
        assert out["completion"] == agent_text(row["completion"][0])


def test_jsonl_and_parquet_load_back_with_dict_arguments(tmp_path, tokenizer):
    rows = conversations()
    export_dataset(rows, tmp_path / "t.jsonl", format="trl", system_prompt=SYS, tools=TOOLS)
    export_dataset(rows, tmp_path / "t.parquet", format="trl", system_prompt=SYS, tools=TOOLS)
    want = [maybe_apply_chat_template(r, tokenizer)["text"]
            for r in training_rows(rows, format="trl", system_prompt=SYS, tools=TOOLS)]
    for kind, name in (("json", "t.jsonl"), ("parquet", "t.parquet")):
        ds = datasets.load_dataset(kind, data_files=str(tmp_path / name), split="train")
        first_call = ds[0]["messages"][2]["tool_calls"][0]["function"]["arguments"]
        assert first_call == {"order_id": "A-0"}, kind  # a dict, and no keys of the other tool added as nulls
        got = [maybe_apply_chat_template(ex, tokenizer)["text"] for ex in ds]
        assert got == want, kind


# ------------------------------------------------------------------------------------------
# the masks TRL builds: exactly the agent's turns
# ------------------------------------------------------------------------------------------


def test_assistant_masks_cover_exactly_the_agent_turns(tokenizer):
    rows = training_rows(conversations(), format="trl", system_prompt=SYS, tools=TOOLS)
    for row in rows:
        # what SFTTrainer(assistant_only_loss=True) calls for a messages row
        out = tokenizer.apply_chat_template(row["messages"], tools=json.loads(row["tools"]), tokenize=True,
                                            return_dict=True, return_assistant_tokens_mask=True)
        trained = _trained_text(tokenizer, out["input_ids"], out["assistant_masks"])
        expected = "".join(agent_text(m) for m in row["messages"] if m["role"] == "assistant")
        assert trained == expected
        untrained = tokenizer.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"]) if not m])
        assert "refunded" in untrained and SYS in untrained  # tool output and system prompt carry no loss


def _tiny_model(tokenizer):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return LlamaForCausalLM(config)


def _sft_dataset(tmp_path, tokenizer, rows, **config):
    """The dataset SFTTrainer builds from our rows (tokenized, masked), with a tiny local model."""
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(output_dir=str(tmp_path / "out"), report_to=[], max_steps=1, per_device_train_batch_size=2,
                     use_cpu=True, dataset_num_proc=None, **config)
    trainer = SFTTrainer(model=_tiny_model(tokenizer), args=args, processing_class=tokenizer,
                         train_dataset=datasets.Dataset.from_list(rows, on_mixed_types="use_json"))
    return trainer.train_dataset


def test_sft_trainer_masks_agent_turns_of_messages_rows(tmp_path, tokenizer):
    rows = training_rows(conversations(), format="trl", system_prompt=SYS, tools=TOOLS)
    ds = _sft_dataset(tmp_path, tokenizer, rows, assistant_only_loss=True)
    for ex, row in zip(ds, rows):
        trained = _trainer_trained_text(tokenizer, ex, "assistant_masks")
        assert trained == "".join(agent_text(m) for m in row["messages"] if m["role"] == "assistant")


@pytest.mark.parametrize("option", [{"mask_mode": "final"}, {"unroll": True}])
def test_sft_trainer_trains_one_turn_of_prompt_completion_rows(tmp_path, tokenizer, option):
    rows = training_rows(conversations(), format="trl", system_prompt=SYS, tools=TOOLS, **option)
    ds = _sft_dataset(tmp_path, tokenizer, rows)
    assert len(ds) == len(rows)
    for ex, row in zip(ds, rows):
        trained = _trainer_trained_text(tokenizer, ex, "completion_mask")
        assert trained == agent_text(row["completion"][0])


# ------------------------------------------------------------------------------------------
# preference pairs
# ------------------------------------------------------------------------------------------


def pairs():
    base = conversations()[0]["messages"]
    worse = [*base[:5], {"role": "assistant", "content": "Sorry, I cannot refund."},
             {"role": "user", "content": "Why?"}, {"role": "assistant", "content": "Policy."}]
    other = [*base[:3], {"role": "assistant", "content": "", "tool_calls": [_call("c1", "refund_order", {"order_id": "A-0",
                                                                                                        "amount": 999})]},
             {"role": "tool", "content": "{}", "tool_call_id": "c1"}, {"role": "assistant", "content": "Done."}]
    return [{"task_key": "t0", "prompt": base[0]["content"], "chosen": base, "rejected": worse,
             "chosen_reward": 1.0, "rejected_reward": 0.0},
            {"task_key": "t1", "prompt": base[0]["content"], "chosen": base, "rejected": other,
             "chosen_reward": 1.0, "rejected_reward": 0.0}]


def test_preference_rows_through_trl_helpers(tokenizer, tmp_path):
    rows = preference_rows(pairs(), format="trl", system_prompt=SYS)
    assert len(rows) == 2
    for row in rows:
        assert is_conversational(row)
        assert maybe_extract_prompt(row) == row  # explicit prompt: nothing to extract
        out = maybe_apply_chat_template(row, tokenizer)
        # DPO scores every completion token: each side is exactly the one diverging agent turn
        assert out["chosen"] == agent_text(row["chosen"][0])
        assert out["rejected"] == agent_text(row["rejected"][0])
        assert out["prompt"].endswith("<|assistant|>")
        assert "Why?" not in out["rejected"]  # later turns were cut (trl_turns_cut)
    report = export_preference(pairs(), tmp_path / "p.jsonl", format="trl", system_prompt=SYS)
    assert report["trl_turns_cut"] == 2
    ds = datasets.load_dataset("json", data_files=str(tmp_path / "p.jsonl"), split="train")
    # the same pairs as Parquet: arguments come back as dicts and render the same prompts and sides
    export_preference(pairs(), tmp_path / "p.parquet", format="trl", system_prompt=SYS)
    from_parquet = datasets.load_dataset("parquet", data_files=str(tmp_path / "p.parquet"), split="train")
    assert len(from_parquet) == len(ds)
    for a, b in zip(ds, from_parquet):
        assert maybe_apply_chat_template(b, tokenizer) == maybe_apply_chat_template(a, tokenizer)
    unpaired = maybe_unpair_preference_dataset(ds)
    assert len(unpaired) == 4 and sorted(unpaired["label"]) == [False, False, True, True]
    for ex in unpaired:
        out = maybe_apply_chat_template(ex, tokenizer)
        assert out["completion"].endswith("<|end|>")


def test_full_conversation_pairs_break_trl(tokenizer):
    """The OpenAI preference shape (a prompt string, whole conversations) is not TRL's: depending on
    which key TRL's is_conversational happens to look at, it raises or skips the template silently."""
    row = preference_rows(pairs(), format="openai")[0]
    try:
        out = maybe_apply_chat_template(row, tokenizer)
    except (TypeError, KeyError, ValueError):
        return
    assert out is row or out == row  # not rendered at all


def test_trl_dataset_keeps_arguments_as_written():
    ds = trl_dataset(conversations(), system_prompt=SYS)
    calls = [c for m in ds[0]["messages"] for c in (m.get("tool_calls") or [])]
    assert [c["function"]["arguments"] for c in calls] == [{"order_id": "A-0"}, {"order_id": "A-0", "amount": 20}]
    # what from_list does without it: the other tool's keys appear as nulls
    plain = datasets.Dataset.from_list(training_rows(conversations(), format="trl"))
    first = plain[0]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert first == {"order_id": "A-0", "amount": None}
    pairs_ds = trl_dataset(pairs(), kind="preference", system_prompt=SYS)
    assert len(pairs_ds) == 2 and set(pairs_ds.column_names) >= {"prompt", "chosen", "rejected"}
