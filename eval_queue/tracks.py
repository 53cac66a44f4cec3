"""The tracks the leaderboard hosts: one :class:`TrackSpec` per track, registered once, here.

A track is a unit (docs/TRACKS.md).  Its code lives in its own folders — the domain
``leaderboard/tracks/<pkg>/`` (``definition``, ``schema``, ``metrics``, ``harness/``,
``sample_data/`` and its spec, ``SPEC`` in the package's ``__init__``), the app side
``leaderboard/tracks/<pkg>/app/`` (``results``, ``tables``, ``views``, ``tab``, ``panels``) and
the worker side ``backend/tracks/<pkg>/`` (``run``, ``convert``, ``data``) — and everything
else reaches it through its spec, found by name in the registry.  A spec says what the track
is (name, label), what a request of it may carry (:class:`TrackOptions`: its fields, their
validation, the file-name variant they select), what the worker adds for it
(:class:`WorkerOption`) and, as lazy ``"module:attribute"`` references, its runner, data check,
submission check, results parser, export, tabs, panels, ranking markers and About section: naming them costs
no import, so the queue never loads the UI and the UI never loads torch.

Adding a track is one package of its own and one line in :data:`TRACKS`.  Maintainers can
also register tracks from packages of their own, without editing this file, through
``EVALITA_EXTRA_TRACKS=name=module:attribute[,…]`` (read once per process).
"""

from __future__ import annotations

import functools
import importlib
import os
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval_queue.errors import ConfigurationError
from eval_queue.text import unknown_name

#: The tracks the leaderboard hosts, in the order the page shows them: name → its spec.
TRACKS: Mapping[str, str] = MappingProxyType(
    {
        "evalita": "leaderboard.tracks.evalita.spec:SPEC",
        "long-context": "leaderboard.tracks.long_context.spec:SPEC",
        "judge": "leaderboard.tracks.judge.spec:SPEC",
        "contamination": "leaderboard.tracks.contamination.spec:SPEC",
    }
)
#: The track of a request or results file that names none: every file written before tracks existed.
DEFAULT_TRACK = "evalita"
#: Tracks from maintainers' own packages: ``name=module:attribute``, comma-separated.
EXTRA_TRACKS_ENV = "EVALITA_EXTRA_TRACKS"


class UnknownTrackError(ConfigurationError, ValueError):
    """A track name no spec is registered under (the message suggests the closest one)."""


def load_reference(reference: str) -> Any:
    """Import ``"module:attribute"`` and return the attribute (a dotted attribute path is allowed)."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigurationError(f"not a 'module:attribute' reference: {reference!r}")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


# --------------------------------------------------------------------------- request options


def option(
    default: Any = None,
    *,
    flag: str | None = None,
    label: str = "",
    help: str = "",
    form: bool = True,
    choice_labels: Mapping[str, str] | None = None,
    placeholder: str = "",
) -> Any:
    """A request option field: its CLI flag (``--context``), its form label, help and choice labels.

    The flag also names the field on the web form and in ``/submit`` (``--judge-target`` →
    ``judge_target``); ``flag=None`` keeps a field off both (it is derived from others);
    ``form=False`` keeps it off the web form only.
    """
    extra = {
        "flag": flag,
        "label": label,
        "form": form and flag is not None,
        "choice_labels": dict(choice_labels or {}),
        "placeholder": placeholder,
    }
    return Field(default, description=help, json_schema_extra=extra)


class TrackOptions(BaseModel):
    """The request fields a track owns, kept at the top level of a request file (``tasks``, …).

    Subclass it with optional fields declared through :func:`option`; ``None`` means "the
    whole track" and is left out of the file.  A validator may canonicalise (a subset in
    definition order, the whole set as ``None``) or derive one field from another.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def variant(self) -> str | None:
        """What these options select, as request, results and details file names carry it (None: all)."""
        return None

    def describe(self) -> str:
        """The options in a few words for messages (``tasks wic, sa``); empty for the whole track."""
        parts = []
        for name, value in self.model_dump(mode="json", exclude_none=True).items():
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            parts.append(f"{name.replace('_', ' ')} {shown}")
        return "; ".join(parts)

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> TrackOptions:
        """Validate raw values; a :class:`ValueError` names the field and says what is wrong."""
        try:
            return cls.model_validate(dict(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "options"
            raise ValueError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None


_Member = TypeVar("_Member", bound=Enum)


def canonical_subset(
    values: Sequence[_Member] | None, members: type[_Member], field: str
) -> list[_Member] | None:
    """A subset option as stored: in the enum's order without repeats; the whole set is "all" (None)."""
    if values is None:
        return None
    chosen = set(values)
    if not chosen:
        raise ValueError(f"{field} is empty: leave it out to run all of them")
    if chosen == set(members):
        return None
    return [member for member in members if member in chosen]


class NoOptions(TrackOptions):
    """A track whose requests carry nothing beyond the model (the whole track, always)."""


@dataclass(frozen=True)
class OptionField:
    """One request option as the CLI and the web form show it (derived from the options model)."""

    name: str  # the request file's key
    flag: str | None  # ``--context``; None: not set by users
    label: str
    help: str
    #: ``(label, value)`` of each value a choice offers (enum values); empty for free text.
    choices: tuple[tuple[str, str], ...]
    #: Several values (a subset, ``wic,sa`` on the command line).
    multiple: bool
    #: On the web form (and ``/submit``).
    form: bool
    #: What an empty text box shows.
    placeholder: str = ""

    @property
    def key(self) -> str:
        """Its name on the web form, in ``/submit`` and in argparse: the flag without dashes."""
        return (self.flag or self.name).lstrip("-").replace("-", "_")


def option_fields(options: type[TrackOptions]) -> tuple[OptionField, ...]:
    """The fields of an options model as the CLI and the form need them, in declaration order."""
    hints = typing.get_type_hints(options)
    fields = []
    for name, info in options.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        enum, multiple = _enum_of(hints[name])
        labels = extra.get("choice_labels") or {}
        values = [str(member.value) for member in enum] if enum is not None else []
        fields.append(
            OptionField(
                name=name,
                flag=extra.get("flag"),  # type: ignore[arg-type]
                label=str(extra.get("label") or name.replace("_", " ")),
                help=info.description or "",
                choices=tuple((labels.get(value, value), value) for value in values),  # type: ignore[union-attr]
                multiple=multiple,
                form=bool(extra.get("form")),
                placeholder=str(extra.get("placeholder") or ""),
            )
        )
    return tuple(fields)


def _enum_of(annotation: Any) -> tuple[type[Enum] | None, bool]:
    """``list[X] | None`` → ``(X, True)`` for an enum X; ``X | None`` → ``(X, False)``."""
    multiple = False
    for arg in typing.get_args(annotation) or (annotation,):
        if arg is type(None):
            continue
        if typing.get_origin(arg) in (list, tuple):
            multiple = True
            arg = typing.get_args(arg)[0]
        if isinstance(arg, type) and issubclass(arg, Enum):
            return arg, multiple
    return None, multiple


# --------------------------------------------------------------------------- worker options


@dataclass(frozen=True)
class WorkerOption:
    """A ``python -m backend`` option a track adds (``--tasks``, ``--judge-data``).

    ``parse`` turns the text into the value the track's runner reads from
    ``WorkerConfig.track_options[dest]``; it raises ``ValueError`` (or an ``EvalitaError``)
    with a message saying what is valid.
    """

    flag: str
    help: str
    parse: Callable[[str], Any] = str
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class PanelRef:
    """A panel a track adds to another track's page: the page's id (``task``, ``model``) and the class."""

    page: str
    panel: str


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class TrackSpec:
    """Everything the rest of the product knows of one track.

    References (``"module:attribute"``) are imported on first use by :meth:`load`; each
    names the track's own code, with the contract documented in docs/TRACKS.md.
    """

    #: The name in request and results files, links and command lines (``long-context``).
    name: str
    #: How pages and messages name it (``Long context (INDAQA2)``).
    label: str
    #: One sentence for the submission form: what a request of this track runs.
    summary: str
    #: The request fields it owns.
    options: type[TrackOptions] = NoOptions
    #: The few-shot settings a request may ask for; empty: the track has none (``num_fewshot: 0``).
    fewshot: tuple[int, ...] = ()
    #: Options it adds to ``python -m backend``.
    worker_options: tuple[WorkerOption, ...] = ()
    #: ``(dataset path, config)`` pairs ``python -m backend prefetch`` fills the datasets cache with.
    hub_datasets: tuple[tuple[str, str | None], ...] = ()
    #: Options it adds to ``python -m backend prefetch``: each names more datasets to fetch (repeatable).
    prefetch_options: tuple[WorkerOption, ...] = ()
    #: The metric sets its scores come in, the default first (``leaderboard export --metrics``); empty: one.
    metric_sets: tuple[str, ...] = ()
    #: Its :class:`~leaderboard.core.schema.ResultsEnvelope` subclass (domain: the worker stamps it).
    results_type: str | None = None
    #: Worker: ``evaluate(request, config, context) -> Evaluation`` (:mod:`backend.tracks`).
    runner: str | None = None
    #: Worker: ``check_data(config, request)`` before ``request`` (of this track; None: unknown) is
    #: claimed (raises ``DataSourceError``: nothing is claimed).
    check_data: str | None = None
    #: Worker: ``main(argv) -> exit code`` of ``python -m backend rescore --track NAME``: its stored
    #: runs' metrics again from their details (None: the track cannot be rescored).
    rescore: str | None = None
    #: Worker: ``main(argv) -> exit code`` of ``python -m backend reproduce --track NAME``: a slice of
    #: one of its published runs again, compared (None: the track has none).
    reproduce: str | None = None
    #: Queue: ``check(options, stores)`` before anything is queued (raises ``SubmissionRejected``).
    check_submission: str | None = None
    #: App: ``parse(data: bytes, path) -> record`` for the results store reader.
    parse_results: str | None = None
    #: App: ``export(records, ExportOptions) -> ExportTable`` for ``leaderboard export --track``.
    export: str | None = None
    #: App: ``snapshot(store: StoreResults) -> view``, its view of one read of the results store, built
    #: once per results version and shared by its tabs (warmed off the request path if it has ``warm()``).
    snapshot: str | None = None
    #: App: its tabs (:class:`~leaderboard.ui.tab.Tab` classes), in page order.
    tabs: tuple[str, ...] = ()
    #: App: panels it adds to other tracks' pages.
    panels: tuple[PanelRef, ...] = ()
    #: App: ``markers(store: StoreResults) -> {(model, revision, task id): RankingMarker}``, the marks
    #: it puts on other tracks' ranking cells (``leaderboard.ui.markers``); None: it marks nothing.
    ranking_markers: str | None = None
    #: App: ``about_markdown() -> str``, its section of the About page.
    about: str | None = None
    #: Domain: its part of the contents table (a ``leaderboard.core.contents.TrackContents``: its
    #: columns and ``rows(results)``, the rows of one parsed results file); None: shared columns only.
    contents: str | None = None
    #: App: ``records(table) -> {results path: (store version, record)}``: the records its parser
    #: would return, built from the contents table (the app's cold start reads that one file
    #: instead of every results file).
    contents_record: str | None = None
    #: App: its part of the Every Eval Ever export (a ``leaderboard.eee.model.TrackEee``: its figures
    #: and its details lines as items); None: exported from its columns of the contents table.
    eee: str | None = None
    #: App: its scores on a model's Hub page (a ``leaderboard.hub_results.model.TrackHubResults``: the
    #: benchmark dataset, the ``.eval_results`` files of a model's comparable runs, its ``eval.yaml``);
    #: None: the track publishes none.
    hub_results: str | None = None

    def load(self, attribute: str) -> Any:
        """The object a reference field names (``spec.load("runner")``); None if the track has none."""
        reference = getattr(self, attribute)
        return None if reference is None else load_reference(reference)

    @property
    def option_fields(self) -> tuple[OptionField, ...]:
        return option_fields(self.options)

    @property
    def has_fewshot(self) -> bool:
        return bool(self.fewshot)

    def check_fewshot(self, num_fewshot: int) -> int:
        """``num_fewshot`` if this track runs it (one of :attr:`fewshot`; 0 for a track without
        few-shot settings); else a ``ValueError`` naming what it runs.  The one few-shot rule of
        requests, results files, the submission form and ``leaderboard export --fewshot``."""
        if not self.fewshot:
            if num_fewshot != 0:
                raise ValueError(f"the {self.name} track has no few-shot setting: num_fewshot must be 0")
        elif num_fewshot not in self.fewshot:
            raise ValueError(f"num_fewshot must be one of {list(self.fewshot)}, got {num_fewshot}")
        return num_fewshot


# --------------------------------------------------------------------------- the registry


class TrackRegistry:
    """Track name → :class:`TrackSpec`, loaded lazily from ``"module:attribute"`` references.

    A name registered twice is an error; an unknown name fails with a suggestion.  Specs are
    loaded on first lookup; :meth:`specs` loads them all and checks that no two tracks claim
    the same request field or worker flag.
    """

    def __init__(self, references: Sequence[tuple[str, str]]) -> None:
        self._references: dict[str, str] = {}
        for name, reference in references:
            if name in self._references:
                raise ConfigurationError(f"track {name!r} is registered twice")
            self._references[name] = reference
        self._specs: dict[str, TrackSpec] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order (what the page and the CLI list)."""
        return tuple(self._references)

    def __contains__(self, name: object) -> bool:
        return name in self._references

    def spec(self, name: str) -> TrackSpec:
        """The spec of ``name`` (imported now); :class:`UnknownTrackError` with a suggestion."""
        spec = self._specs.get(name)
        if spec is not None:
            return spec
        reference = self._references.get(name)
        if reference is None:
            raise UnknownTrackError(unknown_name("track", name, self.names))
        spec = load_reference(reference)
        if not isinstance(spec, TrackSpec) or spec.name != name:
            raise ConfigurationError(f"{reference} is not the TrackSpec of track {name!r}")
        self._specs[name] = spec
        return spec

    def specs(self) -> tuple[TrackSpec, ...]:
        """Every spec, loaded and checked together (request fields and worker flags unique)."""
        specs = tuple(self.spec(name) for name in self.names)
        _check_unique("request field", [(s.name, f.name) for s in specs for f in s.option_fields])
        _check_unique("worker option", [(s.name, o.flag) for s in specs for o in s.worker_options])
        _check_unique("prefetch option", [(s.name, o.flag) for s in specs for o in s.prefetch_options])
        return specs

    def __iter__(self) -> Iterator[TrackSpec]:
        return iter(self.specs())

    def owner_of_option(self, field_name: str) -> str | None:
        """The track whose requests carry ``field_name`` (None: no track's)."""
        for spec in self.specs():
            if field_name in spec.options.model_fields:
                return spec.name
        return None


def _check_unique(what: str, owned: list[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for track, key in owned:
        if key in seen and seen[key] != track:
            raise ConfigurationError(f"{what} {key!r} is claimed by tracks {seen[key]!r} and {track!r}")
        seen[key] = track


def extra_tracks(value: str | None) -> list[tuple[str, str]]:
    """``name=module:attr,…`` (:data:`EXTRA_TRACKS_ENV`) → pairs; a malformed entry is a configuration error."""
    pairs = []
    for entry in (value or "").split(","):
        if not entry.strip():
            continue
        name, sep, reference = entry.strip().partition("=")
        if not sep or not name or ":" not in reference:
            raise ConfigurationError(f"{EXTRA_TRACKS_ENV}: {entry!r} is not name=module:attribute")
        pairs.append((name, reference))
    return pairs


@functools.cache
def track_registry() -> TrackRegistry:
    """The process's registry: :data:`TRACKS`, then :data:`EXTRA_TRACKS_ENV`'s (read once)."""
    return TrackRegistry([*TRACKS.items(), *extra_tracks(os.environ.get(EXTRA_TRACKS_ENV))])


def track_spec(name: str) -> TrackSpec:
    """The spec of track ``name`` in the process's registry."""
    return track_registry().spec(name)


__all__ = [
    "DEFAULT_TRACK",
    "EXTRA_TRACKS_ENV",
    "TRACKS",
    "NoOptions",
    "OptionField",
    "PanelRef",
    "TrackOptions",
    "TrackRegistry",
    "TrackSpec",
    "UnknownTrackError",
    "WorkerOption",
    "canonical_subset",
    "extra_tracks",
    "load_reference",
    "option",
    "option_fields",
    "track_registry",
    "track_spec",
]
