// In-process InferdServer: the output leases of ModelInfer responses are held exactly while gRPC
// sends them. A plain client: every lease returns after its response arrives, and the serialize
// histogram counts one release per response. A raw HTTP/2 client that never grants flow-control
// window stalls an 8 MiB response mid-transfer: its lease stays out; when the client goes away,
// it returns.
#include <arpa/inet.h>
#include <grpc/grpc.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "engine/testing/runfiles.h"
#include "server/server.h"
#include "tests/server/infer_client.h"

namespace inferd::testing {
namespace {

namespace fs = std::filesystem;

class LeaseLifetimeTest : public ::testing::Test {
 protected:
  // One gRPC library reference for the whole test: otherwise each server's destructor shuts the
  // library down, which can wait 10 s for an idle executor thread (as inferd's main avoids too).
  static void SetUpTestSuite() { grpc_init(); }

  void SetUp() override {
    const fs::path dir = fs::path(engine::testing::TempDir()) / "lease_lifetime";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::create_directory_symlink(engine::testing::Runfile("tests/server/wide_large"), dir / "wide");
    auto config = server::ParseConfig(
        "server:\n  http_address: 127.0.0.1:0\n  grpc_address: 127.0.0.1:0\n"
        "  admin_address: 127.0.0.1:0\n  metrics_address: 127.0.0.1:0\n  model_repository: " +
            dir.string() + "\nmodels:\n  - {name: wide, max_concurrent_runs: 2}\n",
        "test.yaml");
    ASSERT_TRUE(config.ok()) << config.status();
    auto s = server::InferdServer::Start(*config);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
    wide_ = LoadDataSet("tests/server/wide_large");
    model_ = server_->repository().Find("wide");
    ASSERT_NE(model_, nullptr);
    session_ = model_->session();
    ASSERT_NE(session_, nullptr);
  }

  uint64_t Leases() { return session_->devices()[0].io->Stats().outstanding_leases; }

  // Polls until the lease count is `n` (or 10 s pass).
  bool LeasesBecome(uint64_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (Leases() != n && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
    return Leases() == n;
  }

  std::unique_ptr<server::InferdServer> server_;
  engine::TestDataSet wide_;
  std::shared_ptr<server::LoadedModel> model_;
  std::shared_ptr<engine::Session> session_;
};

TEST_F(LeaseLifetimeTest, EveryLeaseReturnsAfterItsResponseIsSent) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto stub = inference::GRPCInferenceService::NewStub(
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                                grpc::InsecureChannelCredentials(), args));
  const inference::ModelInferRequest req = RawRequest("wide", wide_);
  for (int i = 0; i < 4; ++i) {
    grpc::ClientContext ctx;
    inference::ModelInferResponse resp;
    grpc::Status status = stub->ModelInfer(&ctx, req, &resp);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(CheckOutputs(resp, wide_).ok());
  }
  EXPECT_TRUE(LeasesBecome(0)) << Leases() << " leases still out";
  const server::ModelStats& stats = model_->stats();
  EXPECT_EQ(stats.requests(absl::StatusCode::kOk), 4u);
  EXPECT_EQ(stats.inferences.load(), 4u);
  EXPECT_EQ(stats.serialize.Read().count, 4u) << "one release per response";
  EXPECT_EQ(stats.compute.Read().count, 4u);
  EXPECT_EQ(stats.output_bytes.load(), 4u * (8u << 20));
  EXPECT_EQ(stats.input_bytes_borrowed.load() + stats.input_bytes_staged.load(),
            4u * (2048 + 256) * 4);
  const memory::ArenaStats io = session_->devices()[0].io->Stats();
  EXPECT_EQ(io.live_bytes, 0u);
  EXPECT_GE(io.retained_bytes, 8u << 20) << "the output buffer is back on the free list";
}

// A minimal HTTP/2 client: one ModelInfer stream, SETTINGS acknowledged, no WINDOW_UPDATE ever.
class StallingClient {
 public:
  explicit StallingClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~StallingClient() { Close(); }
  void Close() {
    if (fd_ < 0) return;
    linger reset{1, 0};  // close with a TCP reset, as a client that dies does
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }

  void SendRequest(const std::string& message) {
    Send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    Frame(0x4, 0, 0, "");  // SETTINGS: defaults (64 KiB windows)
    std::string headers;
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {":method", "POST"},
             {":scheme", "http"},
             {":path", "/inference.GRPCInferenceService/ModelInfer"},
             {":authority", "localhost"},
             {"content-type", "application/grpc"},
             {"te", "trailers"}}) {
      headers += '\0';  // literal header field without indexing, new name
      headers += static_cast<char>(k.size());
      headers += k;
      headers += static_cast<char>(v.size());
      headers += v;
    }
    Frame(0x1, 0x4, 1, headers);  // HEADERS, END_HEADERS
    std::string grpc_message(5, '\0');
    const uint32_t n = htonl(static_cast<uint32_t>(message.size()));
    std::memcpy(&grpc_message[1], &n, 4);
    grpc_message += message;
    for (size_t at = 0; at < grpc_message.size(); at += 16384) {
      const bool last = at + 16384 >= grpc_message.size();
      Frame(0x0, last ? 0x1 : 0x0, 1, grpc_message.substr(at, 16384));  // DATA
    }
  }

  // Grants the whole window, reads the rest of the response; returns the gRPC message.
  std::string GrantAndReadAll() {
    std::string inc(4, '\0');
    const uint32_t n = htonl(0x7fffffff - 65535);
    std::memcpy(&inc[0], &n, 4);
    Frame(0x8, 0, 0, inc);  // WINDOW_UPDATE, connection
    Frame(0x8, 0, 1, inc);  // WINDOW_UPDATE, stream 1
    ReadUntilStalled(absl::Seconds(10));
    return data_.size() >= 5 ? data_.substr(5) : "";
  }
  bool ended() const { return ended_; }

  // Reads frames (acknowledging SETTINGS and PING) until nothing arrives for `quiet` or the
  // stream ends; returns the DATA bytes received on the stream.
  size_t ReadUntilStalled(absl::Duration quiet) {
    std::string buf;
    while (!ended_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(quiet))) <= 0) break;
      char chunk[65536];
      const ssize_t got = read(fd_, chunk, sizeof(chunk));
      if (got <= 0) break;
      buf.append(chunk, got);
      while (buf.size() >= 9) {
        const size_t len = (uint8_t(buf[0]) << 16) | (uint8_t(buf[1]) << 8) | uint8_t(buf[2]);
        if (buf.size() < 9 + len) break;
        const uint8_t type = buf[3], flags = buf[4];
        if (type == 0x0) {
          data_bytes_ += len;
          data_.append(buf, 9, len);
        }
        if (type == 0x1 && (flags & 0x1)) ended_ = true;            // trailers: END_STREAM
        if (type == 0x4 && !(flags & 0x1)) Frame(0x4, 0x1, 0, "");  // SETTINGS ACK
        if (type == 0x6 && !(flags & 0x1)) Frame(0x6, 0x1, 0, buf.substr(9, len));  // PING ACK
        buf.erase(0, 9 + len);
      }
    }
    return data_bytes_;
  }

 private:
  void Send(const std::string& bytes) {
    size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = write(fd_, bytes.data() + at, bytes.size() - at);
      if (n <= 0) return;
      at += n;
    }
  }
  void Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
    std::string f(9, '\0');
    f[0] = static_cast<char>(payload.size() >> 16);
    f[1] = static_cast<char>(payload.size() >> 8);
    f[2] = static_cast<char>(payload.size());
    f[3] = static_cast<char>(type);
    f[4] = static_cast<char>(flags);
    const uint32_t s = htonl(stream);
    std::memcpy(&f[5], &s, 4);
    Send(f + payload);
  }

  int fd_ = -1;
  bool connected_ = false;
  size_t data_bytes_ = 0;
  std::string data_;
  bool ended_ = false;
};

TEST_F(LeaseLifetimeTest, ALeaseStaysOutWhileTheResponseStallsAndReturnsWhenTheClientGoes) {
  StallingClient client(server_->grpc_port());
  ASSERT_TRUE(client.connected());
  client.SendRequest(RawRequest("wide", wide_).SerializeAsString());
  const size_t received = client.ReadUntilStalled(absl::Milliseconds(500));
  EXPECT_GT(received, 0u);
  EXPECT_LT(received, 1u << 20) << "flow control should have stopped the 8 MiB response";
  EXPECT_EQ(Leases(), 1u) << "the output buffer is leased to gRPC while it is being sent";
  EXPECT_EQ(model_->stats().serialize.Read().count, 0u);
  client.Close();  // the client goes away mid-transfer
  EXPECT_TRUE(LeasesBecome(0)) << Leases() << " leases still out after the client left";
  EXPECT_EQ(model_->stats().serialize.Read().count, 1u);
  EXPECT_EQ(session_->devices()[0].io->Stats().live_bytes, 0u);
}

TEST_F(LeaseLifetimeTest, AResponseStalledDuringUnloadSurvivesTheSessionAndArrivesIntact) {
  StallingClient client(server_->grpc_port());
  ASSERT_TRUE(client.connected());
  client.SendRequest(RawRequest("wide", wide_).SerializeAsString());
  client.ReadUntilStalled(absl::Milliseconds(500));
  ASSERT_EQ(Leases(), 1u);
  std::weak_ptr<engine::Session> session = session_;
  session_.reset();
  ASSERT_TRUE(server_->repository().Unload("wide").ok());
  EXPECT_TRUE(session.expired()) << "the session is gone while its output is still being sent";
  const std::string message = client.GrantAndReadAll();
  ASSERT_TRUE(client.ended());
  inference::ModelInferResponse resp;
  ASSERT_TRUE(resp.ParseFromString(message)) << message.size() << " bytes";
  EXPECT_TRUE(CheckOutputs(resp, wide_).ok()) << CheckOutputs(resp, wide_);
  EXPECT_EQ(model_->stats().serialize.Read().count, 1u) << "the last lease has returned";
}

}  // namespace
}  // namespace inferd::testing
