"""English WordNet 3.0 for NLTK's METEOR, read offline from Debian's ``wordnet-base``.

``nltk.download("wordnet")`` needs the network.  Debian's ``wordnet-base`` package
(``scripts/setup.sh`` installs it) ships the WordNet 3.0 database files in
``/usr/share/wordnet``, which NLTK's ``WordNetCorpusReader`` reads, with two gaps:

* NLTK ≥ 3.9 refuses to open files outside its data roots: the folder is added to
  ``nltk.data.path`` (NLTK's documented way to authorise a data folder);
* the package has no ``lexnames`` file (the numbered list of the 45 lexicographer files,
  fixed by WordNet 3.0 and documented in ``lexnames(5WN)``); the reader below serves it
  from :data:`LEXNAMES`.  METEOR only uses synsets' lemma names, never lexnames.

Set ``EVALITA_WORDNET_DIR`` to read another WordNet 3.0 folder (e.g. an ``nltk_data``
``corpora/wordnet``).

NLTK parses the four ``index.*`` files into its lemma → synsets map each time a reader is made
(about 1.5 s of CPU, in every worker process that scores METEOR).  The map is kept in a cache
file (:func:`index_cache_file`, under ``$XDG_CACHE_HOME/wordnet-index``) named after the folder and the
index files' sizes and times, so a changed WordNet is parsed again; a cache that cannot be read or
written is ignored (the files are parsed, as without it).
"""

from __future__ import annotations

import hashlib
import io
import logging
import marshal
import os
import sys
import warnings
from collections.abc import Mapping
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from eval_queue.errors import ConfigurationError

log = logging.getLogger(__name__)

DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
WORDNET_DIR_ENV = "EVALITA_WORDNET_DIR"
INSTALL_HINT = "install Debian's wordnet-base (scripts/setup.sh does: apt-get install wordnet-base)"

#: WordNet 3.0's lexicographer files, in number order (lexnames(5WN)).
LEXNAMES: tuple[str, ...] = (
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
)
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    """The ``lexnames`` file as NLTK's WordNet distribution has it: ``NN<TAB>name<TAB>pos``."""
    return "".join(
        f"{index:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for index, name in enumerate(LEXNAMES)
    )


def wordnet_dir() -> Path:
    return Path(os.environ.get(WORDNET_DIR_ENV) or DEFAULT_WORDNET_DIR)


def index_cache_file(root: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where the lemma map of the WordNet in ``root`` is cached: named after the folder and its index files.

    Under ``$XDG_CACHE_HOME/wordnet-index`` (else ``~/.cache/wordnet-index``); another folder, an index
    file of another size or time, another NLTK (which builds the map) or another Python (whose
    ``marshal`` writes it) has another name.
    """
    env = os.environ if env is None else env
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    key = hashlib.sha256(str(root).encode())
    key.update(f"\0nltk {version('nltk')}\0python {sys.version_info[:2]}\0marshal {marshal.version}".encode())
    for name in sorted(p.name for p in root.glob("index.*")):
        stat = (root / name).stat()
        key.update(f"\0{name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return base / "wordnet-index" / f"{key.hexdigest()[:24]}.marshal"


def _read_index_cache(path: Path) -> dict[str, dict[str, list[int]]] | None:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def _write_index_cache(path: Path, lemma_map: dict[str, dict[str, list[int]]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # one per process: several may write at once
        tmp.write_bytes(marshal.dumps({lemma: dict(by_pos) for lemma, by_pos in lemma_map.items()}))
        tmp.replace(path)
    except OSError as exc:  # a read-only home: parse again next time
        log.debug("WordNet index not cached at %s: %s", path, exc)


@cache
def load_wordnet(folder: Path | None = None) -> Any:
    """A ``WordNetCorpusReader`` over ``folder`` (default :func:`wordnet_dir`), loaded once.

    Raises :class:`ConfigurationError` saying how to install the data when it is missing.
    """
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    root = (folder or wordnet_dir()).resolve()
    if not (root / "data.noun").is_file() or not (root / "index.noun").is_file():
        raise ConfigurationError(
            f"English WordNet 3.0 not found in {root} (needed by METEOR): {INSTALL_HINT}"
        )
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))

    class _Reader(WordNetCorpusReader):
        def open(self, file: str) -> Any:  # type: ignore[override]
            if file == "lexnames" and not (root / "lexnames").is_file():
                return io.StringIO(lexnames_text())
            return super().open(file)

        def _load_lemma_pos_offset_map(self) -> None:
            cache_file = index_cache_file(root)
            cached = _read_index_cache(cache_file)
            if cached is not None:
                self._lemma_pos_offset_map.update(cached)
                return
            super()._load_lemma_pos_offset_map()
            _write_index_cache(cache_file, self._lemma_pos_offset_map)

        def map_wn(self, version: str = "wordnet") -> None:
            # Maps another WordNet's synset ids onto this one, for Open Multilingual
            # Wordnet data only; it would look for ``nltk_data/corpora/wordnet``.
            del version

    with warnings.catch_warnings():
        # No Open Multilingual Wordnet offline: METEOR needs English synsets only.
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return _Reader(str(root), None)
