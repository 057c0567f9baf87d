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
    _approve_shell_commands()
    # IPython trims its output cache (Out, _) every 1000 results and warns about it on
    # stderr, in the middle of the user's output. The trimming is fine; the warning is noise.
    import warnings

    warnings.filterwarnings("ignore", message="Output cache limit", category=UserWarning)


def _approve_shell_commands():
    # Shell commands a cell runs through IPython (`!cmd`, `x = !cmd`, `%system`, `%sx`,
    # `%%bash`, `%%sh`, `%%script …`) are approved like tool calls: the tool server asks
    # (server "ipybox", tool "shell", the command after {var} expansion) and the command runs
    # only when approved; rejected, the cell raises. A guard for people deciding what an
    # agent's code may do, not a boundary: code can start processes in other ways (the
    # sandbox is the boundary).
    import http.client
    import json
    import os

    try:
        shell = get_ipython()  # noqa: F821
        from IPython.utils.process import system as run_system
    except Exception:
        return

    class ShellCommandRejected(PermissionError):
        """A shell command was not approved; it did not run."""

    def show_rejection(shell, etype, value, tb, tb_offset=None):
        # The reason, not the approval hook's code: a person reads this in the notebook.
        shell._showtraceback(etype, value, [f"{etype.__name__}: {value}"])

    shell.set_custom_exc((ShellCommandRejected,), show_rejection)

    def approve(command):
        __tracebackhide__ = True  # a rejection points at the cell's line, not here
        addr = os.environ.get("IPYBOX_TOOL_SERVER", "")
        host, _, port = addr.rpartition(":")
        if not host:
            raise ShellCommandRejected("no tool server to ask for approval; the command did not run")
        body = json.dumps({"server": "ipybox", "tool": "shell", "args": {"command": command}})
        conn = http.client.HTTPConnection(host, int(port))
        try:
            conn.request(
                "POST",
                "/run",
                body=body,
                headers={
                    "Content-Type": "application/json",
                    "Authorization": "Bearer " + os.environ.get("IPYBOX_TOOL_TOKEN", ""),
                },
            )
            answer = json.loads(conn.getresponse().read() or b"{}")
        finally:
            conn.close()
        if not answer.get("ok"):
            raise ShellCommandRejected(
                f"the shell command was not approved: {answer.get('message', 'rejected')} (it did not run)"
            )

    def literal(text):
        # Already expanded: keep IPython from expanding it again.
        return text.replace("$", "$$").replace("{", "{{").replace("}", "}}")

    original_system = shell.system
    original_getoutput = shell.getoutput

    def system(cmd):
        __tracebackhide__ = True  # a rejection points at the cell's line, not here
        expanded = shell.var_expand(cmd, depth=1)
        approve(expanded)
        return original_system(literal(expanded))

    def getoutput(cmd, split=True, depth=0):
        __tracebackhide__ = True  # a rejection points at the cell's line, not here
        expanded = shell.var_expand(cmd, depth=depth + 1)
        approve(expanded)
        return original_getoutput(literal(expanded), split=split, depth=0)

    system.__doc__ = original_system.__doc__
    getoutput.__doc__ = original_getoutput.__doc__
    shell.system = shell.system_piped = system
    shell.getoutput = getoutput

    # IPython loads its magics lazily: load the script magics now to guard them.
    try:
        from IPython.core.magics.script import ScriptMagics

        shell.register_magics(ScriptMagics)
    except Exception:
        pass
    script_magics = shell.magics_manager.registry.get("ScriptMagics")
    if script_magics is not None:
        original_shebang = script_magics.shebang

        def shebang(line, cell):
            __tracebackhide__ = True  # a rejection points at the cell's line, not here
            approve(f"%%script {line}\n{cell}")
            return original_shebang(line, cell)

        shebang.__doc__ = original_shebang.__doc__
        script_magics.shebang = shebang
        shell.magics_manager.magics["cell"]["script"] = shebang


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
del _ipybox_init, _fast_stream_writes, _approve_shell_commands
