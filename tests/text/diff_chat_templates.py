#!/usr/bin/python3
"""A differential check of vkamp's chat-template renderer against jinja2
(set up as make_chat_fixtures.py sets it up) on random conversations: each
template in fixtures/chat_templates/ renders six random conversations
(system or not, one to three turns, thinking, tool calls, content parts,
the generation prompt or not) through `vkamp-tokenize --chat` and through
jinja2; a different text, or a conversation only one of them refuses, is
printed. Not run by CI (it needs jinja2 and a build).
  /usr/bin/python3 tests/text/diff_chat_templates.py SEED [build/samples/vkamp-tokenize]"""
import json, os, random, subprocess, sys, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_chat_fixtures as m
from datetime import datetime
T = os.path.join(HERE, 'fixtures', 'chat_templates')
MODEL = os.path.join(HERE, 'fixtures', 'llama3')
TOOL = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, '..', '..', 'build', 'samples', 'vkamp-tokenize')
CHAT = os.path.join(tempfile.mkdtemp(), 'chat.json')
# The llama3 fixture folder's special tokens, which vkamp-tokenize passes.
m.SPECIAL_TOKENS.clear(); m.SPECIAL_TOKENS.update({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"})
m.FIXED_NOW = datetime.now()
env = m.make_environment()
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
texts = ["Hi", "", " lead and trail ", "multi\nline\n\ntext", "tabs\tand \"quotes\" 'single'", "émoji 🙂 中文 Ελληνικά", "<think>\nhmm\n</think>\n\nAnswer", "{{ x }} {% raw %}", "1.5", "a\\b"]
def conv():
    msgs = []
    if rng.random() < 0.5: msgs.append({"role": "system", "content": rng.choice(texts)})
    for k in range(rng.randint(1, 3)):
        msgs.append({"role": "user", "content": rng.choice(texts)})
        if rng.random() < 0.8:
            a = {"role": "assistant", "content": rng.choice(texts)}
            if rng.random() < 0.3: a["reasoning_content"] = rng.choice(texts)
            if rng.random() < 0.3:
                args = rng.choice([{"x": 1, "y": [1.5, None, True], "z": "é"}, '{"q": "str args"}', {}])
                a["tool_calls"] = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}]
                msgs.append(a)
                msgs.append({"role": "tool", "tool_call_id": "c1", "name": "f", "content": rng.choice(texts)})
                continue
            if rng.random() < 0.15: a["content"] = [{"type": "text", "text": rng.choice(texts)}, {"type": "image"}]
            msgs.append(a)
    return msgs
bad = 0; total = 0; errs = 0
for name in sorted(os.listdir(T)):
    if not name.endswith('.jinja'): continue
    tmpl = env.from_string(open(os.path.join(T, name), encoding='utf-8').read())
    for i in range(6):
        c = conv(); agp = rng.random() < 0.5
        try:
            exp, _ = m.render(env, tmpl, c, agp, None); ok = True
        except Exception as e:
            ok = False; exp = str(e)
        open(CHAT, 'w').write(json.dumps(c))
        args = [TOOL, '--model', MODEL, '--chat', CHAT, '--chat-template', os.path.join(T, name)] + (['--add-generation-prompt'] if agp else [])
        r = subprocess.run(args, capture_output=True)
        total += 1
        if ok and (r.returncode != 0 or r.stdout.decode() != exp):
            bad += 1; print('MISMATCH', name, json.dumps(c)[:200], agp, r.stderr.decode()[:300]); 
            if r.returncode == 0:
                a=r.stdout.decode(); k=next((j for j in range(min(len(a),len(exp))) if a[j]!=exp[j]), min(len(a),len(exp))); print('  at', k, repr(a[k-40:k+40]), '|', repr(exp[k-40:k+40]))
        if not ok:
            errs += 1
            if r.returncode == 0: bad += 1; print('SHOULD FAIL', name, exp[:100])
print('total', total, 'bad', bad, 'jinja2 errors', errs)
