// AdminAuth: the bearer-token rule, the loopback rule of FromConfig, constant-time comparison.
#include "server/admin_auth.h"

#include <gtest/gtest.h>

namespace inferd::server {
namespace {

AdminAuth::Metadata WithAuthorization(const std::string& value) {
  static std::vector<std::string>* kept = new std::vector<std::string>();
  kept->push_back(value);
  AdminAuth::Metadata m;
  m.emplace("authorization", grpc::string_ref(kept->back()));
  return m;
}

TEST(AdminAuthTest, NoTokenConfiguredLetsEveryCallThrough) {
  AdminAuth auth("");
  EXPECT_FALSE(auth.token_required());
  EXPECT_TRUE(auth.Authorize({}).ok());
  EXPECT_TRUE(auth.Authorize(WithAuthorization("Bearer anything")).ok());
}

TEST(AdminAuthTest, ConfiguredTokenIsRequired) {
  AdminAuth auth("s3cret-token");
  EXPECT_TRUE(auth.token_required());
  EXPECT_TRUE(auth.Authorize(WithAuthorization("Bearer s3cret-token")).ok());
  EXPECT_TRUE(auth.Authorize(WithAuthorization("bearer s3cret-token")).ok());

  for (const std::string bad : {"Bearer s3cret-toke", "Bearer s3cret-token2", "Bearer ", "Bearer",
                                "Basic s3cret-token", "s3cret-token", "Bearer S3CRET-TOKEN", ""}) {
    absl::Status s = auth.Authorize(WithAuthorization(bad));
    EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << "'" << bad << "'";
    EXPECT_EQ(std::string(s.message()).find("s3cret"), std::string::npos) << s;
  }
  absl::Status missing = auth.Authorize({});
  EXPECT_EQ(missing.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(missing.message().find("authorization: Bearer <token>"), absl::string_view::npos);
}

TEST(AdminAuthTest, FromConfigRefusesNonLoopbackWithoutToken) {
  ServerConfig c;
  c.admin_address = "0.0.0.0:8002";
  absl::StatusOr<AdminAuth> refused = AdminAuth::FromConfig(c);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("0.0.0.0:8002"), absl::string_view::npos);

  c.admin_token = "t";
  absl::StatusOr<AdminAuth> with_token = AdminAuth::FromConfig(c);
  ASSERT_TRUE(with_token.ok());
  EXPECT_TRUE(with_token->token_required());

  c.admin_address = "127.0.0.1:8002";
  c.admin_token = "";
  absl::StatusOr<AdminAuth> loopback = AdminAuth::FromConfig(c);
  ASSERT_TRUE(loopback.ok());
  EXPECT_FALSE(loopback->token_required());

  // A token configured on loopback is required too.
  c.admin_token = "t";
  EXPECT_TRUE(AdminAuth::FromConfig(c)->token_required());
}

// Issue 12 case 11: a spaces-only token (a config that did not come through LoadConfig) is not
// "a token configured".
TEST(AdminAuthTest, FromConfigRefusesBlankOrControlCharacterTokens) {
  ServerConfig c;
  c.admin_address = "0.0.0.0:8002";
  for (const std::string token : {std::string("   "), std::string("ab cd"), std::string("a\tb"),
                                  std::string("a\0b", 3), std::string("tok\n")}) {
    c.admin_token = token;
    absl::StatusOr<AdminAuth> refused = AdminAuth::FromConfig(c);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << token;
  }
  c.admin_token = "s3cret-token";
  EXPECT_TRUE(AdminAuth::FromConfig(c).ok());
}

TEST(AdminAuthTest, LoopbackAddresses) {
  for (const char* a : {"127.0.0.1:8002", "127.1.2.3:0", "localhost:8002", "LOCALHOST:1",
                        "[::1]:8002", "unix:/run/inferd/admin.sock"}) {
    EXPECT_TRUE(IsLoopbackAddress(a)) << a;
  }
  for (const char* a : {"0.0.0.0:8002", "10.0.0.1:8002", "[::]:8002", "host.example:8002",
                        "128.0.0.1:8002", "[fe80::1]:8002", ""}) {
    EXPECT_FALSE(IsLoopbackAddress(a)) << a;
  }
}

TEST(AdminAuthTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  EXPECT_FALSE(ConstantTimeEquals(absl::string_view("ab\0", 3), "ab"));
}

}  // namespace
}  // namespace inferd::server
