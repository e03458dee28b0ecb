#pragma once
// RFC 8785 JSON Canonicalization Scheme (JCS) and the state digest built on it.
// Exception-free: safe to call from code compiled with -fno-exceptions.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace agui_sync {

// ECMAScript Number::toString for a finite double (RFC 8785 section 3.2.2.3);
// -0 prints as "0". Callers never pass NaN/Infinity (JSON cannot hold them).
std::string formatEcmaNumber(double v);

// Canonical JSON text of `value`: keys sorted by UTF-16 code units, no whitespace,
// RFC 8785 string escaping, ECMAScript numbers (integers are converted to double
// first, as JCS requires).
std::string canonicalJson(const nlohmann::json& value);
void appendCanonicalJson(const nlohmann::json& value, std::string& out);

// "sha256:" + 64 lowercase hex digits of SHA-256(canonicalJson(value)).
std::string stateDigest(const nlohmann::json& value);

}  // namespace agui_sync
