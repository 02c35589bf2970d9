"""The counter-based generator the real-vocabulary golden fixtures share
with their C++ test; shared_weights.hpp is its twin and documents the
definitions (the two must give the same bits: the fixture commits a
checksum of every tensor, which the test compares).

numpy's uint64 arrays wrap modulo 2**64 as C++'s uint64_t does.
"""
import numpy as np

U64 = np.uint64


def splitmix64(x):
    x = (x + U64(0x9E3779B97F4A7C15)).astype(np.uint64)
    x = (x ^ (x >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> U64(27))) * U64(0x94D049BB133111EB)
    return x ^ (x >> U64(31))


def hashes(seed, n):
    """splitmix64(seed << 32 | i) for i in [0, n)."""
    assert 0 <= seed < 2 ** 32 and n <= 2 ** 32
    return splitmix64((U64(seed) << U64(32)) | np.arange(n, dtype=np.uint64))


def uniform(seed, n, a, offset=0.0):
    """float32 values offset + a (u - 2^23) 2^-23, u the hash's top 24 bits:
    in [offset - a, offset + a). a is a power of two, so a (u - 2^23) 2^-23
    is exact and offset + it rounds once (in double, then to float32),
    identically in C++ (no fused multiply-add can change it)."""
    assert a > 0 and np.frexp(a)[0] == 0.5, "a must be a power of two"
    u = (hashes(seed, n) >> U64(40)).astype(np.int64) - 2 ** 23
    return (offset + a * (u.astype(np.float64) * 2.0 ** -23)).astype(np.float32)


def token_ids(seed, n, vocab):
    """Ids in [0, vocab): (hash >> 32) * vocab >> 32."""
    return ((hashes(seed, n) >> U64(32)) * U64(vocab) >> U64(32)).astype(np.int64)


def checksum(bits):
    """sum over i of splitmix64(i << 32 | bits_i) mod 2^64, bits_i the i-th
    element's bit pattern (uint16 or uint32) in the file's dtype; as hex."""
    bits = np.asarray(bits).reshape(-1).astype(np.uint64)
    h = splitmix64((np.arange(bits.size, dtype=np.uint64) << U64(32)) | bits)
    return "%016x" % int(np.sum(h, dtype=np.uint64))
