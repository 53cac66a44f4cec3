"""The Evalita track's app side: its results view, tables, plots, views and tabs (ranking, task, model, plots)."""
