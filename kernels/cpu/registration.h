// The kernel families' definition tables: one function per family (at the bottom of its .cc)
// returning its KernelDefs (op, opsets, element types, factory). cpu_kernels.cc lists them all in
// one place and registers them. Internal to //kernels/cpu.
#ifndef INFERD_KERNELS_CPU_REGISTRATION_H_
#define INFERD_KERNELS_CPU_REGISTRATION_H_

#include <vector>

#include "engine/kernel_registry.h"

namespace inferd::kernels::cpu {

// :onednn_kernels
std::vector<engine::KernelDef> MatMulKernelDefs();         // matmul.cc
std::vector<engine::KernelDef> GemmKernelDefs();           // gemm.cc
std::vector<engine::KernelDef> ConvKernelDefs();           // conv.cc
std::vector<engine::KernelDef> ConvTransposeKernelDefs();  // conv_transpose.cc
std::vector<engine::KernelDef> PoolKernelDefs();           // pool.cc
std::vector<engine::KernelDef> LpPoolKernelDefs();         // lp_pool.cc
std::vector<engine::KernelDef> DeformConvKernelDefs();     // deform_conv.cc

// :rnn_kernels
std::vector<engine::KernelDef> RnnKernelDefs();  // rnn.cc: LSTM, GRU, RNN

// elementwise: :binary_kernels, :unary_kernels, :compare_logical_kernels, :cast_kernels,
// :variadic_kernels
std::vector<engine::KernelDef> BinaryKernelDefs();          // binary.cc
std::vector<engine::KernelDef> UnaryKernelDefs();           // unary.cc
std::vector<engine::KernelDef> ActivationKernelDefs();      // activation.cc
std::vector<engine::KernelDef> PassThroughKernelDefs();     // identity.cc
std::vector<engine::KernelDef> CompareLogicalKernelDefs();  // compare_logical.cc
std::vector<engine::KernelDef> CastKernelDefs();            // cast.cc
std::vector<engine::KernelDef> VariadicKernelDefs();        // variadic.cc

// :softmax_kernels, :norm_kernels, :reduce_kernels, :einsum_kernels
std::vector<engine::KernelDef> SoftmaxKernelDefs();    // softmax.cc
std::vector<engine::KernelDef> LayerNormKernelDefs();  // layer_norm.cc
std::vector<engine::KernelDef> NormKernelDefs();       // norm.cc
std::vector<engine::KernelDef> GroupNormKernelDefs();  // group_norm.cc
std::vector<engine::KernelDef> ReduceKernelDefs();     // reduce.cc
std::vector<engine::KernelDef> ArgReduceKernelDefs();  // arg_reduce.cc
std::vector<engine::KernelDef> TopKKernelDefs();       // topk.cc
std::vector<engine::KernelDef> CumSumKernelDefs();     // cumsum.cc
std::vector<engine::KernelDef> EinsumKernelDefs();     // einsum.cc

// :cpu_kernels itself
std::vector<engine::KernelDef> GatherKernelDefs();     // gather.cc
std::vector<engine::KernelDef> ShapeKernelDefs();      // shape_ops.cc
std::vector<engine::KernelDef> TransposeKernelDefs();  // transpose.cc

// :movement_kernels
std::vector<engine::KernelDef> ViewKernelDefs();           // squeeze.cc
std::vector<engine::KernelDef> SplitKernelDefs();          // split.cc
std::vector<engine::KernelDef> SliceKernelDefs();          // slice.cc
std::vector<engine::KernelDef> GatherNdKernelDefs();       // gather_nd.cc
std::vector<engine::KernelDef> ScatterKernelDefs();        // scatter.cc
std::vector<engine::KernelDef> ExpandTileKernelDefs();     // expand_tile.cc
std::vector<engine::KernelDef> PadKernelDefs();            // pad.cc
std::vector<engine::KernelDef> ShapeInfoKernelDefs();      // shape_info.cc
std::vector<engine::KernelDef> ResizeKernelDefs();         // resize.cc
std::vector<engine::KernelDef> DepthSpaceKernelDefs();     // depth_space.cc
std::vector<engine::KernelDef> TriluKernelDefs();          // trilu.cc
std::vector<engine::KernelDef> OneHotKernelDefs();         // onehot.cc
std::vector<engine::KernelDef> Col2ImKernelDefs();         // col2im.cc
std::vector<engine::KernelDef> CenterCropPadKernelDefs();  // center_crop_pad.cc
std::vector<engine::KernelDef> AffineGridKernelDefs();     // affine_grid.cc

// :kv_cache_kernels (the KV-cache rewrite's fused ops, engine/kv_cache_rewrite.h)
std::vector<engine::KernelDef> KvCacheKernelDefs();  // kv_cache.cc

// :tail_kernels (the operator tail: losses, detection, signal, math and bitwise ops)
std::vector<engine::KernelDef> UnaryTailKernelDefs();     // unary_tail.cc
std::vector<engine::KernelDef> BitwiseKernelDefs();       // bitwise.cc
std::vector<engine::KernelDef> LossKernelDefs();          // loss.cc
std::vector<engine::KernelDef> NmsKernelDefs();           // nms.cc
std::vector<engine::KernelDef> EyeCompressKernelDefs();   // eye_compress.cc
std::vector<engine::KernelDef> SignalWindowKernelDefs();  // signal_window.cc
std::vector<engine::KernelDef> DetKernelDefs();           // det.cc
std::vector<engine::KernelDef> UniqueKernelDefs();        // unique.cc
std::vector<engine::KernelDef> TfIdfKernelDefs();         // tfidf.cc: TfIdfVectorizer

// :ops2_kernels (the node tests' last operators: sampling, pooling inverses, signal)
std::vector<engine::KernelDef> GridSampleKernelDefs();       // grid_sample.cc
std::vector<engine::KernelDef> RoiAlignKernelDefs();         // roi_align.cc
std::vector<engine::KernelDef> MaxUnpoolKernelDefs();        // max_unpool.cc
std::vector<engine::KernelDef> LrnMvnKernelDefs();           // lrn_mvn.cc: LRN, MVN
std::vector<engine::KernelDef> ReverseSequenceKernelDefs();  // reverse_sequence.cc
std::vector<engine::KernelDef> DftKernelDefs();              // dft.cc: DFT, STFT
std::vector<engine::KernelDef> MelWeightMatrixKernelDefs();  // mel_weight_matrix.cc

// :training_ml_kernels (training-mode optimizers, random ops, numeric ai.onnx.ml ops)
std::vector<engine::KernelDef> TrainingKernelDefs();  // training_ops.cc: Adagrad, Adam, Momentum
std::vector<engine::KernelDef> RandomKernelDefs();    // random_ops.cc
std::vector<engine::KernelDef> MlKernelDefs();        // ml_ops.cc

// :sequence_kernels (tensor sequences and optionals; docs/sequences.md)
std::vector<engine::KernelDef> SequenceKernelDefs();  // sequence.cc

// :string_kernels (string operators; docs/strings.md)
std::vector<engine::KernelDef> StringKernelDefs();        // string_ops.cc
std::vector<engine::KernelDef> LabelEncoderKernelDefs();  // label_encoder.cc (ai.onnx.ml)
// :cpu_kernels itself: the data-movement kernels above, on strings through element indices
std::vector<engine::KernelDef> StringMovementKernelDefs();  // string_movement.cc

// :contrib_kernels (ONNX Runtime's transformer contrib ops, com.microsoft; docs/contrib-ops.md)
std::vector<engine::KernelDef> ContribActivationKernelDefs();  // contrib_activation.cc
std::vector<engine::KernelDef> ContribNormKernelDefs();        // contrib_norm.cc
std::vector<engine::KernelDef> ContribAttentionKernelDefs();   // contrib_attention.cc

// :genai_kernels (onnxruntime-genai model builder's ops, docs/genai-ops.md)
std::vector<engine::KernelDef> MatMulNBitsKernelDefs();           // matmul_nbits.cc
std::vector<engine::KernelDef> RotaryEmbeddingKernelDefs();       // rotary_embedding.cc
std::vector<engine::KernelDef> GroupQueryAttentionKernelDefs();   // group_query_attention.cc
std::vector<engine::KernelDef> GatherBlockQuantizedKernelDefs();  // gather_block_quantized.cc

// :quant_kernels
std::vector<engine::KernelDef> QuantizeKernelDefs();            // quantize.cc
std::vector<engine::KernelDef> IntegerMatMulKernelDefs();       // integer_matmul.cc
std::vector<engine::KernelDef> IntegerConvKernelDefs();         // integer_conv.cc
std::vector<engine::KernelDef> QGemmKernelDefs();               // qgemm.cc (in :onednn_kernels)
std::vector<engine::KernelDef> QLinearSoftmaxPoolKernelDefs();  // qlinear_softmax_pool.cc (same)
std::vector<engine::KernelDef> QLinearContribKernelDefs();      // qlinear_ops.cc

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_REGISTRATION_H_
