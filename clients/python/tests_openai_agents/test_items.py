"""Items as entries, without a server: every item reads back from its entry, through the wire, as itself."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import unittest
from typing import Any, Dict, List

from sessiond.openai_agents_items import NAMESPACE, entry_items, item_entry
from sessiond.v1.entry_pb2 import Entry


def round_trip(item: Dict[str, Any]) -> List[Dict[str, Any]]:
    return entry_items(Entry.FromString(item_entry(item).SerializeToString()))


def as_json(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def random_json(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["null", "bool", "int", "float", "str"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "null":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 7, 2**53, 2**60, rng.randint(-10**6, 10**6)])
    if kind == "float":
        return rng.choice([0.5, -2.25, 1.0, 0.0, 1e300, rng.uniform(-1e6, 1e6)])
    if kind == "str":
        return rng.choice(["", "hi", "ünï", "{\"a\":1}", "x" * rng.randint(0, 20)])
    if kind == "list":
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["id", "type", "x", "content", "a"]): random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def random_item(rng: random.Random) -> Dict[str, Any]:
    text = rng.choice(["", "hello", "ünï", "3"])
    shaped = rng.choice(
        [
            {"role": "user", "content": rng.choice([text, [{"type": "input_text", "text": text}]])},
            {"type": "message", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]},
            {"type": "function_call", "call_id": rng.choice(["c1", ""]), "name": "add",
             "arguments": rng.choice(['{"a":1,"b":2}', '{ "a": 1.0 }', "not json", '{"n":1e400}'])},
            {"type": "function_call_output", "call_id": "c1",
             "output": rng.choice([text, [{"type": "input_text", "text": text}]])},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]},
            {"type": "hosted_tool_call", "name": "web_search"},
        ]
    )
    for _ in range(rng.randint(0, 2)):
        shaped[rng.choice(["id", "status", "content", "x", "role", "type"])] = random_json(rng)
    return shaped


class ItemsAsEntriesTest(unittest.TestCase):
    def test_random_items_read_back_as_themselves_value_types_included(self) -> None:
        rng = random.Random(39)
        for _ in range(2000):
            item = random_item(rng)
            back = round_trip(item)
            self.assertEqual(len(back), 1, item)
            self.assertEqual(as_json(back[0]), as_json(item))

    def test_a_function_call_is_an_assistant_tool_call_whose_residual_is_its_id(self) -> None:
        item = {"type": "function_call", "call_id": "call_1", "name": "add",
                "arguments": '{"a":1,"b":2}', "id": "fc_1"}
        entry = item_entry(item)
        call = entry.message.content[0].tool_call
        self.assertEqual((entry.message.role, call.id, call.name), (2, "call_1", "add"))
        self.assertEqual(call.arguments.struct_value.fields["b"].number_value, 2)
        residual = entry.message.metadata.fields[NAMESPACE].struct_value
        self.assertEqual(list(residual.fields), ["set"])
        self.assertEqual(dict(residual.fields["set"].struct_value.fields)["id"].string_value, "fc_1")

    def test_call_arguments_written_in_one_process_read_back_the_same_in_another(self) -> None:
        # A Struct is a map whose keys each process iterates in its own order
        # (upb seeds its hash per process): arguments written in one process
        # must not come back in the order another happens to iterate. With
        # two keys, each writer process below has even odds of storing no
        # residual for the order this process does not iterate in; ten of
        # them miss that case with odds of 1 in 1,000.
        items = [
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": text}
            for text in ['{"a":1,"b":2}', '{"b":2,"a":1}']
        ]
        for _ in range(10):
            writer = subprocess.run(
                [sys.executable, "-c",
                 "import json, sys\n"
                 "from sessiond.openai_agents_items import item_entry\n"
                 "for item in json.loads(sys.argv[1]):\n"
                 "    print(item_entry(item).SerializeToString().hex())",
                 json.dumps(items)],
                capture_output=True, text=True, check=True,
            )
            for item, line in zip(items, writer.stdout.split()):
                self.assertEqual(entry_items(Entry.FromString(bytes.fromhex(line))), [item])

    def test_an_item_the_typed_entry_holds_whole_needs_no_residual(self) -> None:
        for item in [
            {"role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "c1", "output": "3"},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
        ]:
            entry = item_entry(item)
            self.assertEqual(entry.WhichOneof("kind"), "message")
            self.assertFalse(entry.message.HasField("metadata"), item)

    def test_an_item_no_message_holds_is_a_custom_entry_of_the_item(self) -> None:
        item = {"role": "system", "content": "be terse"}
        entry = item_entry(item)
        self.assertEqual((entry.WhichOneof("kind"), entry.custom.namespace), ("custom", NAMESPACE))
        self.assertEqual(round_trip(item), [item])

    def test_numbers_a_struct_would_change_are_kept_as_json_text(self) -> None:
        item = {"type": "computer_call", "x": 1.0, "big": 2**60, "n": float("inf"), "k": 3}
        back = round_trip(item)[0]
        self.assertIs(type(back["x"]), float)
        self.assertEqual(back["big"], 2**60)
        self.assertEqual(as_json(back), as_json(item))
        self.assertIn("item_json", item_entry(item).custom.data.fields)

    def test_an_item_that_is_no_json_is_refused(self) -> None:
        with self.assertRaises(TypeError):
            item_entry({"role": "user", "content": object()})


if __name__ == "__main__":
    unittest.main()
