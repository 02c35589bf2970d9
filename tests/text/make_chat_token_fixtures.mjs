// Writes tests/text/fixtures/chat_tokens.json: the token_cases of
// chat_renders.json (jinja2's renderings, make_chat_fixtures.py) encoded by
// Hugging Face's own JavaScript tokenizer (@huggingface/tokenizers) with the
// llama3 fixture's tokenizer.json, without added special tokens (as
// apply_chat_template encodes), and the targets:
// - templates with {% generation %}: transformers' return_assistant_tokens_mask,
//   tokens char_to_token(start) .. char_to_token(end - 1) of each span
//   (offsets from the byte-level tokens' bytes);
// - others: TRL's prompt/completion split turn by turn, the tokens of the
//   rendering through the assistant message after those of the rendering
//   before it with the generation prompt; "error" where the token prefixes
//   do not line up (vkamp must refuse those too).
// CI never runs this; its output is committed.
//
//   mkdir -p /tmp/hf && cd /tmp/hf && npm init -y && npm install @huggingface/tokenizers@0.2.0
//   node tests/text/make_chat_token_fixtures.mjs /tmp/hf/node_modules
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

const modules = path.resolve(process.argv[2] ?? 'node_modules');
const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, 'fixtures');
const { Tokenizer } = await import(pathToFileURL(path.join(modules, '@huggingface/tokenizers/dist/tokenizers.mjs')));

const tokenizerJson = JSON.parse(fs.readFileSync(path.join(fixtures, 'llama3/tokenizer.json'), 'utf8'));
const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(fixtures, 'llama3/tokenizer_config.json'), 'utf8'));
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const renders = JSON.parse(fs.readFileSync(path.join(fixtures, 'chat_renders.json'), 'utf8'));

const encode = (text) => tokenizer.encode(text, { add_special_tokens: false });

// GPT-2's bytes_to_unicode, inverted: a byte-level token's characters to its bytes.
const byteOf = new Map();
{
  const printable = [];
  for (let b = 33; b <= 126; ++b) printable.push(b);
  for (let b = 161; b <= 172; ++b) printable.push(b);
  for (let b = 174; b <= 255; ++b) printable.push(b);
  let extra = 0;
  for (let b = 0; b < 256; ++b) {
    const cp = printable.includes(b) ? b : 256 + extra++;
    byteOf.set(String.fromCodePoint(cp), b);
  }
}
const added = new Map(tokenizerJson.added_tokens.map((t) => [t.content, t.id]));
const tokenBytes = (token) =>
  added.has(token) ? Buffer.byteLength(token, 'utf8') : [...token].reduce((n, c) => (byteOf.has(c) ? n + 1 : NaN), 0);

const startsWith = (ids, prefix) => prefix.length <= ids.length && prefix.every((id, k) => ids[k] === id);

const cases = [];
for (const c of renders.token_cases) {
  if (c.error) continue;  // jinja2 refuses it: nothing to tokenize
  const { ids, tokens } = encode(c.text);
  const target = new Array(ids.length).fill(0);
  const out = { template: c.template, conversation: c.conversation, text: c.text, ids };
  if (c.generation_spans.length > 0) {
    out.method = 'generation';
    // Byte offsets of each token; char_to_token(i) is the token whose bytes hold byte i.
    const ends = [];
    let at = 0;
    for (const t of tokens) ends.push((at += tokenBytes(t)));
    if (at !== Buffer.byteLength(c.text, 'utf8')) throw new Error(`${c.template}: tokens do not cover the text`);
    const tokenAt = (byte) => ends.findIndex((end) => end > byte);
    for (const [a, b] of c.generation_spans) for (let k = tokenAt(a); k <= tokenAt(b - 1); ++k) target[k] = 1;
  } else {
    out.method = 'prefixes';
    for (const turn of c.turns) {
      const prompt = encode(turn.prompt).ids, through = encode(turn.through).ids;
      if (!startsWith(through, prompt) || !startsWith(ids, through)) {
        out.error = `assistant message ${turn.message + 1}: the renderings' tokens are not prefixes of the whole's`;
        break;
      }
      for (let k = prompt.length; k < through.length; ++k) target[k] = 1;
    }
  }
  if (!out.error) out.target = target;
  cases.push(out);
}
fs.writeFileSync(path.join(fixtures, 'chat_tokens.json'), JSON.stringify({ generator: 'tests/text/make_chat_token_fixtures.mjs', tokenizer: 'llama3', cases }, null, 0) + '\n');
console.log(`${cases.length} cases, ${cases.filter((c) => c.error).length} refused`);
