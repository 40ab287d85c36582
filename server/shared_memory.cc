#include "server/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/message_text.h"

namespace inferd::server {
namespace {

// Region names travel in every request's parameters: short and printable keeps them quotable.
constexpr size_t kMaxNameBytes = 128;

absl::Status CheckName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("shared-memory region name is empty");
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("shared-memory region name ",
                                                   QuoteForMessage(name), " is longer than ",
                                                   kMaxNameBytes, " bytes"));
  }
  return absl::OkStatus();
}

// shm_open's portable form: one leading '/', no other, at most NAME_MAX bytes.
absl::Status CheckKey(absl::string_view key) {
  if (key.size() < 2 || key[0] != '/' || key.find('/', 1) != absl::string_view::npos ||
      key.size() > NAME_MAX || key.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shared-memory key ", QuoteForMessage(key),
        " is not a POSIX shared-memory name: expected '/name' (one leading '/', no other, at "
        "most ",
        NAME_MAX, " bytes), as given to shm_open"));
  }
  return absl::OkStatus();
}

std::string Errno(int e) { return std::strerror(e); }

}  // namespace

SharedMemoryRegion::~SharedMemoryRegion() {
  if (map_ != nullptr) munmap(map_, map_size_);
}

absl::StatusOr<absl::Span<uint8_t>> SharedMemoryRegion::Range(uint64_t offset,
                                                              uint64_t size) const {
  const std::optional<uint64_t> end = CheckedAdd<uint64_t>(offset, size);
  if (!end || *end > byte_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat(size, " bytes at offset ", offset, " of shared-memory region ",
                     QuoteForMessage(name_), " do not fit in its ", byte_size_, " bytes"));
  }
  return absl::Span<uint8_t>(data_ + offset, size);
}

absl::Status SharedMemoryRegistry::Register(absl::string_view name, absl::string_view key,
                                            uint64_t offset, uint64_t byte_size) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (byte_size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shared-memory region ", QuoteForMessage(name), ": byte_size is 0"));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (regions_.count(name) != 0) {
      return absl::AlreadyExistsError(absl::StrCat("shared-memory region ", QuoteForMessage(name),
                                                   " is already registered; unregister it "
                                                   "first"));
    }
  }
  const std::string k(key);
  const int fd = shm_open(k.c_str(), O_RDWR, 0);
  if (fd < 0) {
    const int e = errno;
    const std::string why = absl::StrCat("cannot open shared-memory key ", QuoteForMessage(key),
                                         " for region ", QuoteForMessage(name), ": ", Errno(e));
    return e == ENOENT ? absl::NotFoundError(why) : absl::PermissionDeniedError(why);
  }
  struct stat st {};
  const int stat_rc = fstat(fd, &st);
  const std::optional<uint64_t> end = CheckedAdd<uint64_t>(offset, byte_size);
  if (stat_rc != 0 || !end || *end > static_cast<uint64_t>(st.st_size)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(
        "shared-memory region ", QuoteForMessage(name), ": ", byte_size, " bytes at offset ",
        offset, " do not fit in key ", QuoteForMessage(key), " of ",
        stat_rc == 0 ? absl::StrCat(st.st_size) : std::string("unknown size"), " bytes"));
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t map_start = offset - offset % page;
  auto region = std::shared_ptr<SharedMemoryRegion>(new SharedMemoryRegion());
  region->map_size_ = static_cast<size_t>(*end - map_start);
  void* map = mmap(nullptr, region->map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                   static_cast<off_t>(map_start));
  const int map_errno = errno;
  close(fd);  // the mapping keeps the object
  if (map == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot map shared-memory region ", QuoteForMessage(name), ": ", Errno(map_errno)));
  }
  region->map_ = map;
  region->data_ = static_cast<uint8_t*>(map) + (offset - map_start);
  region->name_ = std::string(name);
  region->key_ = k;
  region->offset_ = offset;
  region->byte_size_ = byte_size;
  std::lock_guard<std::mutex> lock(mu_);
  // Checked again: another Register of the name may have won meanwhile (the region unmaps).
  if (!regions_.emplace(std::string(name), std::move(region)).second) {
    return absl::AlreadyExistsError(absl::StrCat("shared-memory region ", QuoteForMessage(name),
                                                 " is already registered; unregister it first"));
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::Unregister(absl::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (name.empty()) {
    regions_.clear();
  } else if (auto it = regions_.find(name); it != regions_.end()) {
    regions_.erase(it);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SharedMemoryRegistry::RegionStatus>> SharedMemoryRegistry::Status(
    absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RegionStatus> out;
  for (const auto& [n, r] : regions_) {
    if (!name.empty() && n != name) continue;
    out.push_back({r->name(), r->key(), r->offset(), r->byte_size()});
  }
  if (!name.empty() && out.empty()) {
    return absl::NotFoundError(
        absl::StrCat("unable to find system shared memory region ", QuoteForMessage(name)));
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> SharedMemoryRegistry::Find(
    absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown shared-memory region ", QuoteForMessage(name),
                                            "; register it with SystemSharedMemoryRegister"));
  }
  return it->second;
}

}  // namespace inferd::server
