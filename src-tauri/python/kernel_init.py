# Run silently in every new ipybox kernel before any user code. Values between @@ markers
# are JSON literals filled in by ipybox. Leaves no names in the user namespace.
def _ipybox_init():
    import os
    import sys

    env = @@ENV@@
    # The Kernel Gateway ipybox starts already passes these; a server ipybox did not start
    # may not, so set them here too.
    os.environ.update(env)
    working_dir = @@WORKING_DIR@@
    if working_dir:
        if os.path.isdir(working_dir):
            os.chdir(working_dir)
        # Keep the working directory importable (mcptools/) even after the code changes dir.
        if working_dir not in sys.path:
            sys.path.insert(1 if sys.path[:1] == [""] else 0, working_dir)


_ipybox_init()
del _ipybox_init
