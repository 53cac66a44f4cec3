"""Serve the Evalita-LLM leaderboard: ``python app.py`` (127.0.0.1:7860 unless GRADIO_SERVER_* say otherwise).

This file only builds the settings and the UI and launches it; everything else lives in
:mod:`leaderboard`.  Importing it does no work.
"""

from __future__ import annotations

import logging
import os


def main() -> None:
    from eval_queue.errors import ConfigurationError
    from eval_queue.redact import install_log_redaction
    from eval_queue.settings import Settings
    from leaderboard.ui import build_app
    from leaderboard.ui.context import AppContext
    from leaderboard.ui.layout import CSS, landing_middleware

    install_log_redaction()  # token-shaped strings, until the settings name the secrets
    logging.basicConfig(
        level=os.environ.get("EVALITA_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = Settings.from_env()
    except ConfigurationError as exc:
        raise SystemExit(f"error: {exc}") from None
    install_log_redaction(*settings.secrets)
    ctx = AppContext.from_settings(settings, refresh_s=settings.refresh_s)
    demo = build_app(ctx)
    # Read and score the store while the server starts, so the first visitor does not wait for it.
    ctx.warm_in_background()
    demo.queue(default_concurrency_limit=4)
    demo.launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        css=CSS,
        ssr_mode=False,
        app_kwargs={"middleware": landing_middleware(demo)},
    )


if __name__ == "__main__":
    main()
