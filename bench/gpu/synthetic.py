"""Real-size synthetic Evalita data, a BPE tokenizer and a random-weight Llama, for the GPU benchmark.

    python bench/gpu/synthetic.py OUT [--model 8b|tiny] [--device cuda|cpu] [--scale 1.0]

writes ``OUT/data`` (all ten tasks in the layout of ``leaderboard/tracks/evalita/sample_data``, so the worker
reads it as ``--data local:OUT/data``), ``OUT/corpus.txt``, and ``OUT/model`` (config,
random weights, a byte-level BPE of 32,000 tokens trained on the corpus): a model folder
lm-eval loads like any other.  ``8b`` is the 7.24B-parameter Llama of the issue
(``LlamaConfig(4096, 14336, 32 layers, 32 heads, 8 KV heads)``), built on the GPU in bf16;
``tiny`` a 2-layer one for a CPU dry run (``--scale 0.02`` keeps that quick).

Adapted from ``../shared/gpu/gen_data.py``, ``gen_data_gen.py`` and ``make_tok.py`` (the
project's GPU notes, not part of this repository): the same word model, schemas and test
sizes (MC: TE 400, SA 2000, WIC 500, HS 1763, AT 500, FAQ 401; generative: LS 1710, NER adg
521 / fic 1517 / wn 2088, RE 1064, SUM 8437), written into this project's layout
(``backend/tracks/evalita/data/layout.yaml``).  Random weights cost the same compute as real ones but
never emit a stop sequence: every answer runs to its cap.  Deterministic (seeded).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

R = random.Random(20261122)

COMMON_TEXT = """il la lo i gli le un una uno di a da in con su per tra fra e o ma se che
non più come anche quando dove perché però quindi poi già ancora sempre mai molto poco
tutto tutti tutte questo questa questi queste quello quella quelli sono è era erano
essere avere ha hanno ho abbiamo avete fare fatto detto dire stato stata stati può
possono deve devono viene vengono anno anni giorno giorni tempo volta volte casa vita
mondo paese città governo stato lavoro parte persone persona uomo donna bambini
famiglia amico amici scuola problema problemi momento modo cosa cose niente nulla
nuovo nuova grande grandi piccolo piccola primo prima ultimo ultima altro altra altri
altre stesso stessa bene male meglio peggio oggi ieri domani ora adesso qui là sotto
sopra dopo prima durante contro senza verso secondo circa del della dei delle degli
al alla ai alle agli dal dalla dai dalle nel nella nei nelle sul sulla sui sulle
italia italiano italiana italiani europa roma milano napoli torino politica partito
ministro presidente legge diritto diritti sistema servizio servizi acqua salute medico
malattia paziente pazienti cellula cellule sangue cuore organo funzione processo
risposta domanda richiesta informazioni contratto utenza fattura pagamento bolletta
contatore allaccio fornitura ufficio sportello pratica documento modulo numero codice
cliente clienti società azienda rete tariffa costo costi consumo consumi lettura
periodo mese mesi settimana ore caso casi esempio fine inizio punto parola parole
frase significato senso storia libro film musica gioco squadra partita calcio notizia
notizie giornale televisione social tweet video foto immagine messaggio voglio vuole
possiamo sappiamo sapere vedere visto sentire pensare pensa credo credere parlare
parla andare vado andiamo venire tornare restare lasciare prendere dare trovare
usare uso bello bella brutto vero vera falso giusto sbagliato forte debole alto basso
lungo breve facile difficile possibile impossibile importante necessario pubblico
privato sociale economico economica crisi soldi euro tasse lavoratori sindacato
immigrati migranti stranieri sicurezza polizia giustizia scuole università studenti
insegnanti ospedale cura farmaco terapia sintomi diagnosi acido proteina molecola
energia reazione struttura forma figura valore valori misura quantità livello"""
COMMON = COMMON_TEXT.split()
SYLLABLES_TEXT = (
    "ba be bi bo bu ca ce chi co cu da de di do du fa fe fi fo fu ga ge gi go gu la le li lo lu "
    "ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu "
    "va ve vi vo vu za ze zi zo zu sta ste sti sto stra tra tre tri pro pre gra gre gli gno gna "
    "zio zia mento zione bile ista ismo ante ente ato ata uto uta ino ina etto etta one oni"
)
SYLLABLES = SYLLABLES_TEXT.split()
ENDINGS = ["o", "a", "i", "e", "o", "a", "e", "i", "o", "zione", "mente", "ità", "ismo", "ista"]
CUMULATIVE = list(itertools.accumulate(1.0 / (i + 1) ** 0.9 for i in range(len(COMMON))))
EXAMS_TEXT = (
    "emoglobina glicemia creatinina colesterolo pressione temperatura piastrine leucociti sodio potassio"
)
EXAMS = EXAMS_TEXT.split()
UNITS = ["mg/dl", "g/dl", "mmHg", "mmol/l", "°C", "/mm3", "%", "U/l"]


# --------------------------------------------------------------------------- Italian-like text


def pseudo(cap: bool = False) -> str:
    word = "".join(R.choices(SYLLABLES, k=R.choice([1, 2, 2, 3, 3, 4]))) + R.choice(ENDINGS)
    return word.capitalize() if cap or R.random() < 0.15 else word


def words(n: int, tweet: bool = False) -> list[str]:
    out = R.choices(COMMON, cum_weights=CUMULATIVE, k=n)
    for i in range(n):
        if R.random() < 0.30:
            out[i] = pseudo()
        if tweet and R.random() < 0.05:
            out[i] = "@" + pseudo()
        elif tweet and R.random() < 0.05:
            out[i] = "#" + pseudo(cap=True)
        if i < n - 1 and R.random() < 0.08:
            out[i] += ","
    if tweet and R.random() < 0.2:
        out.append("https://t.co/" + "".join(R.choices(string.ascii_letters + string.digits, k=10)))
    return out


def sentence(nmin: int, nmax: int, tweet: bool = False, end: str = ".") -> str:
    text = " ".join(words(R.randint(nmin, nmax), tweet))
    return text[0].upper() + text[1:] + end


def text(nmin: int, nmax: int, tweet: bool = False) -> str:
    total, parts = R.randint(nmin, nmax), []
    while total > 0:
        k = min(total, R.randint(6, 18))
        parts.append(sentence(k, k, tweet, R.choice(".!?.." if tweet else ".")))
        total -= k
    return " ".join(parts)


# --------------------------------------------------------------------------- rows per dataset (upstream schemas)


def te(n: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "text1": text(22, 45), "text2": sentence(7, 16), "entailment": R.choice(["SI", "NO"])}
        for i in range(n)
    ]


def sa(n: int) -> list[dict[str, Any]]:
    return [
        {
            "idtwitter": str(10**17 + R.randrange(10**17)),
            "subj": "1",
            "opos": str(R.randint(0, 1)),
            "oneg": str(R.randint(0, 1)),
            "iro": "0",
            "lpos": "0",
            "lneg": "0",
            "top": "0",
            "text": text(12, 30, tweet=True),
        }
        for _ in range(n)
    ]


def wic(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        target = R.choice(COMMON[60:])
        row: dict[str, Any] = {"id": i, "lemma": target, "label": R.randint(0, 1)}
        for k in (1, 2):
            left = " ".join(words(R.randint(4, 14)))
            left = left[0].upper() + left[1:]
            row[f"sentence{k}"] = f"{left} {target} {' '.join(words(R.randint(6, 14)))}."
            row[f"start{k}"], row[f"end{k}"] = len(left) + 1, len(left) + 1 + len(target)
        rows.append(row)
    return rows


def hs(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": str(i),
            "full_text": text(14, 35, tweet=True),
            "hs": R.randint(0, 1),
            "stereotype": R.randint(0, 1),
            "source": "tweets",
        }
        for i in range(n)
    ]


def at(n: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "Question": text(25, 50)[:-1] + "?"}
        | {letter: sentence(1, 8, end="") for letter in "ABCDE"}
        | {"Correct": R.choice("ABCDE")}
        for i in range(n)
    ]


def faq(n: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "question": sentence(8, 20, end="?")}
        | {letter: text(35, 85) for letter in "ABCD"}
        | {"correct_answer": R.choice("ABCD")}
        for i in range(n)
    ]


def ls(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        w = words(R.randint(15, 45))
        k = R.randrange(2, len(w) - 1)
        w[k] = f"<head>{w[k].strip(',')}</head>"
        context = " ".join(w)
        answers = [{"word": R.choice(COMMON), "count": R.randint(1, 5)} for _ in range(R.randint(0, 8))]
        rows.append({"id": i, "context": context[0].upper() + context[1:] + ".", "answers": answers})
    return rows


def ner(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        w = words(R.randint(12, 50))
        entities = []
        for _ in range(R.randint(0, 4)):
            name = " ".join(pseudo(cap=True) for _ in range(R.choice([1, 1, 2])))
            w[R.randrange(len(w))] = name
            entities.append({"entity_text": name, "type": R.choice(["PER", "LOC", "ORG"])})
        body = " ".join(w)
        rows.append({"id": i, "text": body[0].upper() + body[1:] + ".", "entities": entities})
    return rows


def relations(n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        w = words(R.randint(30, 120))
        found = []
        for _ in range(R.randint(0, 4)):
            exam, value = R.choice(EXAMS), f"{R.randint(1, 400)} {R.choice(UNITS)}"
            w[R.randrange(len(w))] = f"{exam} {value}"
            found.append([value, exam])
        body = " ".join(w)
        rows.append({"id": i, "text": body[0].upper() + body[1:] + ".", "relations": found})
    return rows


def summaries(n: int) -> list[dict[str, Any]]:
    return [{"source": text(400, 600), "target": text(30, 60)} for _ in range(n)]


#: file (relative to the data root, as in backend/tracks/evalita/data/layout.yaml) → (rows, real size)
FILES: dict[str, tuple[Callable[[int], list[dict[str, Any]]], int]] = {
    "te/test.jsonl": (te, 400),
    "te/dev.jsonl": (te, 40),
    "sa/test.jsonl": (sa, 2000),
    "sa/train.jsonl": (sa, 40),
    "wic/test.jsonl": (wic, 500),
    "wic/dev.jsonl": (wic, 40),
    "hs/test_all.jsonl": (hs, 1763),
    "hs/dev.jsonl": (hs, 40),
    "at/test.jsonl": (at, 500),
    "at/dev.jsonl": (at, 40),
    "faq/test_1.jsonl": (faq, 401),
    "faq/dev_1.jsonl": (faq, 40),
    "ls/test.jsonl": (ls, 1710),
    "ls/dev.jsonl": (ls, 20),
    **{
        f"ner/{domain}/{split}.jsonl": (
            ner,
            size if split == "reduced_test" else {"trial": 10, "dev": 20}[split],
        )
        for domain, size in (("adg", 521), ("fic", 1517), ("wn", 2088))
        for split in ("reduced_test", "trial", "dev")
    },
    "re/test.jsonl": (relations, 1064),
    "re/dev.jsonl": (relations, 20),
    "sum/test.jsonl": (summaries, 8437),
    "sum/dev.jsonl": (summaries, 20),
}


def write_data(root: Path, scale: float) -> None:
    for relative, (rows, size) in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        few_shot = relative.endswith(("dev.jsonl", "dev_1.jsonl", "train.jsonl", "trial.jsonl"))
        count = size if few_shot else max(5, round(size * scale))
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows(count)))


def write_corpus(path: Path, lines: int) -> None:
    path.write_text("".join(text(10, 60, tweet=R.random() < 0.4) + "\n" for _ in range(lines)))


# --------------------------------------------------------------------------- tokenizer and model


def train_tokenizer(corpus: Path, out: Path) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=32000,
        min_frequency=2,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([str(corpus)], trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", model_max_length=8192
    )
    fast.save_pretrained(out)
    return fast


def build_model(tokenizer: Any, out: Path, size: str, device: str) -> int:
    """Random weights (seed 0), saved as a normal model folder; returns the parameter count."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    shape = (
        {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32}
        | {"num_key_value_heads": 8}
        if size == "8b"
        else {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}
        | {"num_key_value_heads": 2}
    )
    config = LlamaConfig(
        **shape,
        vocab_size=len(tokenizer),
        max_position_embeddings=8192,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    return sum(p.numel() for p in model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--model", choices=("8b", "tiny"), default="8b")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the real test sizes")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    write_data(args.out / "data", args.scale)
    write_corpus(args.out / "corpus.txt", max(2000, round(60000 * min(1.0, args.scale * 5))))
    tokenizer = train_tokenizer(args.out / "corpus.txt", args.out / "model")
    params = build_model(tokenizer, args.out / "model", args.model, args.device)
    print(f"data in {args.out / 'data'}; model ({params / 1e9:.2f}B parameters) in {args.out / 'model'}")


if __name__ == "__main__":
    main()
