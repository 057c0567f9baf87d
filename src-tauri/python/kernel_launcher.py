# Started by the Kernel Gateway for every ipybox kernel (kernelspec argv, via python -c).
# The kernel dies with the gateway: PR_SET_PDEATHSIG, so no kernel outlives ipybox even when
# ipybox and the gateway are killed without a chance to clean up.
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
except Exception:
    pass
if os.getppid() == 1:
    sys.exit(1)
if sys.path and sys.path[0] == "":
    del sys.path[0]
from ipykernel import kernelapp
kernelapp.launch_new_instance()
