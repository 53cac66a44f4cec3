"""The tracks, one package each (docs/TRACKS.md); each registers its spec in :mod:`eval_queue.tracks`.

``<track>/`` is the track's domain (its spec in ``spec.py``, ``definition``, ``schema``,
``metrics``, ``harness/``, ``sample_data/``: nothing of the UI), ``<track>/app/`` its app
side (``results``, ``export``, ``tables``, ``views``, ``tab``, ``panels``); its worker side is
``backend/tracks/<track>/``.
"""
