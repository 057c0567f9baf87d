"""The Python ipybox (PyPI) measured the way tests/benches/engine.rs measures ours, for the
README's side-by-side table. Run through scripts/bench-python-ipybox.sh.

Figures: cold start to the first result (start() + execute("1+1")), warm execute("x=1")
median, 100,000 printed lines, reset(), and a tool call with approval (the echo server of
tests/servers, as tests/benches/tools.rs calls it: an in-kernel loop, execute() accepting each
call). Prints one line per figure: median, minimum, runs.
"""

import asyncio
import pathlib
import statistics
import sys
import tempfile
import time

from ipybox import CodeExecutor, generate_mcp_sources

SERVERS = pathlib.Path(__file__).resolve().parents[1] / "servers"


def show(name, unit, samples):
    print(f"{name:<45} median {statistics.median(samples):9.4f} {unit}   min {min(samples):9.4f} {unit}   n={len(samples)}")


async def main(quick: bool):
    workspace = tempfile.mkdtemp(prefix="ipybox-py-bench-")
    cold = []
    for _ in range(3 if quick else 10):
        started = time.perf_counter()
        executor = CodeExecutor(working_dir=pathlib.Path(workspace))
        await executor.start()
        await executor.execute("1+1")
        cold.append(time.perf_counter() - started)
        await executor.stop()
    show("cold start to first result", "s", cold)

    executor = CodeExecutor(working_dir=pathlib.Path(workspace))
    await executor.start()
    for _ in range(20):
        await executor.execute("x=1")
    warm = []
    for _ in range(50 if quick else 200):
        started = time.perf_counter()
        await executor.execute("x=1")
        warm.append((time.perf_counter() - started) * 1000)
    show('warm execute("x=1")', "ms", warm)

    lines = []
    for _ in range(2 if quick else 5):
        started = time.perf_counter()
        await executor.execute("for i in range(100000): print(i)")
        lines.append(time.perf_counter() - started)
    show("100,000 printed lines", "s", lines)

    resets = []
    for _ in range(3 if quick else 10):
        started = time.perf_counter()
        await executor.reset()
        resets.append(time.perf_counter() - started)
    show("reset()", "s", resets)
    await executor.stop()

    # Tool calls: the same echo server and loop as ours (tests/benches/tools.rs).
    echo = {"command": str(SERVERS / ".venv" / "bin" / "python"), "args": [str(SERVERS / "echo_server.py")]}
    await generate_mcp_sources("bench_echo", echo, pathlib.Path(workspace) / "mcptools")
    executor = CodeExecutor(working_dir=pathlib.Path(workspace))
    await executor.start()
    await executor.execute("from mcptools.bench_echo import echo\necho.run(echo.Params(text='warm'))")
    calls = 200 if quick else 1000
    per_call = []
    for _ in range(3 if quick else 5):
        result = await executor.execute(
            "import time\nt = time.perf_counter()\n"
            f"for i in range({calls}): echo.run(echo.Params(text='x'))\n"
            f"print((time.perf_counter() - t) / {calls} * 1000)"
        )
        if result.text:  # the Python ipybox loses output now and then
            per_call.append(float(result.text))
    show("tool call with approval (echo, in-kernel loop)", "ms", per_call)
    await executor.stop()


asyncio.run(main("--quick" in sys.argv))
