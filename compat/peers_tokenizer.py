"""A tiny tokenizer for GuideLLM, AIPerf and vLLM's benchmark (`make compat`, compat/peers.sh).

The three tools build their prompts with a Hugging Face tokenizer named by a hub id; this
machine reaches no model hub, so one is trained here from the repository's own docs with the
`tokenizers` package (a byte-level BPE of 2,000 tokens, a few seconds) and saved as a folder
that `transformers.AutoTokenizer.from_pretrained(DIR)` loads: tokenizer.json,
tokenizer_config.json and a config.json naming no model.

Usage: python peers_tokenizer.py OUT_DIR TEXT_FILE...
"""

import json
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers


def main() -> None:
    out, texts = sys.argv[1], sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2000,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train(texts, trainer)
    tok.save(os.path.join(out, "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 1000000,
        "bos_token": "<|endoftext|>",
        "eos_token": "<|endoftext|>",
        "unk_token": "<|endoftext|>",
    }
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=1)
    with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
        json.dump({k: config[k] for k in ("bos_token", "eos_token", "unk_token")}, f)
    # AutoTokenizer reads config.json for a model type when tokenizer_config names no class it
    # can use; gpt2 is a type every transformers version knows.
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"model_type": "gpt2", "vocab_size": tok.get_vocab_size()}, f)
    print(f"tokenizer of {tok.get_vocab_size()} tokens in {out}")


if __name__ == "__main__":
    main()
