#pragma once
// A strict RFC 8259 JSON reader that builds nlohmann::json values directly.
//
// Why not json::parse: the engine parses one event per SSE message, and
// nlohmann's lexer appends every character to two token buffers one at a time;
// in WebAssembly that made parsing the largest single cost per delta. This
// reader copies runs of plain string bytes at once, parses integers without
// strtod, lets the event decoder walk the envelope member by member (reading
// what it needs, skipping the rest without allocating), and enforces the depth
// limit while it reads, so a depth bomb is refused without a separate pass.
//
// Contract: it accepts exactly the texts json::parse accepts and produces equal
// values (a differential fuzz target, fuzz/fuzz_json_reader.cpp, and the native
// tests hold it to that), with these deliberate differences:
//   - nesting deeper than `maxDepth` is an error (depthExceeded() tells why);
//   - a NUL byte is always an error (json::parse stops at one silently);
//   - a leading UTF-8 byte-order mark is an error (json::parse skips one;
//     RFC 8259 section 8.1 forbids sending it).
// Duplicate object keys: the last one wins, as in json::parse.
// Numbers: integers without fraction or exponent become int64 (negative) or
// uint64, falling back to double when out of range; everything else is a
// double, and a double out of range ("1e400") is an error.
// Never throws; errors are returned with a byte offset and a message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace agui_sync {

class JsonReader {
 public:
  JsonReader(std::string_view text, size_t maxDepth) : p_(text.data()), end_(text.data() + text.size()),
                                                        begin_(text.data()), maxDepth_(maxDepth) {}

  // Parses a whole document (one value, surrounded only by whitespace). On
  // failure `out` is left alone, *error says why and *tooDeep whether the
  // reason was nesting beyond maxDepth.
  static bool parse(std::string_view text, size_t maxDepth, nlohmann::json& out, std::string* error = nullptr,
                    bool* tooDeep = nullptr);

  // --- building blocks (for decoders that walk a document themselves) ---------
  // Each returns false on a syntax error; after that the reader must not be used
  // again except to ask error()/depthExceeded()/offset().

  // Reads one value at the current position (leading whitespace allowed).
  bool readValue(nlohmann::json& out);
  // Validates one value without building it.
  bool skipValue();
  // Reads one string value (leading whitespace allowed) into `out`.
  bool readString(std::string& out);
  // Object walking: enterObject() consumes '{'; then nextMember() either reads
  // the next key and its ':' (returns true with *done false) or consumes the
  // closing '}' (returns true with *done true). Pass first = true on the first
  // call for an object and false afterwards.
  bool enterObject();
  bool nextMember(std::string& key, bool first, bool* done);
  // Array walking, the same way: enterArray() consumes '['; nextElement()
  // positions before the next element or consumes ']'.
  bool enterArray();
  bool nextElement(bool first, bool* done);
  // The next non-whitespace byte ('\0' at the end of input) without consuming it.
  char peek();
  // Only whitespace remains.
  bool finish();

  // Nesting depth at the current position, and the deepest level reached since
  // construction or the last resetDeepest() (to measure one value's depth).
  size_t depth() const { return depth_; }
  size_t deepest() const { return deepest_; }
  void resetDeepest() { deepest_ = depth_; }

  const std::string& error() const { return error_; }
  bool depthExceeded() const { return depthExceeded_; }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  // Where the value that the next read will start begins (after whitespace).
  const char* position() {
    skipWs();
    return p_;
  }

 private:
  void skipWs() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool fail(const char* message);
  bool push();  // one level deeper; fails past maxDepth
  // Consumes an opening bracket (one level deeper).
  bool open(char bracket, const char* expected);
  // Before a container's next item: consumes the closing bracket (*done), or
  // after the first item the ',' that must precede the next one.
  bool nextItem(char close, bool first, bool* done, const char* unterminated, const char* badSeparator);
  void pop() { --depth_; }
  // After the opening quote: reads up to and past the closing one, appending
  // the decoded text to *out (nullptr: validate only).
  bool stringBody(std::string* out);
  bool readEscape(std::string& out);
  bool readNumber(nlohmann::json& out);
  bool skipNumber(const char** start);
  bool literal(const char* word, size_t n);
  bool readObject(nlohmann::json& out);
  bool readArray(nlohmann::json& out);

  const char* p_;
  const char* end_;
  const char* begin_;
  size_t maxDepth_;
  size_t depth_ = 0;
  size_t deepest_ = 0;
  bool depthExceeded_ = false;
  std::string error_;
};

}  // namespace agui_sync
