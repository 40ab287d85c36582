// JsonWriter: builds one JSON document by appending, for loadtest's --json reports. Keys and
// values are written in call order; commas are placed for you. Numbers that are not finite are
// written as null.
//
// Example:
//   JsonWriter j;
//   j.BeginObject();
//   j.Key("throughput_rps").Number(1234.5);
//   j.Key("errors").BeginObject().Key("UNAVAILABLE").Int(2).EndObject();
//   j.EndObject();
//   std::string text = j.str();
//
// Thread-compatible.
#ifndef INFERD_LOADTEST_JSON_WRITER_H_
#define INFERD_LOADTEST_JSON_WRITER_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace inferd::loadtest {

class JsonWriter {
 public:
  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }

  JsonWriter& Key(const std::string& key) {
    Separate();
    Quote(key);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  JsonWriter& String(const std::string& v) {
    Separate();
    Quote(v);
    return *this;
  }
  JsonWriter& Int(int64_t v) { return Raw(std::to_string(v)); }
  JsonWriter& Uint(uint64_t v) { return Raw(std::to_string(v)); }
  JsonWriter& Bool(bool v) { return Raw(v ? "true" : "false"); }
  JsonWriter& Null() { return Raw("null"); }
  JsonWriter& Number(double v) {
    if (!std::isfinite(v)) return Null();
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    return Raw(buf);
  }
  // Inserts an already-serialized JSON value.
  JsonWriter& Raw(const std::string& json) {
    Separate();
    out_ += json;
    return *this;
  }

  const std::string& str() const { return out_; }

 private:
  JsonWriter& Open(char c) {
    Separate();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& Close(char c) {
    out_ += c;
    first_.pop_back();
    return *this;
  }
  // A comma before every element but the first of its container; nothing after a key.
  void Separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }
  void Quote(const std::string& s) {
    out_ += '"';
    for (char c : s) {
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\r':
          out_ += "\\r";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += c;
          }
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_JSON_WRITER_H_
