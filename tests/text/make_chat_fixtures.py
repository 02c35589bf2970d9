#!/usr/bin/python3
"""Writes tests/text/fixtures/chat_renders.json: every template in
fixtures/chat_templates/ rendered by Python's jinja2 (Debian's
python3-jinja2) set up as transformers' apply_chat_template sets it up:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
loopcontrols extension and a {% generation %} tag, tojson as json.dumps with
ensure_ascii=False, and the globals raise_exception and strftime_now. The
render gets messages, add_generation_prompt, tools (None, or a schema for
the tool-call conversation), documents=None and the special tokens, as
transformers passes them.

strftime_now reads a fixed clock (FIXED_NOW) so the output is reproducible;
the C++ test sets the renderer's clock to the same instant.

Run: /usr/bin/python3 tests/text/make_chat_fixtures.py (CI never runs it)."""
import json
import os
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "fixtures", "chat_templates")
OUT = os.path.join(HERE, "fixtures", "chat_renders.json")

FIXED_NOW = datetime(2026, 3, 7, 9, 5, 2)
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}

CONVERSATIONS = {
    "user_only": [{"role": "user", "content": "Hello!"}],
    "system_user_assistant": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "2+2 is 4."},
    ],
    "multi_turn": [
        {"role": "system", "content": "Answer briefly.\nBe kind."},
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "Blue."},
        {"role": "user", "content": "  Another one, please?  "},
        {"role": "assistant", "content": "Green.\n"},
    ],
    "non_ascii": [
        {"role": "user", "content": "Grüße aus Köln! 日本語は話せますか? 🙂"},
        {"role": "assistant", "content": "はい、少し話せます。 «Ça va» — naïve café."},
        {"role": "user", "content": "Quote: \"x\" and 'y' and \\ backslash {{ not jinja }}"},
    ],
    "assistant_first": [
        {"role": "assistant", "content": "How can I help?"},
        {"role": "user", "content": "Say hi."},
    ],
    "empty_and_thinking": [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "<think>\nThe user sent nothing.\n</think>\n\nDid you mean to write something?"},
        {"role": "user", "content": "Tab\there, CR\r\nLF."},
    ],
    "content_parts": [
        {"role": "system", "content": [{"type": "text", "text": "Be terse."}]},
        {"role": "user", "content": [{"type": "text", "text": "Describe"}, {"type": "text", "text": " this."}]},
    ],
    "tool_call": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": {"city": "Paris", "days": 3, "units": None, "ratio": 0.5, "ok": True},
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": '{"temp": 21.5}'},
        {"role": "assistant", "content": "It is 21.5 °C in Paris."},
    ],
}

# A tool schema as transformers passes it (get_json_schema's form): the
# tool_call conversation is rendered with tools=None and with these.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city's name."},
                    "days": {"type": "integer", "description": "How many days ahead."},
                },
                "required": ["city"],
            },
        },
    }
]


class GenerationTracker(Extension):
    """transformers' AssistantTracker: {% generation %}...{% endgeneration %}
    renders its body and records where it falls in the output."""

    tags = {"generation"}

    def __init__(self, environment):
        super().__init__(environment)
        environment.extend(activate_tracker=self.activate_tracker)
        self._rendered_blocks = None
        self._generation_indices = None

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context, caller):
        rv = caller()
        if self._rendered_blocks is not None:
            start = len("".join(self._rendered_blocks))
            self._generation_indices.append((start, start + len(rv)))
        return rv

    def activate_tracker(self, rendered_blocks, generation_indices):
        self._rendered_blocks = rendered_blocks
        self._generation_indices = generation_indices


def make_environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return FIXED_NOW.strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTracker, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, template, messages, add_generation_prompt, tools):
    """The rendered text and the {% generation %} spans as UTF-8 byte offsets
    (transformers' render_jinja_template with return_assistant_tokens_mask)."""
    rendered_blocks, indices = [], []
    env.activate_tracker(rendered_blocks, indices)
    for block in template.generate(
        messages=messages, tools=tools, documents=None, add_generation_prompt=add_generation_prompt, **SPECIAL_TOKENS
    ):
        rendered_blocks.append(block)
    text = "".join(rendered_blocks)
    env.activate_tracker(None, None)
    spans = [[len(text[:a].encode()), len(text[:b].encode())] for a, b in indices]
    return text, spans


def main():
    env = make_environment()
    cases = []
    for name in sorted(os.listdir(TEMPLATES)):
        if not name.endswith(".jinja"):
            continue
        with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
            source = f.read()
        entry = {"template": name, "renders": []}
        try:
            template = env.from_string(source)
        except jinja2.TemplateSyntaxError as e:
            entry["syntax_error"] = str(e)
            cases.append(entry)
            continue
        for conv_name, messages in CONVERSATIONS.items():
            for agp, tools in [(False, None), (True, None)] + [(True, TOOLS)] * (conv_name == "tool_call"):
                r = {"conversation": conv_name, "add_generation_prompt": agp, "tools": tools is not None}
                try:
                    r["text"], r["generation_spans"] = render(env, template, messages, agp, tools)
                except Exception as e:  # the template refuses the conversation (raise_exception or a type error)
                    r["error"] = f"{type(e).__name__}: {e}"
                entry["renders"].append(r)
        cases.append(entry)
    out = {
        "generator": "tests/text/make_chat_fixtures.py",
        "jinja2_version": jinja2.__version__,
        "now": FIXED_NOW.isoformat(),
        "special_tokens": SPECIAL_TOKENS,
        "conversations": CONVERSATIONS,
        "tools": TOOLS,
        "cases": cases,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)
        f.write("\n")
    n_err = sum(1 for c in cases for r in c["renders"] if "error" in r)
    print(f"{len(cases)} templates, {sum(len(c['renders']) for c in cases)} renders, {n_err} errors -> {OUT}")


if __name__ == "__main__":
    main()
