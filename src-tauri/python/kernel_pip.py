# Installs a package in the kernel's own environment (a kernel on a remote server, whose
# environment is there): ipybox runs this in the kernel with SPEC replaced by the package
# spec as a Python string literal. pip where the environment has it, else uv (environments
# uv made have no pip). The spec reaches pip as one argument, never through a shell.
def _ipybox_pip(spec):
    import importlib.util, shutil, subprocess, sys
    if importlib.util.find_spec('pip'):
        cmd = [sys.executable, '-m', 'pip', 'install', '--progress-bar', 'off', spec]
    elif shutil.which('uv'):
        cmd = [shutil.which('uv'), 'pip', 'install', '--python', sys.executable, spec]
    else:
        raise RuntimeError("the kernel's environment has neither pip nor uv")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in p.stdout:
        print(line, end='', flush=True)
    if p.wait():
        raise RuntimeError(f'pip exited with status {p.returncode}')
try:
    _ipybox_pip(@@SPEC@@)
finally:
    del _ipybox_pip
