/* llama.cpp's prompt processing (a batched forward pass) timed through its
 * own library, for bench/gguf_vs_llamacpp.sh: built there with gcc against
 * llama.cpp's headers and node-llama-cpp's prebuilt libraries (CI never
 * builds it; nothing of llama.cpp's code is in this file).
 *
 *   llamacpp_pp BACKENDS quantize IN.gguf OUT.gguf FTYPE
 *       llama_model_quantize with llama.cpp's default parameters and FTYPE
 *       (llama_ftype: 7 Q8_0, 15 Q4_K_M).
 *   llamacpp_pp BACKENDS pp MODEL.gguf TOKENS BATCH RUNS ALL_LOGITS SEED
 *       BATCH sequences of TOKENS random ids, each decoded as one batch from
 *       an empty cache (every layer offloaded: the Vulkan device where
 *       BACKENDS holds libggml-vulkan), a warm-up and RUNS timed passes;
 *       ALL_LOGITS 1: logits at every position (as a validation loss needs
 *       them), 0: at each sequence's last one only (llama-bench's pp), 2:
 *       both, pass by pass in turns (each warmed up once). Prints the
 *       devices, then "pass SECONDS OUTPUTS" per timed pass (the ids in,
 *       llama_synchronize out; OUTPUTS: the positions with logits).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-backend.h"
#include "llama.h"

static int fail(const char* what) {
  fprintf(stderr, "llamacpp_pp: %s\n", what);
  return 1;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int quantize(const char* in, const char* out, int ftype) {
  llama_model_quantize_params p = llama_model_quantize_default_params();
  p.ftype = (enum llama_ftype)ftype;
  return llama_model_quantize(in, out, &p) == 0 ? 0 : fail("quantize failed");
}

static int prompt_processing(const char* path, int tokens, int batch, int runs, int all_logits, unsigned seed) {
  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 999;
  struct llama_model* model = llama_model_load_from_file(path, mp);
  if (!model) return fail("cannot load the model");
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)(tokens * batch);
  cp.n_batch = cp.n_ctx;
  cp.n_ubatch = cp.n_ctx;
  cp.n_seq_max = (uint32_t)batch;
  cp.kv_unified = true;
  struct llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return fail("cannot make a context");
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t d = ggml_backend_dev_get(i);
    printf("device %s: %s\n", ggml_backend_dev_name(d), ggml_backend_dev_description(d));
  }
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  struct llama_batch b = llama_batch_init(tokens * batch, 0, 1);
  srand(seed);
  const int kinds = all_logits == 2 ? 2 : 1;
  for (int pass = 0; pass < kinds * (runs + 1); ++pass) {
    const int every = kinds == 2 ? pass % 2 : all_logits;
    b.n_tokens = tokens * batch;
    for (int s = 0; s < batch; ++s)
      for (int i = 0; i < tokens; ++i) {
        const int j = s * tokens + i;
        b.token[j] = rand() % n_vocab;
        b.pos[j] = i;
        b.n_seq_id[j] = 1;
        b.seq_id[j][0] = s;
        b.logits[j] = every || i == tokens - 1;
      }
    llama_memory_clear(llama_get_memory(ctx), true);
    const double t0 = now_s();
    if (llama_decode(ctx, b) != 0) return fail("decode failed");
    llama_synchronize(ctx);
    const double dt = now_s() - t0;
    if (pass >= kinds) printf("pass %.6f %d\n", dt, every ? tokens * batch : batch); /* the first warm up */
    fflush(stdout);
  }
  llama_batch_free(b);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: llamacpp_pp BACKENDS quantize|pp ...");
  ggml_backend_load_all_from_path(argv[1]);
  llama_backend_init();
  if (strcmp(argv[2], "quantize") == 0 && argc == 6) return quantize(argv[3], argv[4], atoi(argv[5]));
  if (strcmp(argv[2], "pp") == 0 && argc == 9)
    return prompt_processing(argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), atoi(argv[7]),
                             (unsigned)atoi(argv[8]));
  return fail("bad arguments");
}
