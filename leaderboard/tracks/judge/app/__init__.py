"""The judge track's app side: its results entry, tables, plots, the "Judges" tab and its panels."""
