# Started by the Kernel Gateway for every ipybox kernel (kernelspec argv, via python -c).
# `python -c` puts the working directory first on the module path, and kernel code can write
# the workspace: drop it before anything is imported (a planted ctypes.py must not run here).
import sys

if sys.path and sys.path[0] == "":
    del sys.path[0]
import ctypes, os, signal

# The kernel dies with the gateway: PR_SET_PDEATHSIG, so no kernel outlives ipybox even when
# ipybox and the gateway are killed without a chance to clean up.
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
except Exception:
    pass
if os.getppid() == 1:
    sys.exit(1)
from ipykernel import kernelapp

kernelapp.launch_new_instance()
