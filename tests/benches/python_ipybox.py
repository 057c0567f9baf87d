"""The Python ipybox (PyPI) measured the way tests/benches/engine.rs measures ours, for the
README's side-by-side table. Run through scripts/bench-python-ipybox.sh.

Figures: cold start to the first result (start() + execute("1+1")), warm execute("x=1")
median, 100,000 printed lines, reset(). Prints one line per figure: median, minimum, runs.
"""

import asyncio
import pathlib
import statistics
import sys
import tempfile
import time

from ipybox import CodeExecutor


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


asyncio.run(main("--quick" in sys.argv))
