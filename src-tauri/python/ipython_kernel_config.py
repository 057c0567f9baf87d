# IPython kernel configuration written by ipybox into the session's IPYTHONDIR.
c = get_config()  # noqa: F821

# Keep input history in memory: no SQLite write per cell, nothing left on disk.
c.HistoryManager.hist_file = ":memory:"
