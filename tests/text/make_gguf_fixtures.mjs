// Writes tests/text/fixtures/gguf/llama_cpp.json: for each GGUF vocabulary
// there (llama.cpp's own, README.md), the ids llama.cpp gives for texts
// that hold special tokens and stress the pre-tokenizers, and its decoded
// text of them, through node-llama-cpp's bindings:
//   model.tokenize(text, true)   = common_tokenize(text, add_special false, parse_special true)
//   model.detokenize(ids, special) = llama_detokenize(remove_special false, unparse_special special)
// CI never runs this (it needs node and node-llama-cpp); its output is committed.
//
//   cd /dir/with/node_modules/node-llama-cpp@3.21.1 && node /path/to/vkamp/tests/text/make_gguf_fixtures.mjs
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.join(here, 'fixtures', 'gguf');
const modules = path.resolve(process.argv[2] ?? 'node_modules');
const { getLlama } = await import(pathToFileURL(path.join(modules, 'node-llama-cpp/dist/index.js')));
const llama = await getLlama({ gpu: false, logLevel: 'error' });

const common = [
  ' ',
  'Hello world',
  '  Hello  world   ',
  "Hello, world! It's a test. I'LL be there; we've, they're, she'd, 'S 'Ll 'RE 'M.",
  "he said ' hi ' and ' ' then 're 've 's 'm 'll 'd , . ! ?",
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

// The special tokens each vocabulary's texts use, and texts written with them.
const vocabularies = {
  'llama-spm': { specials: ['<s>', '</s>', '<unk>'],
    texts: ['<s>Hello</s> world', ' <s> a  </s>\n', '<unk>x<unk>', 'a<s>', 'Hello <s>  world'] },
  'phi-3': { specials: ['<|user|>', '<|end|>', '<|assistant|>', '</s>', '<s>', '<|endoftext|>'],
    texts: ['<|user|>\nHi<|end|>\n<|assistant|>', '</s>  x', '<s> x', '<|endoftext|>  y', 'a <|end|>\t\tb',
            '<|system|>\r\n \u00a0sys<|end|>'] },
  'gpt-2': { specials: ['<|endoftext|>'], texts: ['<|endoftext|>Hello<|endoftext|>', ' <|endoftext|> a'] },
  'llama-bpe': { specials: ['<|begin_of_text|>', '<|eot_id|>', '<|start_header_id|>', '<|end_header_id|>'],
    texts: ['<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>', '<|eot_id|><|eot_id|> x'] },
  'qwen2': { specials: ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '[PAD151646]'],
    texts: ['<|im_start|>user\nHi<|im_end|>\n', '[PAD151646]x<|endoftext|>', '<|im_start|><|im_end|>'] },
  'starcoder': { specials: ['<|endoftext|>', '<fim_prefix>', '<fim_middle>', '<fim_suffix>'],
    texts: ['<fim_prefix>def f(x):<fim_suffix>\n    return 1<fim_middle>', '<|endoftext|> <file_sep>a'] },
  'qwen35': { specials: ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '[PAD151646]'],
    texts: ['<|im_start|>user\nn\u0303o\u0301<|im_end|>\n', '[PAD151647]x<|endoftext|>'] },
};

// Random strings from pieces that meet at the patterns' edges (seeded, so
// every run writes the same file), the vocabulary's special tokens among them.
function randomTexts(seed, extra) {
  const pool = ['a', 'Z', 'word', ' the', 'I', "'s", "'LL", "'t", '0', '7', '42', '1234', ' ', '  ', '\t', '\n',
                '\r\n', '\r', '.', ',', '!?', '--', '(', ')', '"', "'", '_', '#', '\u00e9', 'e\u0301', '\u0308',
                '\u00df', '\u0130', '\u017f', '\u212a', '\u65e5\u672c', '\u4e2d', '\ud55c', '\u1100\u1161', '\u0e01\u0e34',
                '\u0928\u093f', '\u05e9', '\u0627\u0644', '\ud83d\ude00', '\u200d', '\ud83d\udc69\u200d\ud83d\udcbb',
                '\u2764\ufe0f', '\ud83c\uddfa\ud83c\uddf8', '\u00a0', '\u3000', '\u2028', '\u0660\u0661', '\u2167', '\u00bd',
                '\ud835\udd18', '\u00ad', '\u007f', '\u2581', ...extra];
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

const result = {};
let seed = 20261206;
for (const [name, v] of Object.entries(vocabularies)) {
  const file = path.join(os.tmpdir(), `vkamp-${name}.gguf`);
  fs.writeFileSync(file, zlib.gunzipSync(fs.readFileSync(path.join(dir, `ggml-vocab-${name}.gguf.gz`))));
  const model = await llama.loadModel({ modelPath: file, vocabOnly: true });
  result[name] = [...common, ...v.texts, ...randomTexts(seed++, v.specials)].map((text) => {
    const ids = Array.from(model.tokenize(text, true));
    return { text, ids, decoded: model.detokenize(ids, true), decoded_plain: model.detokenize(ids, false) };
  });
  await model.dispose();
  fs.unlinkSync(file);
}
fs.writeFileSync(path.join(dir, 'llama_cpp.json'), JSON.stringify(result, null, 1) + '\n');
console.log('wrote', path.join(dir, 'llama_cpp.json'));
