"""The ``huggingface_hub`` client as every hub store uses it: its transport errors and its timeouts.

Timeouts are set in one place, :func:`install_hub_timeouts`, from
:class:`~eval_queue.settings.HubTimeouts`.  ``huggingface_hub`` sends every request
through one shared ``httpx`` client whose default has no timeout, and several of its
calls (``repo_info``, ``list_repo_tree``, ``create_commit``) pass ``timeout=None``
explicitly, which overrides a client-wide default.  So the client is built with a
transport that applies our connect and read timeouts to every request: where a request
left them unset, and as a cap where it set a longer one.  Without this, a hub that accepts
a request and never answers holds the caller for ever.  (A download that times out is
resumed a few times by the library itself; each try is bounded the same way.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eval_queue.settings import HubTimeouts

logger = logging.getLogger(__name__)


def transport_errors() -> tuple[type[BaseException], ...]:
    """Connection, timeout and protocol errors of the client's HTTP library, plus ``OSError``.

    huggingface_hub 2.x talks through ``httpx2``, 1.x through ``httpx``; their errors do
    not derive from ``OSError``.  Offline mode raises ``OfflineModeIsEnabled``, a
    ``ConnectionError``.  Imported lazily so that the local-only paths never load them.
    """
    return (OSError, _http_module().HTTPError)


def _http_module() -> Any:
    try:
        import httpx2 as http
    except ImportError:  # pragma: no cover - depends on the installed client
        import httpx as http  # type: ignore[no-redef]
    return http


def client_factory(timeouts: HubTimeouts) -> Callable[[], Any]:
    """A factory for ``huggingface_hub.set_client_factory``: the library's own client, with ``timeouts``."""
    from huggingface_hub.utils import _http as hub_http

    http = _http_module()

    class TimeoutTransport(http.HTTPTransport):  # type: ignore[misc,name-defined]
        """Applies the connect/read/write/pool timeouts: fills unset ones, caps longer ones."""

        def handle_request(self, request: Any) -> Any:
            wanted = {
                "connect": timeouts.connect_s,
                "read": timeouts.read_s,
                "write": timeouts.read_s,
                "pool": timeouts.connect_s,
            }
            given = dict(request.extensions.get("timeout") or {})
            request.extensions["timeout"] = {k: min(given.get(k) or v, v) for k, v in wanted.items()}
            return super().handle_request(request)

    def factory() -> Any:
        # As huggingface_hub's default_client_factory, plus the transport and a default timeout.
        return http.Client(
            event_hooks={"request": [hub_http.hf_request_event_hook]},
            follow_redirects=True,
            timeout=http.Timeout(timeouts.read_s, connect=timeouts.connect_s),
            transport=TimeoutTransport(),
        )

    return factory


def install_hub_timeouts(timeouts: HubTimeouts) -> None:
    """Make every ``huggingface_hub`` request of this process use ``timeouts`` (see the module docstring).

    The library keeps one client per process, so this is process-wide; entry points reach
    it through :func:`eval_queue.storage.open_stores` (hub backend).  Replacing the client
    closes the previous one's connections.
    """
    import huggingface_hub

    huggingface_hub.set_client_factory(client_factory(timeouts))
    logger.debug("hub calls time out after %gs to connect, %gs to read", timeouts.connect_s, timeouts.read_s)


def reset_hub_client() -> None:
    """Back to the library's own client (tests that installed short timeouts)."""
    import huggingface_hub
    from huggingface_hub.utils import _http as hub_http

    huggingface_hub.set_client_factory(hub_http.default_client_factory)
