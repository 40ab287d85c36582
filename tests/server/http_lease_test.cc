// In-process InferdServer: an HTTP binary output is sent straight from its IOLease (zero copy).
// A client that stops reading stalls an 8 MiB binary response: its lease stays out (had the
// bytes been copied, the lease would be back at once), and returns once the client has read the
// response, whose bytes are the model's reference; a JSON response returns its lease as soon as
// it is written. A client that goes away mid-transfer returns the lease too.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "engine/testing/runfiles.h"
#include "server/server.h"
#include "tests/server/http_client.h"
#include "tests/server/infer_client.h"

namespace inferd::testing {
namespace {

namespace fs = std::filesystem;

class HttpLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path dir = fs::path(engine::testing::TempDir()) / "http_lease";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::create_directory_symlink(engine::testing::Runfile("tests/server/wide_large"), dir / "wide");
    auto config = server::ParseConfig(
        "server:\n  http_address: 127.0.0.1:0\n  grpc_address: 127.0.0.1:0\n"
        "  admin_address: 127.0.0.1:0\n  metrics_address: 127.0.0.1:0\n  model_repository: " +
            dir.string() + "\nmodels:\n  - {name: wide, max_concurrent_runs: 2}\n",
        "test.yaml");
    ASSERT_TRUE(config.ok()) << config.status();
    server::InferdServerOptions options;
    options.serve_admin = false;
    options.serve_metrics = false;
    auto s = server::InferdServer::Start(*config, options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
    wide_ = LoadDataSet("tests/server/wide_large");
    model_ = server_->repository().Find("wide");
    ASSERT_NE(model_, nullptr);
    session_ = model_->session();
    ASSERT_NE(session_, nullptr);
  }

  uint64_t Leases() { return session_->devices()[0].io->Stats().outstanding_leases; }
  bool LeasesBecome(uint64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (Leases() != n && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
    return Leases() == n;
  }
  bool Responded(uint64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (model_->stats().requests(absl::StatusCode::kOk) < n && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    return model_->stats().requests(absl::StatusCode::kOk) >= n;
  }

  // Connects with a small receive buffer and sends an infer request; reads nothing.
  int SendInfer(bool binary_outputs) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    const int small = 16 << 10;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->http_port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    auto [body, header] = BinaryInferBody(RawRequest("wide", wide_), binary_outputs);
    const std::string req =
        HttpRequestBytes("POST", "/v2/models/wide/infer", body,
                         {{"Inference-Header-Content-Length", std::to_string(header)}});
    EXPECT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
    return fd;
  }

  static std::string ReadAll(int fd) {
    std::string in;
    char buf[65536];
    for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) {
      in.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    return in;
  }

  std::unique_ptr<server::InferdServer> server_;
  engine::TestDataSet wide_;
  std::shared_ptr<server::LoadedModel> model_;
  std::shared_ptr<engine::Session> session_;
};

TEST_F(HttpLeaseTest, ABinaryOutputIsSentFromItsLeaseAndTheLeaseReturnsAfterTheSend) {
  ASSERT_GT(server_->http_port(), 0);
  const int fd = SendInfer(/*binary_outputs=*/true);
  ASSERT_TRUE(Responded(1));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(Leases(), 1u) << "the 8 MiB output is sent from the arena buffer, not a copy";
  EXPECT_EQ(model_->stats().serialize.Read().count, 0u) << "not released while unsent";
  absl::StatusOr<HttpReply> reply = ParseHttpReply(ReadAll(fd));
  ASSERT_TRUE(reply.ok()) << reply.status();
  absl::StatusOr<inference::ModelInferResponse> resp = ParseInferReply(*reply);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_TRUE(CheckOutputs(*resp, wide_).ok()) << CheckOutputs(*resp, wide_);
  EXPECT_TRUE(LeasesBecome(0)) << Leases() << " leases still out";
  EXPECT_EQ(model_->stats().serialize.Read().count, 1u) << "one release per response";
}

TEST_F(HttpLeaseTest, AJsonOutputReturnsItsLeaseOnceWritten) {
  const int fd = SendInfer(/*binary_outputs=*/false);
  ASSERT_TRUE(Responded(1));
  EXPECT_TRUE(LeasesBecome(0)) << "JSON text is its own copy; the lease goes back at once";
  absl::StatusOr<HttpReply> reply = ParseHttpReply(ReadAll(fd));
  ASSERT_TRUE(reply.ok()) << reply.status();
  absl::StatusOr<inference::ModelInferResponse> resp = ParseInferReply(*reply);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_TRUE(CheckOutputs(*resp, wide_).ok()) << CheckOutputs(*resp, wide_);
}

TEST_F(HttpLeaseTest, AClientThatGoesAwayMidTransferReturnsTheLease) {
  const int fd = SendInfer(/*binary_outputs=*/true);
  ASSERT_TRUE(Responded(1));
  ASSERT_TRUE(LeasesBecome(1));
  close(fd);
  EXPECT_TRUE(LeasesBecome(0)) << Leases() << " leases still out after the client left";
  // And the server still serves.
  auto [body, header] = BinaryInferBody(RawRequest("wide", wide_), true);
  absl::StatusOr<HttpReply> reply =
      HttpCall(server_->http_port(), "POST", "/v2/models/wide/infer", body,
               {{"Inference-Header-Content-Length", std::to_string(header)}});
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status, 200);
}

TEST_F(HttpLeaseTest, ShutdownDrainsInFlightRequestsThenClosesThePort) {
  const int port = server_->http_port();
  auto [body, header] = BinaryInferBody(RawRequest("wide", wide_), true);
  constexpr int kRequests = 8;
  std::vector<absl::StatusOr<HttpReply>> replies(kRequests, absl::UnknownError("not run"));
  std::vector<std::thread> clients;
  for (int i = 0; i < kRequests; ++i) {
    clients.emplace_back([&, i] {
      replies[i] = HttpCall(port, "POST", "/v2/models/wide/infer", body,
                            {{"Inference-Header-Content-Length", std::to_string(header)}});
    });
  }
  ASSERT_TRUE(Responded(1));  // the others are queued behind 2 workers or running
  server_->Shutdown(absl::Seconds(20));
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(replies[i].ok()) << i << ": " << replies[i].status();
    EXPECT_EQ(replies[i]->status, 200) << i << ": " << replies[i]->body.substr(0, 200);
    absl::StatusOr<inference::ModelInferResponse> resp = ParseInferReply(*replies[i]);
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_TRUE(CheckOutputs(*resp, wide_).ok());
  }
  EXPECT_FALSE(HttpCall(port, "GET", "/v2/health/live").ok()) << "the listener is closed";
}

}  // namespace
}  // namespace inferd::testing
