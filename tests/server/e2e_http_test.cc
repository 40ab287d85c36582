// End to end over HTTP/REST: the real inferd (InferdProcess) with the mlp model, driven by curl
// (health, metadata, JSON infer) and by a plain socket client (binary tensor data, errors, model
// control). Answers are checked against the model's references and against gRPC's answer to the
// same request.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <rapidjson/document.h>

#include "absl/strings/str_cat.h"
#include "engine/testing/runfiles.h"
#include "tests/server/http_client.h"
#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// curl ARGS: the status code and the body.
std::pair<int, std::string> Curl(const std::string& args) {
  static int n = 0;
  const std::string out = absl::StrCat(engine::testing::TempDir(), "/curl_", ++n);
  const std::string cmd = absl::StrCat("curl -s -o ", out, " -w '%{http_code}' ", args);
  FILE* p = popen(cmd.c_str(), "r");
  char code[16] = {0};
  const size_t got = p != nullptr ? fread(code, 1, sizeof(code) - 1, p) : 0;
  if (p != nullptr) pclose(p);
  code[got] = '\0';
  return {std::atoi(code), Slurp(out)};
}

class HttpE2eTest : public ::testing::Test {
 protected:
  void Start(const std::string& server_yaml = "") {
    InferdProcess::Options o;
    o.models = {{"mlp", "tools/models/mlp"}};
    o.server_yaml = server_yaml;
    auto p = InferdProcess::Start("http", o);
    ASSERT_TRUE(p.ok()) << p.status();
    inferd_ = *std::move(p);
    ASSERT_GT(inferd_->http_port(), 0);
    url_ = absl::StrCat("http://127.0.0.1:", inferd_->http_port());
    mlp_ = LoadDataSet("tools/models/mlp");
  }

  inference::ModelInferResponse GrpcInfer(const inference::ModelInferRequest& req) {
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    grpc::Status s = inferd_->Stub()->ModelInfer(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  std::unique_ptr<InferdProcess> inferd_;
  std::string url_;
  engine::TestDataSet mlp_;
};

TEST_F(HttpE2eTest, CurlHealthMetadataAndJsonInfer) {
  Start();
  EXPECT_EQ(Curl(url_ + "/v2/health/live").first, 200);
  EXPECT_EQ(Curl(url_ + "/v2/health/ready").first, 200);
  EXPECT_EQ(Curl(url_ + "/v2/models/mlp/ready").first, 200);
  auto [code, body] = Curl(url_ + "/v2");
  EXPECT_EQ(code, 200);
  EXPECT_THAT(body, HasSubstr(R"("extensions":[)"));
  EXPECT_THAT(body, HasSubstr("binary_tensor_data"));
  std::tie(code, body) = Curl(url_ + "/v2/models/mlp");
  EXPECT_EQ(code, 200);
  EXPECT_THAT(body, HasSubstr(R"("inputs":[{"name":"x","datatype":"FP32","shape":[4,64]}])"));
  std::tie(code, body) = Curl(url_ + "/v2/models/mlp/config");
  EXPECT_EQ(code, 200);
  EXPECT_THAT(body, HasSubstr(R"("max_batch_size":0)"));
  std::tie(code, body) = Curl(url_ + "/v2/models/unknown");
  EXPECT_EQ(code, 404);
  EXPECT_THAT(body, HasSubstr(R"({"error":"unknown model 'unknown'"})"));

  // JSON infer: the data set's input as nested JSON numbers.
  const engine::NamedData& x = mlp_.inputs[0];
  const float* v = reinterpret_cast<const float*>(x.bytes.data());
  std::string data = "[";
  for (int r = 0; r < 4; ++r) {
    absl::StrAppend(&data, r ? ",[" : "[");
    for (int c = 0; c < 64; ++c) absl::StrAppend(&data, c ? "," : "", v[r * 64 + c]);
    absl::StrAppend(&data, "]");
  }
  absl::StrAppend(&data, "]");
  const std::string req_path = absl::StrCat(engine::testing::TempDir(), "/json_req");
  std::ofstream(req_path)
      << R"({"id":"j1","inputs":[{"name":"x","datatype":"FP32","shape":[4,64],"data":)" << data
      << "}]}";
  std::tie(code, body) =
      Curl(absl::StrCat("-X POST --data-binary @", req_path, " ", url_, "/v2/models/mlp/infer"));
  ASSERT_EQ(code, 200) << body;
  HttpReply reply{200, {}, body};
  absl::StatusOr<inference::ModelInferResponse> resp = ParseInferReply(reply);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->id(), "j1");
  EXPECT_TRUE(CheckOutputs(*resp, mlp_).ok()) << CheckOutputs(*resp, mlp_);
}

TEST_F(HttpE2eTest, BinaryInferMatchesGrpcAndTheReferences) {
  Start();
  inference::ModelInferRequest req = RawRequest("mlp", mlp_);
  req.set_id("b1");
  const inference::ModelInferResponse grpc_resp = GrpcInfer(req);
  for (bool binary_out : {true, false}) {
    auto [body, header] = BinaryInferBody(req, binary_out);
    absl::StatusOr<HttpReply> reply =
        HttpCall(inferd_->http_port(), "POST", "/v2/models/mlp/versions/1/infer", body,
                 {{"Inference-Header-Content-Length", std::to_string(header)},
                  {"Content-Type", "application/octet-stream"}});
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_EQ(reply->status, 200) << reply->body;
    EXPECT_EQ(reply->headers.count("inference-header-content-length"), binary_out ? 1u : 0u);
    absl::StatusOr<inference::ModelInferResponse> resp = ParseInferReply(*reply);
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_TRUE(CheckOutputs(*resp, mlp_).ok()) << CheckOutputs(*resp, mlp_);
    ASSERT_EQ(resp->outputs_size(), grpc_resp.outputs_size());
    for (int i = 0; i < resp->outputs_size(); ++i) {
      EXPECT_EQ(resp->outputs(i).name(), grpc_resp.outputs(i).name());
      EXPECT_EQ(resp->raw_output_contents(i), grpc_resp.raw_output_contents(i))
          << "HTTP and gRPC answer the same bytes";
    }
  }
  absl::StatusOr<HttpReply> stats = HttpCall(inferd_->http_port(), "GET", "/v2/models/mlp/stats");
  ASSERT_TRUE(stats.ok());
  rapidjson::Document doc;
  doc.Parse(stats->body.c_str());
  ASSERT_TRUE(doc.IsObject()) << stats->body;
  EXPECT_EQ(doc["model_stats"][0]["inference_count"].GetUint64(), 3u) << stats->body;
  EXPECT_EQ(doc["model_stats"][0]["inference_stats"]["success"]["count"].GetUint64(), 3u);
}

TEST_F(HttpE2eTest, BadRequestsGetTheirStatusAndTheServerKeepsServing) {
  Start("  max_message_bytes: 1MiB\n");
  const int port = inferd_->http_port();
  std::string wrong_shape = R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,64],"data":[)";
  for (int i = 0; i < 64; ++i) absl::StrAppend(&wrong_shape, i ? "," : "", i);
  absl::StrAppend(&wrong_shape, "]}]}");
  struct Case {
    std::string method, path, body;
    std::vector<std::pair<std::string, std::string>> headers;
    int status;
    const char* why;
  };
  const Case cases[] = {
      {"POST", "/v2/models/mlp/infer", "{not json", {}, 400, "not valid JSON"},
      {"POST", "/v2/models/mlp/infer", std::string(2 << 20, ' '), {}, 413, "max_message_bytes"},
      {"POST",
       "/v2/models/mlp/infer",
       "{}",
       {{"Inference-Header-Content-Length", "99"}},
       400,
       "the body has only 2 bytes"},
      {"POST",
       "/v2/models/mlp/infer",
       "{}",
       {{"Inference-Header-Content-Length", "x"}},
       400,
       "not a byte count"},
      {"POST", "/v2/models/mlp/infer", "{}", {{"Content-Encoding", "gzip"}}, 415, "gzip"},
      {"POST", "/v2/models/mlp/infer", wrong_shape, {}, 400, "input 'x': expected"},
      {"POST", "/v2/models/nope/infer", R"({"inputs":[]})", {}, 404, "unknown model"},
      {"POST", "/v2/models/..bad/infer", R"({"inputs":[]})", {}, 400, "model name"},
      {"GET", "/v2/models/mlp/infer", "", {}, 405, "not allowed"},
      {"GET", "/v2/nothing", "", {}, 404, "unknown path"},
      {"POST", "/v2/repository/models/mlp/unload", "", {}, 400, "model control is disabled"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<HttpReply> r = HttpCall(port, c.method, c.path, c.body, c.headers);
    ASSERT_TRUE(r.ok()) << c.path << ": " << r.status();
    EXPECT_EQ(r->status, c.status) << c.method << " " << c.path << ": " << r->body;
    EXPECT_THAT(r->body, HasSubstr(c.why)) << c.path;
    EXPECT_THAT(r->body, HasSubstr(R"({"error":)")) << c.path;
  }
  auto [body, header] = BinaryInferBody(RawRequest("mlp", mlp_), true);
  absl::StatusOr<HttpReply> ok =
      HttpCall(port, "POST", "/v2/models/mlp/infer", body,
               {{"Inference-Header-Content-Length", std::to_string(header)}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200) << "still serving: " << ok->body;
}

TEST_F(HttpE2eTest, ModelControlNeedsTheTokenAndLoadsOffThePool) {
  Start("  model_control: explicit\n  admin_token: http-test-token\n");
  const int port = inferd_->http_port();
  absl::StatusOr<HttpReply> r = HttpCall(port, "POST", "/v2/repository/models/mlp/unload");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401) << r->body;
  EXPECT_THAT(r->body, HasSubstr("requires the admin token"));
  r = HttpCall(port, "POST", "/v2/repository/models/mlp/unload", "",
               {{"Authorization", "Bearer wrong"}});
  EXPECT_EQ(r->status, 401);
  const std::pair<std::string, std::string> auth = {"Authorization", "Bearer http-test-token"};
  r = HttpCall(port, "POST", "/v2/repository/models/mlp/unload", "", {auth});
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(HttpCall(port, "GET", "/v2/models/mlp/ready")->status, 400);
  r = HttpCall(port, "POST", "/v2/repository/index", R"({"ready":true})");
  EXPECT_EQ(r->body, "[]");
  r = HttpCall(port, "POST", "/v2/repository/models/mlp/load", R"({"parameters":{"config":"{}"}})",
               {auth});
  EXPECT_EQ(r->status, 400);
  EXPECT_THAT(r->body, HasSubstr("parameters are not supported"));
  r = HttpCall(port, "POST", "/v2/repository/models/mlp/load", "", {auth});
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(HttpCall(port, "GET", "/v2/models/mlp/ready")->status, 200);
  r = HttpCall(port, "POST", "/v2/repository/index", "");
  EXPECT_THAT(r->body, HasSubstr(R"({"name":"mlp","version":"1","state":"READY","reason":""})"));
}

TEST_F(HttpE2eTest, ServesOverTlsWhenConfigured) {
  const std::string cert = engine::testing::Runfile("tests/server/testdata/tls/server.crt");
  const std::string key = engine::testing::Runfile("tests/server/testdata/tls/server.key");
  Start("  tls: {cert_file: " + cert + ", key_file: " + key + "}\n");
  const std::string https = absl::StrCat("https://127.0.0.1:", inferd_->http_port());
  auto [code, body] = Curl("-k " + https + "/v2/models/mlp/ready");
  EXPECT_EQ(code, 200) << body;
  EXPECT_EQ(Curl(url_ + "/v2/health/live").first, 0) << "no plaintext on the TLS port";
}

TEST(HttpPortTest, ATakenHttpPortRefusesTheStartAndTheFirstKeepsServing) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.http_address = absl::StrCat("127.0.0.1:", PickFreePort());
  auto first = InferdProcess::Start("http_port_first", o);
  ASSERT_TRUE(first.ok()) << first.status();
  o.retry_taken_ports = false;
  auto second = InferdProcess::Start("http_port_second", o);
  ASSERT_FALSE(second.ok()) << "a second inferd started on " << o.http_address;
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr(absl::StrCat("cannot listen on ", o.http_address, ": address in use")));
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<HttpReply> r = HttpCall((*first)->http_port(), "GET", "/v2/health/ready");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 200);
  }
}

}  // namespace
}  // namespace inferd::testing
