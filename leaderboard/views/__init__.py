"""Display helpers shared by every track's views (no gradio): escaping, paging, the run lookup,
and the queue's table.  Each track's own views live in its ``app`` package."""
