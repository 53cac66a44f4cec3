"""Storage: one protocol, two backends, chosen once from the settings.

``open_stores(settings)`` is the only place that decides between the local directory
and the hub; everything else receives a :class:`Stores` and never looks at the backend.
"""

from __future__ import annotations

import logging

from eval_queue.settings import Settings
from eval_queue.storage.base import Storage, Stores, Transform
from eval_queue.storage.local import LocalStorage
from eval_queue.storage.paths import DETAILS_FOLDER

logger = logging.getLogger(__name__)

__all__ = ["DETAILS_FOLDER", "LocalStorage", "Storage", "Stores", "Transform", "open_stores"]


def open_stores(settings: Settings) -> Stores:
    """The deployment's repositories: hub when both repos are configured, else local.

    Local layout: ``<data_dir>/requests``, ``<data_dir>/results``, ``<data_dir>/details``.
    Hub: the requests repo's root, the results repo's root and its ``details/`` folder.
    Nothing is contacted here; the first read or write does that.
    """
    if settings.use_hub:
        # Imported lazily: the local path must not pay for the hub client.
        from eval_queue.storage.hub import open_hub_stores

        logger.info("using hub stores %s and %s", settings.requests_repo, settings.results_repo)
        return open_hub_stores(settings)
    root = settings.data_dir
    logger.info("using local stores under %s", root)
    return Stores(
        requests=LocalStorage(root / "requests"),
        results=LocalStorage(root / "results"),
        details=LocalStorage(root / "details"),
    )
