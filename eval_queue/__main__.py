"""Entry point: ``python -m eval_queue`` (see :mod:`eval_queue.cli`)."""

import sys

from eval_queue.cli import main

sys.exit(main())
