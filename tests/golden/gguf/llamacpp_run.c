/* llama.cpp's own library on the CPU, for make_gguf_fixtures.py (built and
 * run by it against node-llama-cpp's prebuilt libllama; CI never builds it).
 *
 *   llamacpp_run BACKENDS quantize IN.gguf OUT.gguf FTYPE
 *       llama_model_quantize with llama.cpp's default parameters and FTYPE
 *       (llama_ftype: 7 Q8_0, 2 Q4_0, 15 Q4_K_M, 17 Q5_K_M).
 *   llamacpp_run BACKENDS logits MODEL.gguf ADAPTER.gguf|- N_GEN OUT.f32 ID...
 *       Decodes the ids one at a time (so every position's logits come out),
 *       then N_GEN greedy tokens; writes each position's logits (n_vocab
 *       floats) to OUT.f32 and prints the greedy tokens, one per line. An
 *       adapter is applied at scale 1 (llama-cli --lora).
 *   llamacpp_run BACKENDS tokenize MODEL.gguf TEXT
 *       The ids llama.cpp gives TEXT (its special tokens added, as
 *       llama-cli does), one per line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "llama.h"

static int fail(const char* what) {
  fprintf(stderr, "llamacpp_run: %s\n", what);
  return 1;
}

static int quantize(const char* in, const char* out, int ftype) {
  llama_model_quantize_params p = llama_model_quantize_default_params();
  p.ftype = (enum llama_ftype)ftype;
  p.nthread = 1;
  return llama_model_quantize(in, out, &p) == 0 ? 0 : fail("quantize failed");
}

static int argmax(const float* z, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (z[i] > z[best]) best = i;
  return best;
}

static int logits(const char* model_path, const char* adapter_path, int n_gen, const char* out_path, int n_ids,
                  char** id_text) {
  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  struct llama_model* model = llama_model_load_from_file(model_path, mp);
  if (!model) return fail("cannot load the model");
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 64;
  cp.n_batch = 64;
  cp.n_ubatch = 64;
  cp.n_threads = 1;
  cp.n_threads_batch = 1;
  struct llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return fail("cannot make a context");
  if (strcmp(adapter_path, "-") != 0) {
    struct llama_adapter_lora* a = llama_adapter_lora_init(model, adapter_path);
    if (!a) return fail("cannot load the adapter");
    float scale = 1.0f;
    if (llama_set_adapters_lora(ctx, &a, 1, &scale) != 0) return fail("cannot apply the adapter");
  }
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE* out = fopen(out_path, "wb");
  if (!out) return fail("cannot write the logits");
  llama_token tok = 0;
  for (int i = 0; i < n_ids + n_gen; ++i) {
    tok = i < n_ids ? (llama_token)atoi(id_text[i]) : tok;
    if (llama_decode(ctx, llama_batch_get_one(&tok, 1)) != 0) return fail("decode failed");
    const float* z = llama_get_logits_ith(ctx, -1);
    if (!z) return fail("no logits");
    fwrite(z, sizeof(float), (size_t)n_vocab, out);
    if (i >= n_ids - 1 && i < n_ids + n_gen - 1) {
      tok = argmax(z, n_vocab);
      printf("%d\n", tok);
    }
  }
  fclose(out);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}

static int tokenize(const char* model_path, const char* text) {
  struct llama_model_params mp = llama_model_default_params();
  mp.vocab_only = true;
  struct llama_model* model = llama_model_load_from_file(model_path, mp);
  if (!model) return fail("cannot load the model");
  llama_token ids[512];
  const int n = llama_tokenize(llama_model_get_vocab(model), text, (int32_t)strlen(text), ids, 512, true, false);
  if (n < 0) return fail("too many tokens");
  for (int i = 0; i < n; ++i) printf("%d\n", ids[i]);
  llama_model_free(model);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: llamacpp_run BACKENDS quantize|logits ...");
  ggml_backend_load_all_from_path(argv[1]);
  llama_backend_init();
  if (strcmp(argv[2], "quantize") == 0 && argc == 6) return quantize(argv[3], argv[4], atoi(argv[5]));
  if (strcmp(argv[2], "tokenize") == 0 && argc == 5) return tokenize(argv[3], argv[4]);
  if (strcmp(argv[2], "logits") == 0 && argc >= 8)
    return logits(argv[3], argv[4], atoi(argv[5]), argv[6], argc - 7, argv + 7);
  return fail("bad arguments");
}
