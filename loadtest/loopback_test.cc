#include "loadtest/loopback.h"

#include "gtest/gtest.h"

namespace inferd::loadtest {
namespace {

TEST(LoopbackTest, AcceptsLoopbackForms) {
  for (const char* t :
       {"127.0.0.1:8001", "127.1.2.3:1", "localhost:8001", "localhost", "[::1]:8001",
        "ipv4:127.0.0.1:80", "ipv6:[::1]:80", "dns:///localhost:80", "dns:localhost:80",
        "unix:/tmp/inferd.sock", "unix-abstract:inferd", "[::ffff:127.0.0.1]:9"}) {
    EXPECT_TRUE(IsLoopbackTarget(t)) << t;
  }
}

TEST(LoopbackTest, RefusesEverythingElse) {
  for (const char* t : {"10.0.0.1:8001", "0.0.0.0:8001", "example.com:443", "[::]:8001",
                        "[2001:db8::1]:80", "dns:///example.com:80", "ipv4:192.168.1.1:80",
                        "128.0.0.1:80", "localhost.example.com:80", "", "::1:80", "[::1:80"}) {
    EXPECT_FALSE(IsLoopbackTarget(t)) << t;
  }
  EXPECT_FALSE(CheckLoopback("--target", "10.1.1.1:80").ok());
  EXPECT_TRUE(CheckLoopback("--target", "127.0.0.1:80").ok());
}

}  // namespace
}  // namespace inferd::loadtest
