"""Worker side of the Evalita track: :mod:`.run` (the runner), :mod:`.convert` (harness output →
results file), :mod:`.data` (the data a run reads, under the upstream task names), :mod:`.metrics`
(offline ROUGE)."""
