// End to end over TLS: inferd with tls.cert_file / key_file serves KServe v2 to a client that
// trusts its certificate, and refuses a plaintext client.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/testing/runfiles.h"
#include "tests/server/infer_client.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TlsTest, ServesATrustingClientAndRefusesPlaintext) {
  const std::string cert = engine::testing::Runfile("tests/server/testdata/tls/server.crt");
  const std::string key = engine::testing::Runfile("tests/server/testdata/tls/server.key");
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.server_yaml = "  tls: {cert_file: " + cert + ", key_file: " + key + "}\n";
  auto inferd = InferdProcess::Start("tls", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();

  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = Read(cert);
  auto stub = inference::GRPCInferenceService::NewStub(
      grpc::CreateChannel((*inferd)->address(), grpc::SslCredentials(ssl)));
  const engine::TestDataSet mlp = LoadDataSet("tools/models/mlp");
  grpc::ClientContext ctx;
  inference::ModelInferResponse resp;
  grpc::Status s = stub->ModelInfer(&ctx, RawRequest("mlp", mlp), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << (*inferd)->Log();
  EXPECT_TRUE(CheckOutputs(resp, mlp).ok());

  auto plain = (*inferd)->Stub();  // insecure channel
  grpc::ClientContext ctx2;
  ctx2.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  inference::ServerLiveResponse live;
  EXPECT_FALSE(plain->ServerLive(&ctx2, {}, &live).ok());
}

}  // namespace
}  // namespace inferd::testing
