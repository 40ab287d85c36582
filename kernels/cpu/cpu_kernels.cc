#include "kernels/cpu/cpu_kernels.h"

#include <vector>

#include "base/status_macros.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

// Every CPU kernel family in one list: the operators each defines, and the function (at the
// bottom of the family's .cc) returning its KernelDefs with their opsets and element types.
// `inferctl ops` prints the whole table (domain, op, opsets, device, types).
//
// `workspace`: kNone where no kernel of the family declares a workspace
// (OpKernel::DeclareWorkspaceRequirements) or takes scratch from the arena
// (KernelContext::MakeTemporaryTensor, CopyValue): their estimate is then exactly 0 bytes, set
// here for the whole family, so the partitioner's budget charges them nothing beyond their
// outputs. kOwn: the family's kernels declare or take workspace; those with an estimate function
// give it, the others get the partitioner's 1.5x heuristic. A family whose kernels start taking
// workspace must move to kOwn.
enum class Workspace { kNone, kOwn };
constexpr Workspace kOwn = Workspace::kOwn;

struct Family {
  const char* ops;
  std::vector<engine::KernelDef> (*defs)();
  Workspace workspace = Workspace::kNone;
};

const Family kFamilies[] = {
    // oneDNN primitives.
    {"MatMul, com.inferd FusedMatMul", MatMulKernelDefs, kOwn},
    {"Gemm", GemmKernelDefs, kOwn},
    {"Conv, com.inferd FusedConv", ConvKernelDefs, kOwn},
    {"ConvTranspose", ConvTransposeKernelDefs, kOwn},
    {"MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool", PoolKernelDefs, kOwn},
    {"LpPool, GlobalLpPool", LpPoolKernelDefs, kOwn},
    {"DeformConv", DeformConvKernelDefs, kOwn},
    // Recurrent: oneDNN's RNN primitives where they match ONNX, own code elsewhere.
    {"LSTM, GRU, RNN, com.microsoft DynamicQuantizeLSTM", RnnKernelDefs, kOwn},
    // Elementwise.
    {"Add, Sub, Mul, Div, Pow, Mod, PRelu", BinaryKernelDefs},
    {"Neg, Abs, Sign, Sqrt, Reciprocal, Exp, Log, Erf, Tanh, Sigmoid, Sin, Cos, Floor, Ceil, "
     "Round, IsNaN, Not",
     UnaryKernelDefs},
    {"Relu, LeakyRelu, Elu, Selu, HardSigmoid, HardSwish, Softplus, Clip", ActivationKernelDefs},
    {"Identity, Dropout", PassThroughKernelDefs, kOwn},
    {"Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Where",
     CompareLogicalKernelDefs},
    {"Cast, CastLike", CastKernelDefs},
    {"Sum, Mean, Max, Min", VariadicKernelDefs},
    // Rows, normalization, reductions.
    {"Softmax, LogSoftmax, Hardmax", SoftmaxKernelDefs},
    {"LayerNormalization", LayerNormKernelDefs, kOwn},
    {"BatchNormalization, InstanceNormalization", NormKernelDefs},
    {"GroupNormalization", GroupNormKernelDefs},
    {"ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, "
     "ReduceSumSquare, ReduceLogSum, ReduceLogSumExp",
     ReduceKernelDefs, kOwn},
    {"ArgMax, ArgMin", ArgReduceKernelDefs},
    {"TopK", TopKKernelDefs, kOwn},
    {"CumSum", CumSumKernelDefs},
    {"Einsum", EinsumKernelDefs, kOwn},
    // Shapes and data movement.
    {"Gather", GatherKernelDefs},
    {"Reshape, Concat", ShapeKernelDefs},
    {"Transpose", TransposeKernelDefs},
    {"Flatten, Squeeze, Unsqueeze", ViewKernelDefs},
    {"Split", SplitKernelDefs},
    {"Slice", SliceKernelDefs},
    {"GatherND, GatherElements", GatherNdKernelDefs},
    {"ScatterND, ScatterElements, Scatter", ScatterKernelDefs},
    {"Expand, Tile", ExpandTileKernelDefs},
    {"Pad", PadKernelDefs},
    {"Shape, Size, ConstantOfShape, Range, NonZero", ShapeInfoKernelDefs},
    {"Resize, Upsample", ResizeKernelDefs, kOwn},
    {"DepthToSpace, SpaceToDepth", DepthSpaceKernelDefs},
    {"Trilu", TriluKernelDefs},
    {"OneHot", OneHotKernelDefs, kOwn},
    {"Col2Im", Col2ImKernelDefs},
    {"CenterCropPad", CenterCropPadKernelDefs},
    {"AffineGrid", AffineGridKernelDefs},
    // The KV-cache rewrite's ops (engine/kv_cache_rewrite.h).
    {"com.inferd KvCacheAppend, KvCacheMatMul, KvCacheShape", KvCacheKernelDefs},
    // The operator tail (own code).
    {"Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Softsign, ThresholdedRelu, Celu, "
     "Mish, Gelu, Shrink, IsInf, BitwiseNot",
     UnaryTailKernelDefs},
    {"BitwiseAnd, BitwiseOr, BitwiseXor, BitShift", BitwiseKernelDefs},
    {"NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss", LossKernelDefs},
    {"NonMaxSuppression", NmsKernelDefs, kOwn},
    {"EyeLike, Compress", EyeCompressKernelDefs},
    {"TfIdfVectorizer", TfIdfKernelDefs, kOwn},  // a temporary for the counts
    {"HannWindow, HammingWindow, BlackmanWindow", SignalWindowKernelDefs},
    {"Det", DetKernelDefs, kOwn},
    {"Unique", UniqueKernelDefs, kOwn},
    // The node tests' last operators: sampling, unpooling, normalization, signal.
    {"GridSample", GridSampleKernelDefs},
    {"RoiAlign", RoiAlignKernelDefs},
    {"MaxUnpool", MaxUnpoolKernelDefs},
    {"LRN, MeanVarianceNormalization", LrnMvnKernelDefs, kOwn},
    {"ReverseSequence", ReverseSequenceKernelDefs},
    {"DFT, STFT", DftKernelDefs, kOwn},
    {"MelWeightMatrix", MelWeightMatrixKernelDefs},
    // Training-mode optimizers (ai.onnx.preview.training), random ops, numeric ai.onnx.ml ops.
    {"ai.onnx.preview.training Adagrad, Adam, Momentum", TrainingKernelDefs},
    {"RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike, Bernoulli, Multinomial",
     RandomKernelDefs},
    {"ai.onnx.ml Binarizer, ArrayFeatureExtractor, Scaler, Normalizer, LinearRegressor",
     MlKernelDefs},
    // ONNX Runtime's transformer contrib ops (docs/contrib-ops.md).
    {"com.microsoft Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd", ContribActivationKernelDefs},
    {"com.microsoft SkipLayerNormalization, SkipSimplifiedLayerNormalization, "
     "EmbedLayerNormalization, SimplifiedLayerNormalization",
     ContribNormKernelDefs},
    {"com.microsoft Attention, MultiHeadAttention", ContribAttentionKernelDefs, kOwn},
    // The onnxruntime-genai model builder's ops (docs/genai-ops.md).
    {"com.microsoft MatMulNBits", MatMulNBitsKernelDefs, kOwn},
    {"com.microsoft RotaryEmbedding", RotaryEmbeddingKernelDefs},
    {"com.microsoft GroupQueryAttention", GroupQueryAttentionKernelDefs, kOwn},
    {"com.microsoft GatherBlockQuantized", GatherBlockQuantizedKernelDefs},
    // Tensor sequences and optionals (docs/sequences.md).
    {"SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase, "
     "SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap, Optional, "
     "OptionalHasElement, OptionalGetElement",
     SequenceKernelDefs, kOwn},
    // Strings (docs/strings.md).
    {"StringNormalizer, StringConcat, StringSplit, RegexFullMatch, Equal (string)",
     StringKernelDefs},
    {"ai.onnx.ml LabelEncoder", LabelEncoderKernelDefs},
    {"Identity, Reshape, Flatten, Squeeze, Unsqueeze, Concat, Gather, GatherElements, GatherND, "
     "Slice, Split, Transpose, Expand, Tile, Where (string)",
     StringMovementKernelDefs, kOwn},  // index tensors are temporaries
    // Quantization (docs/quantization.md).
    {"QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear", QuantizeKernelDefs},
    {"MatMulInteger, QLinearMatMul, MatMulIntegerToFloat, DynamicQuantizeMatMul",
     IntegerMatMulKernelDefs, kOwn},
    {"ConvInteger, QLinearConv", IntegerConvKernelDefs, kOwn},
    {"com.microsoft QGemm", QGemmKernelDefs, kOwn},
    {"com.microsoft QLinearSoftmax, QLinearAveragePool", QLinearSoftmaxPoolKernelDefs},
    {"com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, "
     "QLinearGlobalAveragePool",
     QLinearContribKernelDefs},
};

}  // namespace

absl::Status RegisterCpuKernels(engine::KernelRegistry& registry) {
  for (const Family& family : kFamilies) {
    for (engine::KernelDef& def : family.defs()) {
      if (family.workspace == Workspace::kNone && !def.estimate_workspace) {
        def.estimate_workspace = [](const engine::KernelInfo&) -> absl::StatusOr<size_t> {
          return size_t{0};
        };
      }
      INFERD_RETURN_IF_ERROR(registry.Register(std::move(def)));
    }
  }
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cpu
