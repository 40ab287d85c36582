#include "server/response_writer.h"

#include <grpc/slice.h>
#include <grpcpp/support/slice.h>

#include <memory>
#include <utility>

#include "server/kserve_types.h"

namespace inferd::server {
namespace {

constexpr uint8_t kRawOutputContentsTag = (6 << 3) | 2;  // 0x32

// Runs the callback when the last slice of a response lets go of it.
class ReleaseNotifier {
 public:
  explicit ReleaseNotifier(std::function<void()> fn) : fn_(std::move(fn)) {}
  ~ReleaseNotifier() {
    if (fn_) fn_();
  }

 private:
  std::function<void()> fn_;
};

// What one data slice owns: the lease on its buffer and a share of the response's notifier.
struct SlicePin {
  memory::IOLease lease;
  std::shared_ptr<ReleaseNotifier> notifier;
};

void Unpin(void* user_data) { delete static_cast<SlicePin*>(user_data); }

size_t PutVarint(uint64_t v, uint8_t* out) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<uint8_t>(v);
  return n;
}

}  // namespace

grpc::ByteBuffer WriteInferResponse(inference::ModelInferResponse header,
                                    std::vector<LeasedOutput> outputs,
                                    std::function<void()> on_released) {
  bool all_shared = !outputs.empty();
  for (const LeasedOutput& out : outputs) {
    auto* t = header.add_outputs();
    t->set_name(out.name);
    t->set_datatype(KServeDataTypeName(out.type));
    for (int64_t d : out.shape.dims()) t->add_shape(d);
    all_shared = all_shared && out.shared_memory.has_value();
    if (const std::optional<SharedMemoryPlacement>& shm = out.shared_memory) {
      auto& params = *t->mutable_parameters();
      params["shared_memory_region"].set_string_param(shm->region);
      params["shared_memory_byte_size"].set_int64_param(static_cast<int64_t>(shm->byte_size));
      if (shm->offset != 0) {
        params["shared_memory_offset"].set_int64_param(static_cast<int64_t>(shm->offset));
      }
    }
  }
  auto notifier = std::make_shared<ReleaseNotifier>(std::move(on_released));

  std::vector<grpc::Slice> slices;
  slices.reserve(1 + 2 * outputs.size());
  // pass 1: the header, serialized by protobuf into one slice.
  const size_t header_bytes = header.ByteSizeLong();
  grpc_slice head = grpc_slice_malloc(header_bytes);
  header.SerializeWithCachedSizesToArray(GRPC_SLICE_START_PTR(head));
  slices.emplace_back(head, grpc::Slice::STEAL_REF);
  // pass 2: per output, tag + length, then the arena buffer itself.
  for (LeasedOutput& out : outputs) {
    if (all_shared) break;
    uint8_t prefix[11];
    prefix[0] = kRawOutputContentsTag;
    const size_t n = 1 + PutVarint(out.lease.size(), prefix + 1);
    slices.emplace_back(prefix, n);  // copied: at most 11 bytes
    if (out.lease.size() == 0) continue;
    auto* pin = new SlicePin{std::move(out.lease), notifier};
    slices.emplace_back(
        grpc_slice_new_with_user_data(pin->lease.mutable_data(), pin->lease.size(), Unpin, pin),
        grpc::Slice::STEAL_REF);
  }
  notifier.reset();  // from now on only the data slices hold it
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace inferd::server
