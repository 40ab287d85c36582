#include "kernels/cpu/testing/bench_support.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/status/status.h"

namespace inferd::kernels::cpu::testing {

using engine::DataType;
using engine::Shape;
using engine::Tensor;

namespace {

// `buf` holds at least `bytes` (with slack, so that reruns with a few more bytes keep it).
void Reserve(std::vector<unsigned char>& buf, size_t bytes) {
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
}

}  // namespace

BenchContext::BenchContext(std::vector<const Tensor*> inputs, int outputs, engine::ThreadPool& pool)
    : inputs_(std::move(inputs)), outputs_(outputs), output_storage_(outputs), pool_(pool) {}

const Tensor* BenchContext::input(int i) const {
  return i >= 0 && i < num_inputs() ? inputs_[i] : nullptr;
}

absl::StatusOr<Tensor*> BenchContext::MakeOutputTensor(int slot, DataType type,
                                                       const Shape& shape) {
  if (!output_wanted(slot)) return absl::InvalidArgumentError("no such output");
  Reserve(output_storage_[slot], shape.NumElements() * engine::ElementSize(type));
  outputs_[slot] = Tensor::Borrowed(type, shape, output_storage_[slot].data());
  return &outputs_[slot];
}

absl::StatusOr<Tensor*> BenchContext::MakeOutputAlias(int slot, int input_index,
                                                      const Shape& shape) {
  const Tensor* in = input(input_index);
  if (!output_wanted(slot) || in == nullptr) return absl::InvalidArgumentError("no such tensor");
  outputs_[slot] = Tensor::Borrowed(in->dtype(), shape, in->raw_data());
  return &outputs_[slot];
}

absl::StatusOr<Tensor> BenchContext::MakeTemporaryTensor(DataType type, const Shape& shape) {
  if (next_temp_ == temps_.size()) temps_.emplace_back();
  std::vector<unsigned char>& buf = temps_[next_temp_++];
  Reserve(buf, shape.NumElements() * engine::ElementSize(type));
  return Tensor::Borrowed(type, shape, buf.data());
}

absl::StatusOr<void*> BenchContext::GetWorkspace(int slot_id) {
  auto it = workspaces_.find(slot_id);
  if (it == workspaces_.end()) return absl::NotFoundError("undeclared workspace");
  return it->second.data();
}

void BenchContext::Declare(const std::vector<engine::WorkspaceRequirement>& reqs) {
  for (const auto& r : reqs) Reserve(workspaces_[r.slot_id], r.bytes);
}

size_t BenchContext::OutputBytes() const {
  size_t bytes = 0;
  for (const Tensor& t : outputs_) bytes += t.bytes();
  return bytes;
}

absl::StatusOr<double> SecondsPerCall(int threads, absl::FunctionRef<absl::Status()> run,
                                      int batches) {
  for (int i = 0; i < 3; ++i) {
    if (absl::Status s = run(); !s.ok()) return s;
  }
  auto now = [threads] {
    if (threads == 1) {
      timespec t;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return t.tv_sec + t.tv_nsec * 1e-9;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  double best = 1e30;
  for (int batch = 0; batch < batches; ++batch) {
    int iterations = 0;
    const double start = now();
    double elapsed = 0;
    do {
      if (absl::Status s = run(); !s.ok()) return s;
      ++iterations;
      elapsed = now() - start;
    } while (elapsed < 0.1);
    best = std::min(best, elapsed / iterations);
  }
  return best;
}

}  // namespace inferd::kernels::cpu::testing
