"""What the ``huggingface_hub`` client can raise when the network, not the request, failed."""

from __future__ import annotations


def transport_errors() -> tuple[type[BaseException], ...]:
    """Connection, timeout and protocol errors of the client's HTTP library, plus ``OSError``.

    huggingface_hub 2.x talks through ``httpx2``, 1.x through ``httpx``; their errors do
    not derive from ``OSError``.  Offline mode raises ``OfflineModeIsEnabled``, a
    ``ConnectionError``.  Imported lazily so that the local-only paths never load them.
    """
    try:
        import httpx2 as http
    except ImportError:  # pragma: no cover - depends on the installed client
        import httpx as http  # type: ignore[no-redef]
    return (OSError, http.HTTPError)
