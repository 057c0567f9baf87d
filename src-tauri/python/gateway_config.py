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
