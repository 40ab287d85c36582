// SharedMemoryRegistry against real POSIX shared-memory objects: registration checks (keys,
// sizes, ranges, overflow, duplicates), Range bounds, and a region unregistered while in use
// staying mapped.
#include "server/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd::server {
namespace {

using ::testing::HasSubstr;

// A shared-memory object of `size` bytes under a key unique to this process, removed at the end.
class ShmObject {
 public:
  ShmObject(const std::string& tag, size_t size)
      : key_("/inferd_test_" + tag + "_" + std::to_string(getpid())) {
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    map_ = static_cast<uint8_t*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    size_ = size;
    close(fd);
  }
  ~ShmObject() {
    munmap(map_, size_);
    shm_unlink(key_.c_str());
  }
  const std::string& key() const { return key_; }
  uint8_t* bytes() { return map_; }

 private:
  std::string key_;
  uint8_t* map_ = nullptr;
  size_t size_ = 0;
};

TEST(SharedMemoryRegistryTest, RegisterFindStatusUnregister) {
  ShmObject obj("basic", 3 * 4096);
  SharedMemoryRegistry shm;
  ASSERT_TRUE(shm.Register("in", obj.key(), 4096 + 8, 100).ok());
  absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> r = shm.Find("in");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->byte_size(), 100u);
  EXPECT_EQ((*r)->offset(), 4096u + 8);
  // The region's byte 0 is the object's byte 4104 (an offset that is not page aligned).
  obj.bytes()[4096 + 8] = 42;
  absl::StatusOr<absl::Span<uint8_t>> all = (*r)->Range(0, 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0], 42);
  (*all)[99] = 7;  // written through the region, seen in the object
  EXPECT_EQ(obj.bytes()[4096 + 8 + 99], 7);

  absl::StatusOr<std::vector<SharedMemoryRegistry::RegionStatus>> st = shm.Status("");
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->size(), 1u);
  EXPECT_EQ((*st)[0].key, obj.key());
  EXPECT_EQ(shm.Status("other").status().code(), absl::StatusCode::kNotFound);

  EXPECT_TRUE(shm.Unregister("in").ok());
  EXPECT_TRUE(shm.Unregister("in").ok());  // unknown: OK, as Triton
  EXPECT_EQ(shm.Find("in").status().code(), absl::StatusCode::kNotFound);
}

TEST(SharedMemoryRegistryTest, RegisterTwiceIsAlreadyExists) {
  ShmObject obj("twice", 4096);
  SharedMemoryRegistry shm;
  ASSERT_TRUE(shm.Register("r", obj.key(), 0, 16).ok());
  EXPECT_EQ(shm.Register("r", obj.key(), 0, 16).code(), absl::StatusCode::kAlreadyExists);
}

TEST(SharedMemoryRegistryTest, BadKeysAndSizes) {
  ShmObject obj("bad", 4096);
  SharedMemoryRegistry shm;
  EXPECT_EQ(shm.Register("r", "no_slash", 0, 16).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shm.Register("r", "/a/b", 0, 16).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shm.Register("r", std::string(300, 'k').insert(0, "/"), 0, 16).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shm.Register("", obj.key(), 0, 16).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shm.Register("r", obj.key(), 0, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(shm.Register("r", "/inferd_test_does_not_exist", 0, 16).code(),
            absl::StatusCode::kNotFound);
  // Past the object's end, and an offset + size that wraps.
  absl::Status past = shm.Register("r", obj.key(), 4000, 97);
  EXPECT_EQ(past.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(past.message(), HasSubstr("do not fit"));
  EXPECT_EQ(shm.Register("r", obj.key(), std::numeric_limits<uint64_t>::max() - 4, 16).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(shm.Register("r", obj.key(), 4000, 96).ok());  // exactly to the end
}

TEST(SharedMemoryRegistryTest, RangeIsBoundsAndOverflowChecked) {
  ShmObject obj("range", 4096);
  SharedMemoryRegistry shm;
  ASSERT_TRUE(shm.Register("r", obj.key(), 0, 64).ok());
  std::shared_ptr<const SharedMemoryRegion> r = *shm.Find("r");
  EXPECT_TRUE(r->Range(60, 4).ok());
  EXPECT_TRUE(r->Range(64, 0).ok());
  EXPECT_EQ(r->Range(61, 4).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r->Range(65, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r->Range(8, std::numeric_limits<uint64_t>::max()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SharedMemoryRegistryTest, UnregisteredWhileInUseStaysMapped) {
  ShmObject obj("inuse", 4096);
  SharedMemoryRegistry shm;
  ASSERT_TRUE(shm.Register("a", obj.key(), 0, 32).ok());
  ASSERT_TRUE(shm.Register("b", obj.key(), 32, 32).ok());
  std::shared_ptr<const SharedMemoryRegion> held = *shm.Find("a");
  ASSERT_TRUE(shm.Unregister("").ok());  // every region
  EXPECT_TRUE(shm.Status("")->empty());
  // The request that holds it still reads and writes the mapping.
  obj.bytes()[5] = 9;
  EXPECT_EQ((*held->Range(0, 32))[5], 9);
  (*held->Range(0, 32))[6] = 11;
  EXPECT_EQ(obj.bytes()[6], 11);
  // The name is free again.
  EXPECT_TRUE(shm.Register("a", obj.key(), 0, 32).ok());
}

}  // namespace
}  // namespace inferd::server
