#include "tests/server/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace inferd::testing {

std::string HttpRequestBytes(const std::string& method, const std::string& path,
                             const std::string& body,
                             const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string req = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                                 "Connection: close\r\nContent-Length: ", body.size(), "\r\n");
  for (const auto& [k, v] : headers) absl::StrAppend(&req, k, ": ", v, "\r\n");
  absl::StrAppend(&req, "\r\n", body);
  return req;
}

absl::StatusOr<HttpReply> ParseHttpReply(const std::string& in) {
  const size_t end = in.find("\r\n\r\n");
  if (end == std::string::npos) return absl::DataLossError("no complete HTTP reply: " + in);
  HttpReply reply;
  std::vector<std::string> lines = absl::StrSplit(in.substr(0, end), "\r\n");
  std::vector<std::string> status_line = absl::StrSplit(lines[0], ' ');
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &reply.status)) {
    return absl::DataLossError("bad status line: " + lines[0]);
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    reply.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  reply.body = in.substr(end + 4);
  return reply;
}

absl::StatusOr<HttpReply> HttpCall(
    int port, const std::string& method, const std::string& path, const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to port ", port));
  }
  const std::string req = HttpRequestBytes(method, path, body, headers);
  for (size_t sent = 0; sent < req.size();) {
    const ssize_t n = send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer (413) and close before the body is sent
    sent += static_cast<size_t>(n);
  }
  std::string in;
  char buf[65536];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) in.append(buf, static_cast<size_t>(n));
  close(fd);
  return ParseHttpReply(in);
}

std::pair<std::string, size_t> BinaryInferBody(const inference::ModelInferRequest& request,
                                               bool binary_outputs) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("id");
  w.String(request.id().c_str());
  w.Key("inputs");
  w.StartArray();
  std::string data;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const auto& in = request.inputs(i);
    w.StartObject();
    w.Key("name");
    w.String(in.name().c_str());
    w.Key("datatype");
    w.String(in.datatype().c_str());
    w.Key("shape");
    w.StartArray();
    for (int64_t d : in.shape()) w.Int64(d);
    w.EndArray();
    w.Key("parameters");
    w.StartObject();
    w.Key("binary_data_size");
    w.Uint64(request.raw_input_contents(i).size());
    w.EndObject();
    w.EndObject();
    data += request.raw_input_contents(i);
  }
  w.EndArray();
  w.Key("parameters");
  w.StartObject();
  w.Key("binary_data_output");
  w.Bool(binary_outputs);
  w.EndObject();
  w.EndObject();
  std::string body(buffer.GetString(), buffer.GetSize());
  const size_t header = body.size();
  return {body + data, header};
}

absl::StatusOr<inference::ModelInferResponse> ParseInferReply(const HttpReply& reply) {
  if (reply.status != 200) {
    return absl::UnknownError(absl::StrCat("HTTP ", reply.status, ": ", reply.body));
  }
  size_t header = reply.body.size();
  if (auto it = reply.headers.find("inference-header-content-length"); it != reply.headers.end()) {
    if (!absl::SimpleAtoi(it->second, &header) || header > reply.body.size()) {
      return absl::DataLossError("bad Inference-Header-Content-Length " + it->second);
    }
  }
  rapidjson::Document doc;
  doc.Parse(reply.body.data(), header);
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("outputs")) {
    return absl::DataLossError("bad response header: " + reply.body.substr(0, header));
  }
  inference::ModelInferResponse resp;
  resp.set_model_name(doc["model_name"].GetString());
  resp.set_model_version(doc["model_version"].GetString());
  if (doc.HasMember("id")) resp.set_id(doc["id"].GetString());
  size_t offset = header;
  for (const auto& o : doc["outputs"].GetArray()) {
    auto* out = resp.add_outputs();
    out->set_name(o["name"].GetString());
    out->set_datatype(o["datatype"].GetString());
    for (const auto& d : o["shape"].GetArray()) out->add_shape(d.GetInt64());
    std::string raw;
    if (o.HasMember("parameters") && o["parameters"].HasMember("binary_data_size")) {
      const size_t size = o["parameters"]["binary_data_size"].GetUint64();
      if (offset + size > reply.body.size()) return absl::DataLossError("binary past the end");
      raw = reply.body.substr(offset, size);
      offset += size;
    } else {
      for (const auto& v : o["data"].GetArray()) {
        const float f = static_cast<float>(v.GetDouble());
        raw.append(reinterpret_cast<const char*>(&f), sizeof(f));
      }
    }
    resp.add_raw_output_contents(std::move(raw));
  }
  if (offset != reply.body.size()) return absl::DataLossError("bytes after the binary outputs");
  return resp;
}

}  // namespace inferd::testing
