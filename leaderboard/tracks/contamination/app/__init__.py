"""The contamination track's app side (parser, tables, export, tab, model-page panel)."""
