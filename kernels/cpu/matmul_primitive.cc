#include "kernels/cpu/matmul_primitive.h"

#include <unordered_map>

#include "base/status_macros.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {

absl::StatusOr<dnnl::matmul::primitive_desc> MatMulPrimitive::MakePd(const MatMulSpec& spec,
                                                                     int threads,
                                                                     const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  dnnl::matmul::primitive_desc pd;
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the matmul", [&]() -> absl::Status {
    dnnl::primitive_attr attr = UserScratchpadAttr();
    if (spec.alpha != 1.0f) attr.set_output_scales(0, {spec.alpha});
    if (spec.beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(spec.beta);
      attr.set_post_ops(ops);
    }
    const dnnl::memory::desc weights =
        spec.constant_weights != nullptr ? AnyDesc(spec.weights.dims()) : spec.weights;
    ScopedOmpThreads scoped(threads);
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(spec.src, weights, spec.bias, spec.dst),
                                      attr, *eng);
    return absl::OkStatus();
  }));
  return pd;
}

absl::StatusOr<std::shared_ptr<const MatMulPrimitive>> MatMulPrimitive::Build(
    const MatMulSpec& spec, int threads, const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  INFERD_ASSIGN_OR_RETURN(dnnl::matmul::primitive_desc pd, MakePd(spec, threads, node));
  std::shared_ptr<MatMulPrimitive> p(new MatMulPrimitive());
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the matmul", [&]() -> absl::Status {
    ScopedOmpThreads scoped(threads);
    p->engine_ = eng;
    p->pd_ = pd;
    p->primitive_ = dnnl::matmul(pd);
    p->src_ = spec.src;
    p->weights_ = spec.weights;
    p->bias_ = spec.bias;
    p->dst_ = spec.dst;
    if (spec.constant_weights != nullptr && pd.weights_desc() != spec.weights) {
      p->packed_weights_ =
          ReorderWeights(*eng, spec.weights, spec.constant_weights, pd.weights_desc());
      p->prepacked_ = true;
    }
    return absl::OkStatus();
  }));
  return std::shared_ptr<const MatMulPrimitive>(std::move(p));
}

absl::Status MatMulPrimitive::Execute(engine::KernelContext& ctx, const void* src,
                                      const void* weights, const void* bias, void* dst,
                                      const NodeLabel& node) const {
  return CatchDnnl(node, "running the matmul", [&]() -> absl::Status {
    std::unordered_map<int, dnnl::memory> args;
    args.emplace(DNNL_ARG_SRC, dnnl::memory(src_, *engine_, const_cast<void*>(src)));
    args.emplace(DNNL_ARG_WEIGHTS,
                 prepacked_ ? packed_weights_
                            : dnnl::memory(weights_, *engine_, const_cast<void*>(weights)));
    if (bias_.get_size() != 0) {
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_, *engine_, const_cast<void*>(bias)));
    }
    args.emplace(DNNL_ARG_DST, dnnl::memory(dst_, *engine_, dst));
    INFERD_RETURN_IF_ERROR(AddScratchpadArg(ctx, pd_.scratchpad_desc(), *engine_, args, node));
    ExecutePrimitive(*engine_, primitive_, args, ctx.threads().num_threads());
    return absl::OkStatus();
  });
}

}  // namespace inferd::kernels::cpu
