// InferRequest: one ModelInfer request, read from gRPC's receive buffer with as few copies as the
// bytes allow.
//
// Parse walks the protobuf wire format over the ByteBuffer's slices (ByteBuffer::Dump: slice
// references, no copy). Header fields (model name, inputs' names / datatypes / shapes, requested
// outputs, parameters, typed contents) are copied out and parsed with protobuf; every
// raw_input_contents entry (field 7) is kept as a view into the slices, which the request holds
// for its whole life. Bind then checks the request against the model and makes the engine's
// input tensors:
//   - a raw entry that lies in one slice and is aligned for its element type is BORROWED: the
//     tensor points into gRPC's receive buffer, no byte is copied;
//   - a raw entry split across slices, a misaligned one, and typed `contents` are STAGED: copied
//     (converted) into a buffer of the model's IOArena, returned when the request is destroyed.
//   - a BYTES input (4-byte length-prefixed raw entry, shared memory, or bytes_contents) is
//     decoded into strings the request owns (docs/strings.md);
//   - an input whose parameters name a registered system shared-memory region
//     (shared_memory_region, shared_memory_byte_size, optional shared_memory_offset: Triton's
//     system_shared_memory extension) is read from the region IN PLACE (borrowed; staged only
//     when misaligned); it has no raw_input_contents entry. The request holds the region (mapped)
//     for its whole life. A requested output with the same parameters is written into its
//     region after the run (WriteSharedMemoryOutputs: one copy from the arena).
// Every problem is an INVALID_ARGUMENT with a message a client can act on, e.g.
//   input 'x': expected FP32 [1,3,224,224] (602112 bytes), got 602100 bytes
//
// Example:
//   absl::StatusOr<std::unique_ptr<InferRequest>> req = InferRequest::Parse(*byte_buffer);
//   if (!req.ok()) return req.status();
//   ... find the model named by (*req)->header().model_name() ...
//   INFERD_RETURN_IF_ERROR((*req)->Bind(signature, session->staging_arena()));
//   session->Run((*req)->inputs(), (*req)->requested_outputs());
//
// Thread-compatible: one thread at a time (the request moves from a gRPC thread to a worker).
#ifndef INFERD_SERVER_REQUEST_READER_H_
#define INFERD_SERVER_REQUEST_READER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "engine/session.h"
#include "memory/allocation_handle.h"
#include "memory/io_arena.h"
#include "proto/inference.pb.h"
#include "server/model_signature.h"
#include "server/response_writer.h"
#include "server/shared_memory.h"

namespace inferd::server {

class InferRequest {
 public:
  // Splits the wire bytes into the header (parsed) and views of the raw_input_contents entries.
  // INVALID_ARGUMENT for bytes that are not a ModelInferRequest.
  static absl::StatusOr<std::unique_ptr<InferRequest>> Parse(const grpc::ByteBuffer& buffer);

  // A request another transport has already split (HTTP: the JSON header, and the binary
  // tensor data of its body): `raw` holds one view per input when the inputs travel as raw bytes
  // (else empty, and the header's typed contents are used). The views must stay valid while
  // `keepalive` lives; the request holds it for its whole life.
  static std::unique_ptr<InferRequest> FromParts(inference::ModelInferRequest header,
                                                 std::vector<absl::Span<const uint8_t>> raw,
                                                 std::shared_ptr<const void> keepalive);

  InferRequest(const InferRequest&) = delete;
  InferRequest& operator=(const InferRequest&) = delete;
  ~InferRequest();

  // The request without raw_input_contents.
  const inference::ModelInferRequest& header() const { return header_; }
  size_t raw_input_count() const { return raw_.size(); }

  // The regions that inputs and requested outputs may name; set by the transport before Bind.
  // Null (the default): a request naming a region is INVALID_ARGUMENT. Must outlive Bind.
  void set_shared_memory(const SharedMemoryRegistry* registry) { shared_memory_ = registry; }

  // Validates the request against `model` (input names, datatypes, shapes, byte sizes, contents,
  // requested outputs) and makes the input tensors, staging into `staging` what cannot be
  // borrowed. Call once. INVALID_ARGUMENT for a bad request; the arena's status if staging
  // memory cannot be had.
  absl::Status Bind(const ModelSignature& model, memory::IOArena& staging);

  // After Bind: the tensors for Session::Run (valid while this request lives), and the outputs
  // asked for (empty: all).
  absl::Span<const engine::InputTensor> inputs() const { return inputs_; }
  const std::vector<std::string>& requested_outputs() const { return outputs_; }
  uint64_t borrowed_bytes() const { return borrowed_bytes_; }
  uint64_t staged_bytes() const { return staged_bytes_; }

  // Returns the staging buffers now (they are also returned by the destructor).
  void ReleaseStaging();

  // After a successful run: copies each output that the request asked into a shared-memory
  // region there (one copy from the arena), sets its LeasedOutput::shared_memory and drops its
  // lease (the response carries no bytes for it). Adds the time taken to `*elapsed`.
  // INVALID_ARGUMENT when an output is larger than its region's shared_memory_byte_size.
  absl::Status WriteSharedMemoryOutputs(std::vector<LeasedOutput>& outputs,
                                        absl::Duration* elapsed);

 private:
  struct Piece {
    const uint8_t* data;
    size_t size;
  };
  // One raw_input_contents entry: one piece when it lies in one slice.
  struct RawEntry {
    absl::InlinedVector<Piece, 1> pieces;
    size_t size = 0;
  };
  class Walker;
  // Where a tensor lives in shared memory (from its parameters).
  struct SharedRef {
    std::string region;
    uint64_t offset = 0;
    uint64_t byte_size = 0;
  };
  struct SharedOutput {
    std::string name;
    SharedRef ref;
    std::shared_ptr<const SharedMemoryRegion> region;
  };

  InferRequest() = default;
  absl::Status BindOne(int index, int raw_index, const TensorSpec& spec, engine::DataType type,
                       const std::vector<int64_t>& dims, memory::IOArena& staging);
  // A BYTES input (docs/strings.md): its elements decoded into strings_ (from the 4-byte
  // length-prefixed raw or shared-memory form, or contents.bytes_contents), borrowed by the input.
  absl::Status BindStrings(int index, int raw_index, int64_t elements,
                           const std::vector<std::string>& typed, const engine::Shape& shape);
  // An input read from shared memory: `tensor` points into the region (or a staged copy).
  absl::Status BindShared(const std::string& name, const SharedRef& ref, size_t bytes,
                          engine::InputTensor& tensor, memory::IOArena& staging);
  absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> Region(const std::string& tensor,
                                                                   const std::string& region);
  absl::Status BindSharedOutputs();
  // The shared-memory parameters of a tensor (`what`: "input 'x'"); nullopt without
  // shared_memory_region.
  static absl::StatusOr<std::optional<SharedRef>> ParseShared(
      const std::string& what,
      const google::protobuf::Map<std::string, inference::InferParameter>& parameters);
  absl::StatusOr<void*> Stage(size_t bytes, memory::IOArena& staging);

  std::vector<grpc::Slice> slices_;        // keeps the received bytes alive
  std::shared_ptr<const void> keepalive_;  // FromParts: keeps the transport's bytes alive
  inference::ModelInferRequest header_;
  std::vector<RawEntry> raw_;
  std::vector<memory::AllocationHandle> staged_;
  std::vector<engine::InputTensor> inputs_;
  std::deque<std::vector<std::string>> strings_;  // BYTES inputs' elements (stable addresses)
  std::vector<std::string> outputs_;
  uint64_t borrowed_bytes_ = 0;
  uint64_t staged_bytes_ = 0;
  bool bound_ = false;
  const SharedMemoryRegistry* shared_memory_ = nullptr;
  std::vector<std::optional<SharedRef>> shared_inputs_;  // per input, from Bind
  std::vector<SharedOutput> shared_outputs_;
  // The regions inputs and outputs use: mapped while the request lives.
  std::vector<std::shared_ptr<const SharedMemoryRegion>> regions_;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_REQUEST_READER_H_
