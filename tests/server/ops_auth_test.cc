// End to end, the admin API's bearer token: bound to 0.0.0.0 with a random token from
// admin_token_env, every admin RPC needs `authorization: Bearer <token>`; a token configured on
// loopback is required too; without a token, loopback needs none and 0.0.0.0 refuses to start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "absl/strings/escaping.h"
#include "tests/server/inferd_process.h"

namespace inferd::testing {
namespace {

namespace adminpb = ::inferd::admin::v1;
using ::testing::HasSubstr;

std::string RandomToken() {
  std::string bytes(24, '\0');
  std::ifstream("/dev/urandom", std::ios::binary).read(bytes.data(), bytes.size());
  return absl::BytesToHexString(bytes);
}

// Every admin RPC once, with `authorization` as the metadata (none when empty); their codes.
std::vector<grpc::StatusCode> CallAll(adminpb::Admin::Stub& admin,
                                      const std::string& authorization) {
  std::vector<std::function<grpc::Status(grpc::ClientContext*)>> calls = {
      [&](grpc::ClientContext* c) {
        adminpb::GetMemoryStatsResponse r;
        return admin.GetMemoryStats(c, {}, &r);
      },
      [&](grpc::ClientContext* c) {
        adminpb::SetRetentionCapRequest q;
        q.set_unbounded(true);
        adminpb::SetRetentionCapResponse r;
        return admin.SetRetentionCap(c, q, &r);
      },
      [&](grpc::ClientContext* c) {
        adminpb::TrimResponse r;
        return admin.Trim(c, {}, &r);
      },
      [&](grpc::ClientContext* c) {
        adminpb::ResetPeakResponse r;
        return admin.ResetPeak(c, {}, &r);
      },
      [&](grpc::ClientContext* c) {
        adminpb::GetPartitionReportRequest q;
        q.set_model("mlp");
        adminpb::GetPartitionReportResponse r;
        return admin.GetPartitionReport(c, q, &r);
      },
  };
  std::vector<grpc::StatusCode> codes;
  for (auto& call : calls) {
    grpc::ClientContext ctx;
    if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
    codes.push_back(call(&ctx).error_code());
  }
  return codes;
}

const std::vector<grpc::StatusCode> kAllOk(5, grpc::StatusCode::OK);
const std::vector<grpc::StatusCode> kAllUnauthenticated(5, grpc::StatusCode::UNAUTHENTICATED);

TEST(OpsAuthTest, WildcardAdminRequiresTheTokenOnEveryCall) {
  const std::string token = RandomToken();
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.admin_host = "0.0.0.0";
  o.server_yaml = "  admin_token_env: INFERD_OPS_TEST_TOKEN\n";
  o.env = {{"INFERD_OPS_TEST_TOKEN", token}};
  auto inferd = InferdProcess::Start("auth_wildcard", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  auto admin = (*inferd)->AdminStub();

  EXPECT_EQ(CallAll(*admin, ""), kAllUnauthenticated);
  EXPECT_EQ(CallAll(*admin, "Bearer " + token.substr(1)), kAllUnauthenticated);
  EXPECT_EQ(CallAll(*admin, "Bearer " + token + "x"), kAllUnauthenticated);
  EXPECT_EQ(CallAll(*admin, "Basic " + token), kAllUnauthenticated);
  EXPECT_EQ(CallAll(*admin, "Bearer " + token), kAllOk);

  grpc::ClientContext ctx;
  adminpb::GetMemoryStatsResponse r;
  grpc::Status s = admin->GetMemoryStats(&ctx, {}, &r);
  EXPECT_THAT(s.error_message(), HasSubstr("authorization: Bearer <token>"));
  const std::string log = (*inferd)->Log();
  EXPECT_THAT(log, HasSubstr("bearer token required"));
  EXPECT_THAT(log, HasSubstr("refused"));
  EXPECT_EQ(log.find(token), std::string::npos) << "the token must never be logged";
}

TEST(OpsAuthTest, TokenConfiguredOnLoopbackIsRequiredToo) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.server_yaml = "  admin_token: loopback-secret\n";
  auto inferd = InferdProcess::Start("auth_loopback_token", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  auto admin = (*inferd)->AdminStub();
  EXPECT_EQ(CallAll(*admin, ""), kAllUnauthenticated);
  EXPECT_EQ(CallAll(*admin, "Bearer loopback-secret"), kAllOk);
}

TEST(OpsAuthTest, LoopbackWithoutTokenNeedsNone) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  auto inferd = InferdProcess::Start("auth_loopback", o);
  ASSERT_TRUE(inferd.ok()) << inferd.status();
  EXPECT_EQ(CallAll(*(*inferd)->AdminStub(), ""), kAllOk);
}

TEST(OpsAuthTest, WildcardWithoutTokenRefusesToStart) {
  InferdProcess::Options o;
  o.models = {{"mlp", "tools/models/mlp"}};
  o.admin_host = "0.0.0.0";
  auto inferd = InferdProcess::Start("auth_refused", o);
  ASSERT_FALSE(inferd.ok());
  EXPECT_THAT(std::string(inferd.status().message()), HasSubstr("requires a bearer"));
}

}  // namespace
}  // namespace inferd::testing
