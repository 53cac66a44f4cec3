"""The leaderboard's tracks beside Evalita-LLM (docs/TRACKS.md): one package per track."""
