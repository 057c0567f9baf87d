"""The kernel's side of ipybox's channel, held to the examples the Rust side is held to.

`tests/fixtures/channel.json` lists every answer ipybox sends a tool call, with what the
kernel's runtime (`src-tauri/python/mcptools_runtime.py`) must make of it. Run with
`python3 -m unittest discover -s tests/python` from the repository's root.
"""

import json
import sys
import types
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src-tauri" / "python"))

import mcptools_runtime as runtime  # noqa: E402

EXAMPLES = json.loads((ROOT / "tests" / "fixtures" / "channel.json").read_text())


class Channel(types.ModuleType):
    """An `ipybox_channel` that answers every call with `answer`."""

    def __init__(self, answer):
        super().__init__("ipybox_channel")
        self.answer = answer
        self.sent = []

    def call(self, server, tool, args, site=None):
        self.sent.append({"server": server, "tool": tool, "args": args, "site": site})
        return json.loads(json.dumps(self.answer))


class AnswersTest(unittest.TestCase):
    def setUp(self):
        self.saved = sys.modules.get("ipybox_channel")

    def tearDown(self):
        if self.saved is None:
            sys.modules.pop("ipybox_channel", None)
        else:
            sys.modules["ipybox_channel"] = self.saved

    def test_every_answer_is_read_as_the_examples_say(self):
        checked = 0
        for example in EXAMPLES["answers"]:
            expected = example.get("python")
            if expected is None:
                continue  # not an answer to a tool call
            with self.subTest(example["name"]):
                channel = Channel(example["answer"])
                sys.modules["ipybox_channel"] = channel
                if "raises" in expected:
                    error = getattr(runtime, expected["raises"])
                    with self.assertRaises(error) as caught:
                        runtime.call_tool("fx", "echo", {"text": "hi"})
                    # The exact class: a ToolServerError is not taken for a rejection.
                    self.assertIs(type(caught.exception), error)
                    self.assertEqual(caught.exception.message, expected["message"])
                    self.assertEqual((caught.exception.server, caught.exception.tool), ("fx", "echo"))
                else:
                    self.assertEqual(runtime.call_tool("fx", "echo", {"text": "hi"}), expected["returns"])
                self.assertEqual(channel.sent[0]["server"], "fx")
                checked += 1
        self.assertGreaterEqual(checked, 9)

    def test_every_refusal_kind_has_an_example_of_what_the_kernel_raises(self):
        kinds = {e["answer"]["error"] for e in EXAMPLES["answers"] if not e["answer"]["ok"]}
        told = {e["answer"]["error"] for e in EXAMPLES["answers"] if not e["answer"]["ok"] and "python" in e}
        # `not_found` answers a module request, which the import hook reads, not a call.
        self.assertEqual(kinds - told, {"not_found"})

    def test_a_call_without_ipybox_is_refused_in_words(self):
        sys.modules.pop("ipybox_channel", None)
        with self.assertRaises(runtime.ToolServerError) as caught:
            runtime.call_tool("fx", "echo", {})
        self.assertIn("not started by ipybox", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
