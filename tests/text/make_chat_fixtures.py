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


# Small templates on the edges of jinja2's semantics, rendered with
# SNIPPET_VARIABLES; "refused" names what vkamp refuses by name at parse
# (jinja2 renders it, vkamp must not render something else).
SNIPPET_VARIABLES = {
    "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}],
    "d": {"b": 1, "A": 2, "c": None},
    "s": "  Hello, World  ",
    "n": 7,
    "f": 2.5,
    "items": [{"name": "x", "v": 3}, {"name": "y", "v": 1}, {"name": "z"}],
}
SNIPPETS = [
    ("lstrip", "a\n    {% if true %}\n    b\n    {% endif %}\n  c\n"),
    ("lstrip_not_print", "a\n    {{ 'b' }}\n"),
    ("lstrip_plus", "a\n    {%+ if true %}b{% endif %}"),
    ("trim_plus", "{% if true +%}\nb{% endif %}"),
    ("minus", "a   \n {%- if true -%}  \n b \n {%- endif %}\n"),
    ("print_minus", "a  {{- 'b' -}}  c"),
    ("comment", "a\n  {# note #}\nb {#- x -#} c"),
    ("crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n"),
    ("trailing_newlines", "a\n\n"),
    ("escapes", "{{ 'a\\tb\\n\\'q\\' \\\\ \\x41\\u00e9\\U0001F642 \\q' }}{{ \"it's\" }}"),
    ("numbers", "{{ 1 }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 1_000 }} {{ -f }}"),
    ("repr", "{{ [1, 'a', none, true, 1.5, (1,), {'k': \"it's\"}] }} {{ d }} {{ none }} {{ false }} {{ () }}"),
    ("slices", "{{ s[2:7] }}|{{ s[-3:] }}|{{ s[::-1] }}|{{ [1,2,3,4][1::2] }}|{{ s[100] }}|{{ messages[-1].content }}"),
    ("loop", "{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem.role if loop.previtem is defined }}{{ loop.nextitem.role if loop.nextitem is defined }};{% endfor %}"),
    ("loop_filter_else", "{% for x in [1,2,3,4] if x is even %}{{ x }}{{ loop.length }}{% else %}none{% endfor %}{% for x in [] %}{% else %}empty{% endfor %}"),
    ("loop_scope", "{% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = i * 10 %}{{ x }}{% endfor %}{{ x }}"),
    ("break_continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 4 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
    ("namespace", "{% set ns = namespace(found=false, n=0) %}{% for m in messages %}{% if m.role == 'assistant' %}{% set ns.found = true %}{% endif %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.found }}{{ ns.n }}"),
    ("macro", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', punct='?') }} {{ greet(name='C') }}"),
    ("set_block", "{% set x %}\n  inner {{ n }}\n{% endset %}[{{ x }}]"),
    ("filter_block", "{% filter upper %}abc {{ n }}{% endfilter %}"),
    ("unpack", "{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}{% set a, b = [1, 2] %}{{ a + b }}"),
    ("filters_text", "{{ s|trim }}|{{ s|upper }}|{{ s|lower }}|{{ 'hello world'|title }}|{{ 'hELLO'|capitalize }}|{{ s|replace('l', 'L') }}|{{ s|length }}|{{ 'a\\nb\\n'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}"),
    ("filters_lists", "{{ [3,1,2]|sort }}{{ ['b','A','a']|sort }}{{ [3,1,2]|sort(reverse=true) }}{{ items|sort(attribute='name', reverse=true)|map(attribute='name')|join(',') }}{{ [1,2,2,1]|unique|list }}{{ [1,2]|first }}{{ [1,2]|last }}{{ [4,5]|min }}{{ [4,5]|max }}{{ [1,2,3]|sum }}"),
    ("filters_select", "{{ items|selectattr('v')|map(attribute='name')|list }}{{ items|rejectattr('v')|list }}{{ items|selectattr('v', 'equalto', 1)|list|length }}{{ [1,2,3,4]|select('odd')|list }}{{ [1,2,3,4]|reject('odd')|list }}{{ ['a','b']|map('upper')|list }}{{ items|map(attribute='v', default=0)|list }}"),
    ("filters_dict", "{{ d|dictsort }}{{ d|dictsort(reverse=true) }}{{ d|items|list }}{{ d|length }}{{ d.get('zz', 'dflt') }}{{ d.get('b') }}{{ d['c'] is none }}{{ d.keys()|list }}{{ d.values()|list }}"),
    ("filters_misc", "{{ undefined_var|default('dv') }}{{ ''|default('e', true) }}{{ none|default('nd') }}{{ '42'|int + 1 }}{{ 'x'|int }}{{ '2.5'|float }}{{ 3|float }}{{ 2.7|int }}{{ -3|abs }}{{ 2.567|round(2) }}{{ [1,2]|join('-') }}{{ items|join(', ', attribute='name') }}{{ [1, 2]|string }}"),
    ("tojson", "{{ d|tojson }}{{ d|tojson(indent=2) }}{{ d|tojson(sort_keys=true) }}{{ {'é': 'ü'}|tojson }}{{ {'é': 'ü🙂'}|tojson(ensure_ascii=true) }}{{ [1, [], {}]|tojson(indent=4) }}{{ d|tojson(separators=(',', ':')) }}{{ 'q\"\\\\\\n\\t\\x01'|tojson }}{{ 1.5|tojson }}"),
    ("tests", "{{ n is odd }}{{ n is even }}{{ n is divisibleby 7 }}{{ n is number }}{{ n is integer }}{{ f is float }}{{ true is boolean }}{{ true is number }}{{ true is integer }}{{ s is string }}{{ d is mapping }}{{ items is sequence }}{{ x is defined }}{{ x is undefined }}{{ none is none }}{{ x is iterable }}{{ 'ab' is lower }}{{ n is eq 7 }}{{ n is gt 3 }}{{ n is in [7] }}{{ messages|map('string') is iterable }}"),
    ("operators", "{{ 'a' in 'cat' }}{{ 1 in [1, 2] }}{{ 'b' in d }}{{ 'q' not in d }}{{ 1 < 2 < 3 }}{{ 1 == 1.0 }}{{ [1] == [1] }}{{ (1, 2) == [1, 2] }}{{ 'a' ~ 1 ~ none ~ x }}{{ 'ab' * 2 }}{{ [0] * 3 }}{{ [1] + [2] }}{{ not none }}{{ none or 'o' }}{{ 0 and 1 }}{{ 'y' if n > 3 else 'n' }}[{{ 'y' if n < 3 }}]"),
    ("methods", "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ 'xxaxx'.strip('x') }}|{{ 'a,b,,c'.split(',') }}{{ ' a  b '.split() }}{{ 'a b c'.split(' ', 1) }}{{ 'a b c'.split(None, 1) }}{{ 'abc'.startswith('a') }}{{ 'abc'.endswith(('x', 'c')) }}{{ 'a-b'.replace('-', '+') }}{{ 'Hi {}, {}!'.format('A', 2) }}{{ 'abc'.find('c') }}{{ 'a\\nb\\r\\nc'.splitlines() }}{{ '-'.join(['a', 'b']) }}{{ 'ab'.upper() }}{{ 'hello big world'.title() }}"),
    ("case_maps", "{% set t = 'aZ àÖ øÞ αΩ άΆ έΈ ίΊ όΌ ύΎ ώΏ ϊΪ ϋΫ жЖ ѐЀ ｑＱ ⓐⒶ 中 🙂 ×÷' %}{{ t|lower }}|{{ t|upper }}|{{ t|title }}|{{ t.capitalize() }}|{{ t is lower }}"),
    ("percent_format", "{{ 'a %s b %d c %r %%' % ('x', 7, 'q') }}|{{ 'n=%s' % n }}|{{ '%i' % 2.9 }}"),
    ("generators", "{% set g = messages|selectattr('role', 'equalto', 'user') %}{{ 'truthy' if g else 'falsy' }}{{ g|list }}{{ g|list }}{{ messages|map(attribute='role')|first }}"),
    ("markup", "{{ '<b>'|safe + '<i>' }}{{ '<i>' + '<b>'|safe }}{{ ('<b>'|safe).replace('b', '&') }}{{ '<b>'|safe|upper }}{{ '<x>' ~ '<b>'|safe }}"),
    ("undefined", "[{{ x }}][{{ x|length }}][{{ x|list }}][{{ none.attr }}][{{ d.zz }}][{{ d['zz'] }}]{% for a in x %}never{% endfor %}{{ x is none }}{{ x == x }}"),
    ("strftime", "{{ strftime_now('%Y-%m-%d %H:%M:%S %b %B %a %A %y %p %%') }}"),
    ("generation", "{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}{{ m.content }}</end>{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}"),
    ("raise", "{% if messages|length > 1 %}{{ raise_exception('Only one message, please.') }}{% endif %}ok"),
    ("undefined_attribute_error", "{{ x.y }}"),
    ("none_iteration_error", "{% for a in none %}{% endfor %}"),
    ("unknown_filter_runtime_error", "{% if n > 100 %}{{ n|nosuchfilter }}{% endif %}ok{{ n|nosuchfilter }}"),
    ("unknown_filter_not_reached", "{% if n > 100 %}{{ n|nosuchfilter }}{% endif %}ok"),
    ("unsafe_append", "{% set l = [] %}{{ l.append(1) }}"),
    ("list_pop", "{% set l = [1, 2, 3] %}{{ l.pop(0) }}{{ l }}"),
    ("refused_filter", "{{ 'a b c'|wordcount }}", "the filter 'wordcount'"),
    ("refused_statement", "{% include 'x.jinja' %}", "{% include %}"),
    ("refused_recursive", "{% for m in messages recursive %}{{ m }}{% endfor %}", "recursive for loops"),
    ("refused_method", "{{ 'abc'.zfill(5) }}", "the method .zfill()"),
]


# Conversations tokenized for training (tests/text/make_chat_token_fixtures.mjs
# adds the ids and targets): the whole rendering, its {% generation %} spans,
# and for each assistant message i the renderings TRL's split compares
# (messages[:i] with the generation prompt, messages[:i+1] without).
TOKEN_TEMPLATES = [
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "Qwen-Qwen2.5-7B-Instruct.jinja",
    "Qwen-Qwen3-0.6B.jinja",
    "HuggingFaceTB-SmolLM3-3B.jinja",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "LFM2.5-8B-A1B.jinja",
    "poolside-Laguna-XS-2.1.jinja",
    "HuggingFaceH4-zephyr-7b-beta.jinja",
]
TOKEN_CONVERSATIONS = ["system_user_assistant", "multi_turn", "non_ascii"]


def token_cases(env):
    cases = []
    for name in TOKEN_TEMPLATES:
        with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
            template = env.from_string(f.read())
        for conv in TOKEN_CONVERSATIONS:
            messages = CONVERSATIONS[conv]
            case = {"template": name, "conversation": conv}
            try:
                case["text"], case["generation_spans"] = render(env, template, messages, False, None)
                case["turns"] = []
                for i, m in enumerate(messages):
                    if m["role"] == "assistant":
                        prompt, _ = render(env, template, messages[:i], True, None)
                        through, _ = render(env, template, messages[: i + 1], False, None)
                        case["turns"].append({"message": i, "prompt": prompt, "through": through})
            except Exception as e:
                case["error"] = f"{type(e).__name__}: {e}"
            cases.append(case)
    return cases


def main():
    env = make_environment()
    snippets = []
    for name, source, *refused in SNIPPETS:
        entry = {"name": name, "source": source}
        if refused:
            entry["refused"] = refused[0]
        try:
            entry["text"] = "".join(env.from_string(source).generate(**SNIPPET_VARIABLES))
        except Exception as e:
            entry["error"] = f"{type(e).__name__}: {e}"
        snippets.append(entry)
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
        "snippet_variables": SNIPPET_VARIABLES,
        "snippets": snippets,
        "token_cases": token_cases(env),
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=0)
        f.write("\n")
    n_err = sum(1 for c in cases for r in c["renders"] if "error" in r)
    print(f"{len(cases)} templates, {sum(len(c['renders']) for c in cases)} renders, {n_err} errors -> {OUT}")


if __name__ == "__main__":
    main()
