// libFuzzer target: random and mutated ModelInfer bytes through the request reader against a
// loaded mlp model. Built with clang (-fsanitize=fuzzer,address) by request_reader_fuzz_test.sh.
//
// Input layout: byte 0 picks how the rest is cut into gRPC slices (one slice, fixed-size pieces
// of 1..255 bytes, or cuts chosen by the following bytes), so entries that straddle slices and
// misaligned entries are exercised as well as single-slice borrowing. Each slice is an exact-size
// heap copy, so reading past one is an AddressSanitizer error.
//
// Checked on every input: Parse and Bind never crash; a bound request's tensors hold exactly
// their bytes (borrowed + staged accounting adds up); the model runs on it; and once the request
// is gone the IOArena holds no live buffer (no staging buffer leaks, whatever the error path).
//
// Environment: INFERD_FUZZ_MODEL_DIR (the mlp model directory, required);
// INFERD_FUZZ_WRITE_SEEDS=DIR writes the seed corpus (valid requests) into DIR and exits.
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/cpu/cpu_kernels.h"
#include "server/request_reader.h"

namespace {

using inferd::server::InferRequest;
using inferd::server::ModelSignature;

struct Model {
  inferd::engine::KernelRegistry registry;
  std::unique_ptr<inferd::engine::Session> session;
  ModelSignature signature;
};
Model* g_model = nullptr;

void Die(const std::string& why) {
  std::fprintf(stderr, "request_reader_fuzz: %s\n", why.c_str());
  std::abort();
}

void WriteSeeds(const std::string& dir) {
  auto write = [&](const std::string& name, uint8_t mode, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << static_cast<char>(mode) << bytes;
  };
  inference::ModelInferRequest r;
  r.set_model_name("mlp");
  r.set_id("seed");
  auto* x = r.add_inputs();
  x->set_name("x");
  x->set_datatype("FP32");
  x->add_shape(4);
  x->add_shape(64);
  std::string raw(4 * 64 * 4, '\0');
  for (size_t i = 0; i < raw.size(); i += 4) {
    const float f = static_cast<float>(i % 97) / 97.0f - 0.5f;
    std::memcpy(&raw[i], &f, 4);
  }
  r.add_raw_input_contents(raw);
  write("raw_one_slice", 0, r.SerializeAsString());
  write("raw_pieces_7", 7, r.SerializeAsString());
  write("raw_pieces_64", 64, r.SerializeAsString());
  r.add_outputs()->set_name("logits");
  write("raw_one_output", 0, r.SerializeAsString());
  r.clear_raw_input_contents();
  for (size_t i = 0; i < raw.size(); i += 4) {
    float f;
    std::memcpy(&f, &raw[i], 4);
    r.mutable_inputs(0)->mutable_contents()->add_fp32_contents(f);
  }
  write("typed", 3, r.SerializeAsString());
}

// Cuts `bytes` into exact-size heap slices as `mode` says.
grpc::ByteBuffer Slices(uint8_t mode, const uint8_t* data, size_t size) {
  std::vector<grpc::Slice> slices;
  auto add = [&](size_t at, size_t n) {
    void* p = std::malloc(n == 0 ? 1 : n);
    std::memcpy(p, data + at, n);
    slices.emplace_back(grpc_slice_new(p, n, std::free), grpc::Slice::STEAL_REF);
  };
  if (mode == 0 || size == 0) {
    add(0, size);
  } else if (mode < 200) {
    for (size_t at = 0; at < size; at += mode) add(at, std::min<size_t>(mode, size - at));
  } else {
    // Cut lengths taken from the data itself (cycling), offset by one to keep misalignment.
    size_t at = 0, k = 1;
    while (at < size) {
      const size_t n = std::min<size_t>(1 + data[k % size] * (mode - 199), size - at);
      add(at, n);
      at += n;
      k += 7;
    }
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  grpc_init();
  if (const char* seeds = std::getenv("INFERD_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  const char* dir = std::getenv("INFERD_FUZZ_MODEL_DIR");
  if (dir == nullptr) Die("INFERD_FUZZ_MODEL_DIR is not set");
  g_model = new Model();
  if (!inferd::kernels::cpu::RegisterCpuKernels(g_model->registry).ok()) Die("kernels");
  auto session =
      inferd::engine::Session::Load(std::string(dir) + "/model.onnx", {}, g_model->registry);
  if (!session.ok()) Die(std::string(session.status().message()));
  g_model->session = *std::move(session);
  g_model->signature = ModelSignature::FromSession(*g_model->session, "mlp", "1");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  inferd::memory::IOArena& io = g_model->session->staging_arena();
  {
    const grpc::ByteBuffer buffer = Slices(data[0], data + 1, size - 1);
    absl::StatusOr<std::unique_ptr<InferRequest>> req = InferRequest::Parse(buffer);
    if (!req.ok()) {
      if (req.status().code() != absl::StatusCode::kInvalidArgument)
        Die("parse: not INVALID_ARGUMENT");
      return 0;
    }
    absl::Status bound = (*req)->Bind(g_model->signature, io);
    if (!bound.ok()) {
      if (bound.message().empty()) Die("an error without a message");
      return 0;
    }
    uint64_t total = 0;
    for (const inferd::engine::InputTensor& t : (*req)->inputs()) {
      total += t.bytes;
      // Touch every byte: a tensor pointing outside its slice or buffer is an ASan error.
      volatile uint8_t sink = 0;
      for (size_t i = 0; i < t.bytes; ++i) sink ^= static_cast<const uint8_t*>(t.data)[i];
      (void)sink;
    }
    if (total != (*req)->borrowed_bytes() + (*req)->staged_bytes()) Die("byte accounting");
    auto outputs = g_model->session->Run((*req)->inputs(), (*req)->requested_outputs());
    if (!outputs.ok() && outputs.status().code() != absl::StatusCode::kInvalidArgument) {
      Die("run: " + std::string(outputs.status().message()));
    }
  }
  if (io.Stats().live_bytes != 0) Die("a staging or output buffer outlived its request");
  return 0;
}
