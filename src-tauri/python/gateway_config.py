# Kernel Gateway configuration written by ipybox into the session's JUPYTER_CONFIG_DIR.
# Values between @@ markers are replaced with JSON literals by ipybox.
c = get_config()  # noqa: F821

# In a sandbox, srt points TMPDIR at a directory nobody can write; ipybox passes one in the
# session's state directory. Kernels inherit it from here.
def _ipybox_tmpdir():
    import os
    import tempfile

    tmp = os.environ.get("IPYBOX_TMPDIR")
    if tmp:
        os.environ["TMPDIR"] = tmp
        tempfile.tempdir = None


_ipybox_tmpdir()


# In a sandbox, the gateway and every kernel it starts hold no capabilities. When ipybox
# runs as root, bubblewrap leaves the sandbox's root with all capabilities in its user
# namespace, enough to bind-mount over the read-only IPython profile. Drop the bounding set,
# the ambient and the current sets, and forbid regaining any (no_new_privs, inherited by the
# kernels): root's execve then grants nothing either. Refuse to run when that fails.
def _ipybox_drop_capabilities():
    import ctypes
    import sys

    libc = ctypes.CDLL(None, use_errno=True)
    PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())
    except Exception:
        last = 63
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM without CAP_SETPCAP: nothing to drop
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    failed = libc.capset(ctypes.byref(header), data) != 0
    failed |= libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
    status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
    if failed or int(status["CapEff"], 16) or int(status["CapPrm"], 16):
        sys.exit("ipybox: cannot drop the capabilities of the sandboxed gateway; refusing to run")


if @@DROP_CAPABILITIES@@:
    _ipybox_drop_capabilities()

c.KernelGatewayApp.auth_token = @@TOKEN@@
c.KernelGatewayApp.default_kernel_name = "ipybox"
c.KernelGatewayApp.port_retries = 0
c.KernelGatewayApp.answer_yes = True
c.KernelGatewayApp.env_process_whitelist = @@PROCESS_ENV@@
c.JupyterWebsocketPersonality.env_whitelist = @@KERNEL_ENV@@
# Jupyter Server drops output past 1 MB/s or 1000 messages/s ("IOPub data rate exceeded").
# ipybox never loses output.
c.ZMQChannelsWebsocketConnection.limit_rate = False
# Notice a dead kernel within half a second instead of three.
c.KernelRestarter.time_to_dead = 0.5

# Tornado leaves Nagle's algorithm on for WebSocket streams, and each Jupyter message goes
# out as more than one small write: every execution then waits ~40 ms for a delayed ACK.
# Turn TCP_NODELAY on once the WebSocket connection is established. Relies on a private
# tornado name (pinned in requirements.txt; a benchmark guards the figure).
def _ipybox_enable_nodelay():
    try:
        from tornado import websocket
    except Exception:
        return
    proto = getattr(websocket, "WebSocketProtocol13", None)
    original = getattr(proto, "_receive_frame_loop", None)
    if original is None or getattr(original, "_ipybox", False):
        return

    async def _receive_frame_loop(self):
        try:
            self.stream.set_nodelay(True)
        except Exception:
            pass
        return await original(self)

    _receive_frame_loop._ipybox = True
    proto._receive_frame_loop = _receive_frame_loop


_ipybox_enable_nodelay()


# A message from ipybox to the kernel (an execute request, the answer to a tool call) waits
# in its stream's send queue for the next turn of the event loop. Flush it at once, through
# the stream's own (public) flush, which keeps the stream's view of its socket right.
def _ipybox_send_at_once():
    try:
        import zmq
        from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
    except Exception:
        return
    original = ZMQChannelsWebsocketConnection.handle_incoming_message
    if getattr(original, "_ipybox", False):
        return

    def handle_incoming_message(self, incoming_msg):
        original(self, incoming_msg)
        for stream in list((self.channels or {}).values()):
            if not stream.closed() and stream.sending():
                stream.flush(zmq.POLLOUT)

    handle_incoming_message._ipybox = True
    ZMQChannelsWebsocketConnection.handle_incoming_message = handle_incoming_message


_ipybox_send_at_once()
