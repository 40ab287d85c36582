// The ModelInfer response, written without copying an output byte.
//
// WriteInferResponse serializes the header (the ModelInferResponse without raw_output_contents)
// with protobuf into one slice, then for each output a tiny slice holding the field tag 0x32
// (raw_output_contents, length-delimited) and the varint length, then a slice that points INTO
// the output's IOArena buffer. That slice owns a heap IOLease; gRPC calls the slice's destroy
// callback when it has finished with the bytes, which drops the lease, and the last lease returns
// the buffer to the arena's free list. Protobuf lets repeated fields follow the other fields, so
// the result parses as an ordinary ModelInferResponse.
//
// An output written into shared memory (LeasedOutput::shared_memory) carries the parameters
// shared_memory_region, shared_memory_byte_size (and shared_memory_offset when not 0), as Triton
// answers, and no bytes: when every output is in shared memory the response has no
// raw_output_contents; otherwise such an output has an empty entry, so that the entries stay
// one per output in order (clients index them by position).
//
// Example:
//   std::vector<LeasedOutput> outs;
//   outs.push_back({"probs", DataType::kFloat32, Shape{4, 10}, *io.Export(std::move(handle))});
//   inference::ModelInferResponse header;
//   header.set_model_name("mlp");
//   *response = WriteInferResponse(std::move(header), std::move(outs),
//                                  [start] { RecordSendLatency(absl::Now() - start); });
//
// Thread-safe: the destroy callbacks may run on any thread.
#ifndef INFERD_SERVER_RESPONSE_WRITER_H_
#define INFERD_SERVER_RESPONSE_WRITER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>

#include "engine/data_type.h"
#include "engine/shape.h"
#include "memory/io_arena.h"
#include "proto/inference.pb.h"

namespace inferd::server {

// Where an output was written in a client's system shared-memory region (Triton's
// system_shared_memory): the response names it in the output's parameters instead of sending
// the bytes.
struct SharedMemoryPlacement {
  std::string region;
  uint64_t offset = 0;
  uint64_t byte_size = 0;  // the bytes written
};

struct LeasedOutput {
  std::string name;
  engine::DataType type = engine::DataType::kUndefined;
  engine::Shape shape;
  memory::IOLease lease;  // the output's bytes: lease.data(), lease.size()
  // Set when the bytes went to shared memory (the lease is then empty).
  std::optional<SharedMemoryPlacement> shared_memory;
};

// `header` carries model_name, model_version, id and parameters; its outputs and
// raw_output_contents must be empty (the writer adds one InferOutputTensor per output).
// `on_released` (optional) runs once, on whichever thread drops the response's last output
// slice: the moment every lease of this response has been returned (at once if there is no
// output data).
grpc::ByteBuffer WriteInferResponse(inference::ModelInferResponse header,
                                    std::vector<LeasedOutput> outputs,
                                    std::function<void()> on_released = nullptr);

}  // namespace inferd::server

#endif  // INFERD_SERVER_RESPONSE_WRITER_H_
