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
    # IPython puts the working directory ('') on the module path before site-packages. The
    # workspace is kernel-writable: a module left there by earlier code must not shadow the
    # standard library or an installed package that a later kernel imports on its own (the
    # inline plot backend, say). Its modules (mcptools/, the user's own) stay importable,
    # after everything installed, also when the code changes directory.
    sys.path[:] = [p for p in sys.path if p not in ("", ".", working_dir)]
    if working_dir:
        if os.path.isdir(working_dir):
            os.chdir(working_dir)
        sys.path.append(working_dir)

    # IPython 9 copies everything a cell prints into its output history (`_tee`): about two
    # microseconds per write, and memory that grows with all output the session ever printed.
    # ipybox keeps the output itself, so turn the copy off.
    try:
        import contextlib

        shell = get_ipython()  # noqa: F821
        if hasattr(shell, "_tee"):
            shell._tee = lambda channel: contextlib.nullcontext()

            # This cell's own copy, already running, leaves the streams' original `write`
            # behind as an instance attribute when it ends: drop it before the next cell.
            def _drop_stale_writes(*_):
                for stream in (sys.stdout, sys.stderr):
                    stream.__dict__.pop("write", None)
                shell.events.unregister("pre_run_cell", _drop_stale_writes)

            shell.events.register("pre_run_cell", _drop_stale_writes)
    except Exception:
        pass
    _fast_stream_writes()
    # IPython trims its output cache (Out, _) every 1000 results and warns about it on
    # stderr, in the middle of the user's output. The trimming is fine; the warning is noise.
    import warnings

    warnings.filterwarnings("ignore", message="Output cache limit", category=UserWarning)


def _fast_stream_writes():
    # ipykernel's OutStream.write rebuilds a frozenset of the parent header on every call
    # (twice per print()). Cache it per parent-header object; every other case (echo, a
    # forked child, a closed stream, non-str data) takes the original path.
    try:
        from ipykernel.iostream import OutStream
    except Exception:
        return
    original = OutStream.write
    needed = ("_buffer_lock", "_buffers", "_schedule_flush", "_is_master_process", "parent_header")
    if getattr(original, "_ipybox", False) or not all(hasattr(OutStream, n) or n.startswith("_b") for n in needed):
        return

    def write(self, string):
        if type(string) is not str or self.echo is not None or self.pub_thread is None or not self._is_master_process():
            return original(self, string)
        parent = self.parent_header
        key = self.__dict__.get("_ipybox_parent_key")
        if key is None or key[0] is not parent:
            key = (parent, frozenset(parent.items()))
            self.__dict__["_ipybox_parent_key"] = key
        with self._buffer_lock:
            self._buffers[key[1]].write(string)
        if not self._flush_pending:
            self._schedule_flush()
        return len(string)

    write._ipybox = True
    write.__doc__ = original.__doc__
    OutStream.write = write


_ipybox_init()
del _ipybox_init, _fast_stream_writes
