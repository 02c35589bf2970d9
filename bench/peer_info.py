#!/usr/bin/python3
"""What the PyTorch peer runs on, and the machine's fp32 peak.

Debian's python3-torch links the generic libblas.so.3, which is netlib's
reference BLAS unless libopenblas0-pthread is installed; a side-by-side
figure means little without saying which one ran, so every peer prints
blas_line(). peak_lines() counts the CPU's fp32 peak from /proc/cpuinfo.
On CUDA the peers print cuda_line() instead and share grad_scaler().

Run as a script it prints both; with --cuda it prints cuda_line() alone and
exits 2 where PyTorch has no CUDA device (bench/gpu_vs_torch.sh's check).
"""
import ctypes
import os
import subprocess
import sys

# As the peers set it before importing torch (see torch_peer.py), so that
# run alone this reports what they run.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402


def _mapped(substr):
    with open("/proc/self/maps") as f:
        return sorted({l.split()[-1] for l in f if substr in l and l.split()[-1].startswith("/")})


def blas_line():
    # Touch the BLAS so that the library the dynamic linker resolved is mapped.
    a = torch.ones(64, 64)
    torch.mm(a, a)
    libs = _mapped("libblas") + _mapped("libopenblas")
    openblas = [p for p in libs if "libopenblas" in p]
    if openblas:
        lib = ctypes.CDLL(openblas[0])
        lib.openblas_get_config.restype = ctypes.c_char_p
        lib.openblas_get_corename.restype = ctypes.c_char_p
        blas = (f"{lib.openblas_get_config().decode().split(' ')[0]} {lib.openblas_get_config().decode().split(' ')[1]} "
                f"({lib.openblas_get_corename().decode()} kernels, {lib.openblas_get_num_threads()} threads)")
    elif any("blas" in p for p in libs):
        blas = "REFERENCE BLAS (netlib, single-threaded; install libopenblas0-pthread)"
    else:
        blas = "no libblas mapped"
    try:
        alt = subprocess.run(["update-alternatives", "--query", "libblas.so.3-x86_64-linux-gnu"],
                             capture_output=True, text=True).stdout
        value = next((l.split(": ", 1)[1] for l in alt.splitlines() if l.startswith("Value:")), "?")
    except OSError:
        value = "?"
    return (f"peer     PyTorch {torch.__version__} on {blas}; torch threads {torch.get_num_threads()}; "
            f"OMP_WAIT_POLICY {os.environ.get('OMP_WAIT_POLICY', 'unset')}; libblas.so.3 -> {value}")


def cuda_line():
    """The GPU, its driver and the PyTorch and CUDA versions, on one line."""
    p = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
                                capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        driver = "? (no nvidia-smi)"
    return (f"peer     PyTorch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}) "
            f"on {p.name}, {p.total_memory / 2**30:.0f} GiB, {p.multi_processor_count} SMs, "
            f"compute {p.major}.{p.minor}; NVIDIA driver {driver}")


def grad_scaler():
    """torch.amp.GradScaler("cuda"), or the older torch.cuda.amp spelling
    (deprecated since PyTorch 2.4, the only one before 2.3)."""
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def peak():
    """(GFLOP/s, lines of arithmetic) for fp32 FMA throughput of the whole CPU."""
    flags, mhz = set(), []
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("flags"):
                flags |= set(l.split(":", 1)[1].split())
            elif l.startswith("cpu MHz"):
                mhz.append(float(l.split(":", 1)[1]))
    cores = os.cpu_count()
    if "avx512f" in flags:
        isa, bits = "avx512f", 512
    elif "avx2" in flags or "avx" in flags:
        isa, bits = "avx2" if "avx2" in flags else "avx", 256
    else:
        isa, bits = "sse", 128
    # Two FMA pipes per core on recent x86 (Haswell on; Skylake-SP Gold/Platinum
    # for AVX-512; some Xeon Silver/Bronze have one 512-bit unit). Without FMA
    # a multiply and an add issue separately: count it as one "unit".
    units = 2 if "fma" in flags else 1
    ghz = max(mhz) / 1000 if mhz else 0
    lanes = bits // 32
    gflops = cores * units * lanes * 2 * ghz
    lines = [
        f"peak     fp32 {gflops:.1f} GFLOP/s = {cores} cores x {units} FMA units/core (assumed) x "
        f"{lanes} lanes ({isa}, {bits}-bit) x 2 flops/FMA x {ghz:.2f} GHz",
        "         (clock: 'cpu MHz' in /proc/cpuinfo, the nominal clock as the guest sees it; "
        "AVX-512 code may run slower)",
    ]
    return gflops, lines


if __name__ == "__main__":
    if sys.argv[1:] == ["--cuda"]:
        if not torch.cuda.is_available():
            print(f"peer_info.py: PyTorch {torch.__version__} sees no CUDA device "
                  f"(built for CUDA {torch.version.cuda})", file=sys.stderr)
            sys.exit(2)
        print(cuda_line())
        sys.exit(0)
    print(blas_line())
    g, lines = peak()
    print("\n".join(lines))
    print(f"peak_gflops={g:.3f}")
