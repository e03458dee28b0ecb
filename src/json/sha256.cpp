#include "json/sha256.h"

#include <cstring>

// SHA-256 per FIPS 180-4, section 6.2. Written for clarity over speed: digests
// are computed over canonical state text a few times per snapshot/delta, so the
// straightforward message schedule is fast enough and easy to audit.

namespace agui_sync {

namespace {

// FIPS 180-4 section 4.2.2: first 32 bits of the fractional parts of the cube
// roots of the first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

inline uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

// Big-endian load/store done byte by byte so the code is independent of host
// endianness and alignment (WASM is little-endian, but nothing here relies on it).
inline uint32_t loadBe32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

inline void storeBe32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

}  // namespace

Sha256::Sha256() {
  // FIPS 180-4 section 5.3.3: initial hash value H(0).
  static constexpr uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::memcpy(h_, kInit, sizeof h_);
  std::memset(buf_, 0, sizeof buf_);
}

void Sha256::block(const uint8_t* p) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) w[t] = loadBe32(p + 4 * t);
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }

  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3];
  uint32_t e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t bigS1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + bigS1 + ch + kRound[t] + w[t];
    uint32_t bigS0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = bigS0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  // Count bytes; the length field is mod 2^64 bits, which unsigned wraparound of
  // total_ * 8 gives us for free at finish().
  total_ += n;

  // Top up a partially filled buffer first so blocks are always processed whole.
  if (bufLen_ > 0) {
    size_t take = 64 - bufLen_;
    if (take > n) take = n;
    std::memcpy(buf_ + bufLen_, p, take);
    bufLen_ += take;
    p += take;
    n -= take;
    if (bufLen_ < 64) return;
    block(buf_);
    bufLen_ = 0;
  }
  // Hash directly from the caller's memory while whole blocks remain: avoids a
  // copy for large inputs.
  while (n >= 64) {
    block(p);
    p += 64;
    n -= 64;
  }
  if (n > 0) {
    std::memcpy(buf_, p, n);
    bufLen_ = n;
  }
}

std::array<uint8_t, 32> Sha256::finish() {
  // FIPS 180-4 section 5.1.1 padding: a single 1 bit, zeros up to 56 mod 64
  // bytes, then the message length in bits as a 64-bit big-endian integer.
  uint64_t bitLen = total_ * 8;
  buf_[bufLen_++] = 0x80;
  if (bufLen_ > 56) {
    std::memset(buf_ + bufLen_, 0, 64 - bufLen_);
    block(buf_);
    bufLen_ = 0;
  }
  std::memset(buf_ + bufLen_, 0, 56 - bufLen_);
  storeBe32(buf_ + 56, uint32_t(bitLen >> 32));
  storeBe32(buf_ + 60, uint32_t(bitLen));
  block(buf_);

  std::array<uint8_t, 32> out{};
  for (int i = 0; i < 8; ++i) storeBe32(out.data() + 4 * i, h_[i]);

  // Reset so a finished object cannot silently continue a stale state; it
  // behaves like a freshly constructed hasher afterwards.
  *this = Sha256();
  return out;
}

std::string sha256Hex(std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  Sha256 hasher;
  hasher.update(data);
  std::array<uint8_t, 32> digest = hasher.finish();
  std::string out;
  out.resize(64);
  for (size_t i = 0; i < 32; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0x0f];
  }
  return out;
}

}  // namespace agui_sync
