"""The long-context track's app side: its results entry, tables, views and the "Long context" tab."""
