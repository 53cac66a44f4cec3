"""A tiny random causal LM, built in a temp dir in about a second, for backend tests.

A byte-level BPE trained with ``tokenizers`` on a few Italian sentences plus a
2-layer Llama config with random weights.  :func:`install_tiny_model` files it into a
Hugging Face hub cache folder (``models--<org>--<name>/refs/main`` → a sha,
``snapshots/<sha>/…``) so it is submitted, resolved and loaded exactly like a hub model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

TINY_MODEL_ID = "evalita-tests/tiny-llama"

_CORPUS = [
    "La frase implica logicamente che la seconda frase sia vera? Sì. No. Vero. Falso.",
    "Riassumi il seguente articolo di giornale. Riassunto: il governo ha approvato la legge.",
    "Estrai tutte le entità di tipo PER, LOC e ORG dal testo seguente. Entità: Roma$LOC, Mario Rossi$PER.",
    "Qual è il sentimento espresso nel tweet? Positivo, Negativo, Neutrale, Misto.",
    "Trova 10 parole che possono sostituire la parola racchiusa tra i marcatori <head>.",
    "Domanda: quale servizio offre il comune? Risposta: A B C D E. Il tweet contiene discorso d'odio?",
    "La parola nella frase ha lo stesso significato della parola nell'altra frase? Le relazioni tra esami.",
]

MODEL_CARD = """\
---
license: apache-2.0
pipeline_tag: text-generation
tags:
- pretrained
---
# tiny-llama (random weights, for tests only)
"""


@dataclass(frozen=True)
class TinyModel:
    model_id: str
    revision: str
    folder: Path  # a plain model folder (pretrained=<folder> works too)
    cache_dir: Path  # the hub cache holding the entry


def build_tiny_model(folder: Path, *, vocab_size: int = 384, seed: int = 0) -> Path:
    """Write config, random weights and a trained byte-level BPE tokenizer into ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", model_max_length=2048
    )
    fast.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = fast.pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    (folder / "README.md").write_text(MODEL_CARD)
    return folder


def folder_revision(folder: Path) -> str:
    """A deterministic 40-hex revision: sha1 over the folder's file names and bytes."""
    digest = hashlib.sha1()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def install_tiny_model(root: Path, model_id: str = TINY_MODEL_ID) -> TinyModel:
    """Build the model under ``root/model`` and file it into the hub cache ``root/hub``."""
    from backend.embedded import install_snapshot

    folder = build_tiny_model(root / "model")
    revision = folder_revision(folder)
    cache_dir = root / "hub"
    install_snapshot(folder, model_id, revision, cache_dir)
    return TinyModel(model_id=model_id, revision=revision, folder=folder, cache_dir=cache_dir)
