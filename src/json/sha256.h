#pragma once
// SHA-256 (FIPS 180-4). Small, dependency-free, exception-free.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace agui_sync {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t bufLen_ = 0;
  uint64_t total_ = 0;
};

// Lowercase hex of SHA-256(data).
std::string sha256Hex(std::string_view data);

}  // namespace agui_sync
