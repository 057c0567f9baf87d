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
    _fast_signatures()
    _open_channel()
    _approve_shell_commands()
    _report_sandbox_blocks()
    # IPython trims its output cache (Out, _) every 1000 results and warns about it on
    # stderr, in the middle of the user's output. The trimming is fine; the warning is noise.
    import warnings

    warnings.filterwarnings("ignore", message="Output cache limit", category=UserWarning)


def _approve_shell_commands():
    # Shell commands a cell runs through IPython (`!cmd`, `x = !cmd`, `%system`, `%sx`,
    # `%%bash`, `%%sh`, `%%script …`) are approved like tool calls: ipybox asks
    # (server "ipybox", tool "shell", the command after {var} expansion) and the command runs
    # only when approved; rejected, the cell raises. A guard for people deciding what an
    # agent's code may do, not a boundary: code can start processes in other ways (the
    # sandbox is the boundary).
    import sys

    try:
        shell = get_ipython()  # noqa: F821
        from IPython.utils.process import system as run_system  # noqa: F401
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
        channel = sys.modules.get("ipybox_channel")
        if channel is None:
            raise ShellCommandRejected("no ipybox to ask for approval; the command did not run")
        answer = channel.call("ipybox", "shell", {"command": command})
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


def _report_sandbox_blocks():
    # A cell that failed on a file operation the sandbox may have refused (a write to a
    # read-only place: EROFS; a read in a hidden folder, which srt replaces by an empty one:
    # ENOENT; EACCES, EPERM) is reported to ipybox with the exception's own errno and
    # filename, over the channel, never as printed text. ipybox checks the path against the
    # policy before it offers to allow anything; a report is only a hint.
    import errno
    import os
    import sys

    try:
        shell = get_ipython()  # noqa: F821
    except Exception:
        return
    codes = {errno.EROFS, errno.ENOENT, errno.EACCES, errno.EPERM}

    def operation(error):
        # EROFS is a refused write; for the others ipybox tells from the policy.
        return "write" if error.errno == errno.EROFS else None

    def cause(error):
        seen = set()
        while isinstance(error, BaseException) and id(error) not in seen:
            seen.add(id(error))
            if isinstance(error, OSError) and error.errno in codes and isinstance(error.filename, (str, bytes)):
                return error
            error = error.__cause__ or error.__context__
        return None

    def report(result):
        error = cause(getattr(result, "error_in_exec", None))
        channel = sys.modules.get("ipybox_channel")
        if error is None or channel is None:
            return
        try:
            path = os.path.abspath(os.fsdecode(error.filename))
            channel.report_block({"errno": error.errno, "path": path, "op": operation(error)})
        except Exception:
            pass

    shell.events.register("post_run_cell", report)


def _open_channel():
    # Tool calls (and shell-command approvals) travel to ipybox over the kernel's own stdin
    # channel, as `input()` does: an `input_request` whose content carries the call under
    # "ipybox", answered by an `input_reply` whose value is the JSON answer. It needs no
    # network path from the kernel to ipybox, so it works the same for local, sandboxed and
    # remote kernels, and only the client that ran the cell receives the request.
    #
    # ipykernel's own `_input_request` takes the first reply that arrives and is not
    # thread-safe, so it is replaced: every request (calls from any thread, `input()`,
    # `getpass()`) goes through one channel. The stdin socket has one owner at a time, a
    # "leader" among the waiting threads, which sends what the others queued and hands each
    # reply to its waiter (matched by the request's msg_id); when its own answer is in, it
    # passes the role on. A call not answered within a few seconds is asked again (same call
    # id: ipybox runs it once and answers every copy), so a request lost while the connection
    # to ipybox was down is not waited for forever.
    import hmac
    import json
    import os
    import sys
    import threading
    import time
    import types
    import uuid

    try:
        import zmq

        kernel = get_ipython().kernel  # noqa: F821
        session, socket = kernel.session, kernel.stdin_socket
    except Exception:
        return
    if socket is None or session is None:
        return

    NO_INPUT = "\x00ipybox:no-input"
    RESEND_AFTER = float(os.environ.get("IPYBOX_CALL_RESEND", "5"))

    cv = threading.Condition()
    state = {"leader": False}
    outbox = []  # messages (frames) waiting to be sent by the leader
    keys = {}  # request msg_id -> waiter key
    answers = {}  # waiter key -> reply content
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    poller = zmq.Poller()
    poller.register(socket, zmq.POLLIN)
    poller.register(wake_r, zmq.POLLIN)

    def current_parent():
        get = getattr(kernel, "_get_shell_context_var", None)
        ident = get(kernel._shell_parent_ident) if get else kernel._parent_ident["shell"]
        return ident, kernel.get_parent("shell")

    # Messages are framed and parsed here rather than by jupyter_client's Session, whose
    # date handling (dateutil on every header) costs more than the rest of a call: the
    # wire format is Jupyter's (identities, delimiter, HMAC signature, four JSON parts).
    from datetime import datetime, timezone

    try:
        from jupyter_client.jsonutil import json_default
    except ImportError:  # jupyter_client < 7.4 (a remote kernel's may be older)
        from jupyter_client.jsonutil import date_default as json_default

    DELIM = b"<IDS|MSG>"
    parents = {}  # id of a parent message -> its packed header (one per cell)

    def pack(obj):
        return json.dumps(obj, default=json_default, ensure_ascii=False).encode("utf8", errors="surrogateescape")

    def frames(ident, msg_id, content, parent):
        packed = parents.get(id(parent))
        if packed is None or packed[0] is not parent:
            packed = (parent, pack((parent or {}).get("header") or {}))
            parents.clear()
            parents[id(parent)] = packed
        header = {
            "msg_id": msg_id,
            "msg_type": "input_request",
            "username": session.username,
            "session": session.session,
            "date": datetime.now(timezone.utc).isoformat(),
            "version": "5.3",
        }
        parts = [pack(header), packed[1], b"{}", pack(content)]
        idents = list(ident) if isinstance(ident, (list, tuple)) else [ident] if ident else []
        return [*idents, DELIM, session.sign(parts), *parts]

    def receive():
        """The next reply on the socket: (parent msg_id, content), or None when none waits."""
        try:
            msg = socket.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            return None
        try:
            parts = msg[msg.index(DELIM) + 1 :]
            if session.auth is not None and not hmac.compare_digest(parts[0], session.sign(parts[1:5])):
                return ("", {})
            return (json.loads(parts[2]) or {}).get("msg_id"), json.loads(parts[4]) or {}
        except Exception:
            return ("", {})

    def post(key, content, ident, parent):
        msg_id = uuid.uuid4().hex
        message = frames(ident, msg_id, content, parent)
        with cv:
            keys[msg_id] = key
            outbox.append(message)
            leading = state["leader"]
        if leading:
            try:
                os.write(wake_w, b"!")
            except BlockingIOError:
                pass

    def lead(key, resend):
        # Owns the socket until `key` is answered.
        while True:
            with cv:
                if key in answers:
                    return
                sending = outbox[:]
                del outbox[:]
            for message in sending:
                socket.send_multipart(message)
            if resend is not None and time.monotonic() >= resend[0]:
                resend[0] = time.monotonic() + RESEND_AFTER
                resend[1]()
                continue
            ready = dict(poller.poll(50))
            if wake_r in ready:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            if socket not in ready:
                continue
            while True:
                reply = receive()
                if reply is None:
                    break
                parent_id, content = reply
                with cv:
                    waiter = keys.get(parent_id)
                    if waiter is not None and waiter not in answers:
                        answers[waiter] = content
                        cv.notify_all()

    def ask(key, content, ident, parent, again=False):
        """Send an input_request and wait for the content of its reply."""
        post(key, content, ident, parent)
        resend = None
        if again:
            resend = [time.monotonic() + RESEND_AFTER, lambda: post(key, content, ident, parent)]
        try:
            while True:
                with cv:
                    while key not in answers and state["leader"]:
                        cv.wait(0.5)
                        if resend is not None and time.monotonic() >= resend[0]:
                            resend[0] = time.monotonic() + RESEND_AFTER
                            cv.release()
                            try:
                                resend[1]()
                            finally:
                                cv.acquire()
                    if key in answers:
                        return answers.pop(key)
                    state["leader"] = True
                try:
                    lead(key, resend)
                finally:
                    with cv:
                        state["leader"] = False
                        cv.notify_all()
        finally:
            with cv:
                answers.pop(key, None)
                for msg_id in [m for m, k in keys.items() if k == key]:
                    del keys[msg_id]

    def input_request(prompt, ident, parent, password=False):
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        try:
            content = ask(uuid.uuid4().hex, {"prompt": prompt, "password": password}, ident, parent)
        except KeyboardInterrupt:
            raise KeyboardInterrupt("Interrupted by user") from None
        value = content.get("value", "")
        if value == "\x04":
            raise EOFError
        if value == NO_INPUT:
            from IPython.core.error import StdinNotImplementedError

            raise StdinNotImplementedError(
                "input() was called, but whoever runs this code cannot answer it (ipybox runs it without a prompt)"
            )
        return value

    def call(server, tool, args, site=None):
        """Ask ipybox to run `server.tool(args)`; its JSON answer as a dict. `site`: the line
        of code that made the call, shown to whoever approves it."""
        __tracebackhide__ = True
        if not getattr(kernel, "_allow_stdin", False):
            return {
                "ok": False,
                "error": "no_channel",
                "message": "this code was not run by ipybox (the execution does not allow stdin), so nobody can approve the call",
            }
        request = {"v": 1, "id": uuid.uuid4().hex, "server": server, "tool": tool, "args": args}
        if site is not None:
            request["site"] = site
        return exchange(request, f"ipybox: {server}.{tool}")

    def exchange(request, prompt):
        """Send a channel request; the JSON answer (assembled when it came in parts)."""
        ident, parent = current_parent()
        content = {"prompt": prompt, "password": False, "ipybox": request}
        answer = json.loads(ask(request["id"], content, ident, parent, again=True).get("value") or "{}")
        # Answers larger than one WebSocket message come in parts, asked for one by one.
        parts = answer.pop("parts", None)
        if parts:
            text = [answer.pop("part", "")]
            for index in range(1, parts):
                part = {"v": 1, "id": request["id"], "part": index}
                content = {"prompt": "ipybox: part", "password": False, "ipybox": part}
                got = ask(f"{request['id']}/{index}", content, ident, parent, again=True)
                text.append(json.loads(got.get("value") or "{}").get("part", ""))
            answer = json.loads("".join(text))
        return answer

    if @@REMOTE@@:
        _import_generated_modules(kernel, exchange)

    def report_block(block):
        """Tell ipybox that the cell failed on a file operation (`errno`, `path`, `op`)."""
        if getattr(kernel, "_allow_stdin", False):
            exchange({"v": 1, "id": uuid.uuid4().hex, "block": block}, "ipybox: sandbox block")

    kernel._input_request = input_request
    module = types.ModuleType("ipybox_channel", "Tool calls to ipybox over the kernel's stdin channel.")
    module.call = call
    module.NO_INPUT = NO_INPUT
    module.report_block = report_block
    # The raw request, for tests that play an attacker writing requests by hand.
    module._ask = ask
    module._parent = current_parent
    sys.modules["ipybox_channel"] = module


def _import_generated_modules(kernel, exchange):
    # A kernel on a remote gateway does not see the workspace: the generated modules
    # (mcptools/, gentools/) are asked for over the channel when imported, so they are
    # always those of the workspace now, and nothing is written on the remote machine. The
    # hook comes last: a module found on the kernel's own path wins.
    import importlib.abc
    import importlib.machinery
    import linecache
    import sys
    import uuid

    class GeneratedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] not in ("mcptools", "gentools") or not getattr(kernel, "_allow_stdin", False):
                return None
            answer = exchange({"v": 1, "id": uuid.uuid4().hex, "module": name}, f"ipybox: import {name}")
            if not answer.get("ok"):
                return None
            spec = importlib.machinery.ModuleSpec(
                name, self, origin="ipybox:" + answer["path"], loader_state=answer["source"], is_package=answer["package"]
            )
            return spec

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            spec = module.__spec__
            source = spec.loader_state
            # Tracebacks and inspect show the code.
            linecache.cache[spec.origin] = (len(source), None, source.splitlines(True), spec.origin)
            exec(compile(source, spec.origin, "exec"), module.__dict__)

    sys.meta_path.append(GeneratedModules())


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


def _fast_signatures():
    # Tab's completions carry the signature of every function offered (Jedi's
    # `_jupyter_types_experimental`). IPython infers each one anew, twice, on every Tab: `pd.`
    # took 47-64 ms with them and 4-9 ms without. A function of an installed package (a file under the
    # environment's prefix) keeps its signature for the kernel's life, so it is inferred once;
    # the user's own code (`__main__`, the workspace's modules) is inferred every time, as it
    # may have been redefined.
    import os
    import sys
    import types

    try:
        import IPython.core.completer as completer
    except Exception:
        return
    original = getattr(completer, "_make_signature", None)
    if original is None or getattr(original, "_ipybox", False):
        return
    prefixes = tuple({os.path.join(os.path.realpath(p), "") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)})
    installed = {}
    cache = {}

    def is_installed(name):
        top = name.partition(".")[0]
        if top in installed:
            return installed[top]
        module = sys.modules.get(top)
        # Jedi names what the user's namespace holds `jedi.api.interpreter.__main__.NAME`.
        path = module.__dict__.get("__file__") if type(module) is types.ModuleType and top not in ("__main__", "jedi") else None
        found = type(path) is str and os.path.realpath(path).startswith(prefixes)
        if module is not None:
            installed[top] = found
        return found

    def signature(completion):
        try:
            name = completion.full_name
        except Exception:
            name = None
        key = name if type(name) is str and is_installed(name) else None
        if key is not None and key in cache:
            return cache[key]
        found = completion.get_signatures()
        text = "(" + found[0].to_string().split("(", maxsplit=1)[1] if found else "(?)"
        if key is not None:
            if len(cache) >= 4096:
                cache.clear()
            cache[key] = text
        return text

    signature._ipybox = True
    signature.__doc__ = original.__doc__
    completer._make_signature = signature


_ipybox_init()
del _ipybox_init, _fast_stream_writes, _fast_signatures, _open_channel, _approve_shell_commands, _import_generated_modules, _report_sandbox_blocks
