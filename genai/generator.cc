#include "genai/generator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "engine/kv_cache_rewrite.h"

namespace inferd::genai {
namespace {

double MillisSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool IsCacheInput(absl::string_view name) {
  return absl::StartsWith(name, "past_key_values.") || absl::StartsWith(name, "past.");
}

}  // namespace

uint64_t SystemAllocations(const engine::Session& session) {
  uint64_t n = 0;
  for (const engine::DeviceArenas& d : session.devices()) {
    n += d.execution->Stats().system_allocations + d.io->Stats().system_allocations;
  }
  return n;
}

absl::StatusOr<std::unique_ptr<GenerativeModel>> GenerativeModel::Load(
    const std::string& dir, const GeneratorOptions& options,
    const engine::KernelRegistry& registry) {
  std::unique_ptr<GenerativeModel> m(new GenerativeModel());
  INFERD_ASSIGN_OR_RETURN(m->config_, LoadModelConfig(dir));
  INFERD_ASSIGN_OR_RETURN(m->tokenizer_, LoadTokenizer(dir));
  engine::SessionOptions so = options.session;
  auto rewrite = std::make_shared<absl::StatusOr<engine::KvCacheRewrite>>(
      absl::FailedPreconditionError("the in-place KV cache is off"));
  if (options.kv_in_place) {
    so.graph_rewrite = [rewrite](engine::Graph& g) {
      *rewrite = engine::RewriteKvCacheInPlace(g);
      return absl::OkStatus();  // when it refuses, the export runs as it is (copying)
    };
  }
  INFERD_ASSIGN_OR_RETURN(m->session_,
                          engine::Session::Load(dir + "/" + m->config_.model_file, so, registry));
  m->in_place_ = rewrite->ok();
  if (m->in_place_) {
    m->kv_form_ = (*rewrite)->form;
    m->past_length_input_ = (*rewrite)->past_length_input;
  }
  INFERD_RETURN_IF_ERROR(m->FindCaches(m->in_place_ ? &**rewrite : nullptr));
  // Maximum length: asked for, else the model's, capped.
  int model_max = m->config_.max_length.value_or(m->config_.max_position_embeddings);
  if (m->config_.max_position_embeddings > 0) {
    model_max = std::min(model_max > 0 ? model_max : m->config_.max_position_embeddings,
                         m->config_.max_position_embeddings);
  }
  if (options.max_length > 0) {
    if (m->config_.max_position_embeddings > 0 &&
        options.max_length > m->config_.max_position_embeddings) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_length ", options.max_length, " exceeds the model's ",
                       m->config_.max_position_embeddings, " positions"));
    }
    m->max_length_ = options.max_length;
  } else {
    m->max_length_ = std::min(model_max > 0 ? model_max : kDefaultMaxLength, kDefaultMaxLength);
  }
  for (const engine::Value* v : m->session_->outputs()) {
    if (v->name == m->config_.names.logits && v->shape.rank_known && !v->shape.dims.empty() &&
        v->shape.dims.back().known()) {
      m->vocab_size_ = static_cast<int32_t>(v->shape.dims.back().value);
    }
  }
  if (m->vocab_size_ == 0) m->vocab_size_ = m->tokenizer_->vocab_size();
  return m;
}

absl::Status GenerativeModel::FindCaches(const engine::KvCacheRewrite* rewrite) {
  const engine::Graph& g = session_->graph();
  const DecoderNames& names = config_.names;
  bool ids = false;
  for (const engine::Value* v : session_->inputs()) {
    ids = ids || v->name == names.input_ids;
    has_mask_ = has_mask_ || v->name == names.attention_mask;
    has_positions_ = has_positions_ || v->name == names.position_ids;
  }
  if (!ids) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model has no input '", names.input_ids, "' (the token ids)"));
  }
  if (g.FindValue(names.logits) < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model has no output '", names.logits, "' (the logits)"));
  }
  auto add = [&](const std::string& input, const std::string& present,
                 const std::string& device) -> absl::Status {
    const int v = g.FindValue(input);
    const engine::ShapeInfo& s = g.values[v].shape;
    // Known dims, else genai_config.json's (the builder leaves head_size symbolic).
    auto dim = [&](size_t d, int configured) -> int64_t {
      return s.dims[d].known() ? s.dims[d].value : configured;
    };
    if (!s.rank_known || s.dims.size() != 4 || dim(1, config_.kv_heads) <= 0 ||
        dim(3, config_.head_size) <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cache input '", input,
                       "' is not [batch, kv_heads, past, head_dim] with known heads "
                       "and head_dim (in the graph or genai_config.json): ",
                       s.ToString()));
    }
    CacheInput c{input, present, 0, dim(1, config_.kv_heads), dim(3, config_.head_size)};
    for (size_t d = 0; d < session_->devices().size(); ++d) {
      if (session_->devices()[d].device == device) c.device = d;
    }
    caches_.push_back(std::move(c));
    return absl::OkStatus();
  };
  if (rewrite != nullptr) {
    for (const engine::KvCacheRewrite::Block& b : rewrite->blocks) {
      std::string device;
      for (const engine::Node& n : g.nodes) {
        if (n.name == b.append_node) device = n.device;
      }
      INFERD_RETURN_IF_ERROR(add(b.input, b.present, device));
    }
    return absl::OkStatus();
  }
  if (names.caches_configured) {
    // genai_config.json's templates, layer by layer until the first missing key input.
    for (int layer = 0;; ++layer) {
      const std::string key = LayerName(names.past_key, layer);
      if (g.FindValue(key) < 0) break;
      for (const auto& [past, present] :
           {std::pair(key, LayerName(names.present_key, layer)),
            std::pair(LayerName(names.past_value, layer), LayerName(names.present_value, layer))}) {
        if (g.FindValue(past) < 0 || g.FindValue(present) < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "layer ", layer, " of the cache has no input '", past, "' or no output '", present,
              "' (the names genai_config.json's decoder inputs / outputs give)"));
        }
        INFERD_RETURN_IF_ERROR(add(past, present, ""));
      }
    }
    if (caches_.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model has no input '", LayerName(names.past_key, 0),
                       "' (genai_config.json's past_key_names for layer 0)"));
    }
    return absl::OkStatus();
  }
  for (const engine::Value* v : session_->inputs()) {
    if (!IsCacheInput(v->name)) continue;
    std::string present = absl::StartsWith(v->name, "past_key_values.")
                              ? absl::StrCat("present.", v->name.substr(16))
                              : absl::StrCat("present.", v->name.substr(5));
    if (g.FindValue(present) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cache input '", v->name, "' has no output '", present, "'"));
    }
    INFERD_RETURN_IF_ERROR(add(v->name, present, ""));
  }
  if (caches_.empty()) return absl::InvalidArgumentError("the model has no past_key_values inputs");
  return absl::OkStatus();
}

uint64_t GenerativeModel::kv_bytes_for(int positions) const {
  uint64_t bytes = 0;
  for (const CacheInput& c : caches_) {
    bytes += static_cast<uint64_t>(c.kv_heads) * static_cast<uint64_t>(std::max(positions, 0)) *
             c.head_dim * sizeof(float);
  }
  return bytes;
}

absl::StatusOr<std::unique_ptr<Sequence>> Sequence::Start(const GenerativeModel& model,
                                                          int capacity) {
  std::unique_ptr<Sequence> s(new Sequence(model));
  s->capacity_ = capacity <= 0 || capacity > model.max_length() ? model.max_length() : capacity;
  const size_t cap = static_cast<size_t>(s->capacity_);
  s->tokens_.reserve(cap);
  s->ids_.reserve(cap);
  s->mask_.reserve(cap);
  s->positions_.reserve(cap);
  s->logits_.resize(static_cast<size_t>(model.vocab_size()));
  const DecoderNames& names = model.config().names;
  s->inputs_.push_back(
      {names.input_ids, engine::DataType::kInt64, engine::Shape{1, 0}, nullptr, 0});
  if (model.has_mask_) {
    s->inputs_.push_back(
        {names.attention_mask, engine::DataType::kInt64, engine::Shape{1, 0}, nullptr, 0});
  }
  if (model.has_positions_) {
    s->inputs_.push_back(
        {names.position_ids, engine::DataType::kInt64, engine::Shape{1, 0}, nullptr, 0});
  }
  s->outputs_.push_back(names.logits);
  for (const GenerativeModel::CacheInput& c : model.caches()) {
    engine::InputTensor in{c.input, engine::DataType::kFloat32,
                           engine::Shape{1, c.kv_heads, 0, c.head_dim}, nullptr, 0};
    if (model.kv_in_place()) {
      const size_t bytes = static_cast<size_t>(c.kv_heads) * cap * c.head_dim * sizeof(float);
      absl::StatusOr<memory::AllocationHandle> h =
          model.session().devices()[c.device].execution->Allocate(bytes);
      if (!h.ok()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "KV block of '", c.input, "' (", bytes, " bytes for ", cap, " positions) on ",
            model.session().devices()[c.device].device, ": ", h.status().message()));
      }
      in.shape = engine::Shape{1, c.kv_heads, static_cast<int64_t>(cap), c.head_dim};
      in.data = h->data();
      in.bytes = bytes;
      s->blocks_.push_back(std::move(*h));
    } else {
      s->outputs_.push_back(c.present);
    }
    s->inputs_.push_back(std::move(in));
  }
  if (model.past_length_input_) {
    s->inputs_.push_back({engine::kKvPastLengthInput, engine::DataType::kInt64, engine::Shape{},
                          &s->past_length_, sizeof(int64_t)});
  }
  return s;
}

uint64_t Sequence::kv_bytes() const {
  uint64_t bytes = 0;
  for (const auto& b : blocks_) bytes += b.size();
  for (const auto& p : presents_) bytes += p.buffer.size();
  return bytes;
}

absl::Status Sequence::Feed(absl::Span<const int32_t> ids, const engine::RunOptions& run) {
  const int n = static_cast<int>(ids.size());
  if (n == 0) return absl::InvalidArgumentError("no tokens to feed");
  if (n > capacity() - length_) {
    return absl::InvalidArgumentError(
        absl::StrCat(n, " more tokens do not fit: the sequence holds ", length_,
                     " of its maximum length of ", capacity(), " tokens"));
  }
  const int64_t past = length_, total = length_ + n;
  ids_.assign(ids.begin(), ids.end());
  mask_.assign(static_cast<size_t>(total), 1);
  positions_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) positions_[i] = past + i;
  past_length_ = past;
  size_t k = 0;
  auto set = [&](engine::InputTensor& in, const std::vector<int64_t>& v) {
    in.shape = engine::Shape{1, static_cast<int64_t>(v.size())};
    in.data = v.data();
    in.bytes = v.size() * sizeof(int64_t);
  };
  set(inputs_[k++], ids_);
  if (model_.has_mask_) set(inputs_[k++], mask_);
  if (model_.has_positions_) set(inputs_[k++], positions_);
  if (!model_.kv_in_place()) {
    for (size_t c = 0; c < model_.caches().size(); ++c, ++k) {
      const GenerativeModel::CacheInput& cache = model_.caches()[c];
      engine::InputTensor& in = inputs_[k];
      in.shape = engine::Shape{1, cache.kv_heads, past, cache.head_dim};
      in.data = presents_.empty() ? nullptr : presents_[c].buffer.data();
      in.bytes = presents_.empty() ? 0 : presents_[c].buffer.size();
      if (!presents_.empty())
        in.bytes = static_cast<size_t>(in.shape.NumElements()) * sizeof(float);
      kv_bytes_copied_ += in.bytes;  // the Concat copies the whole past into the present
    }
  }
  absl::StatusOr<std::vector<engine::OutputTensor>> out =
      model_.session().Run(inputs_, outputs_, run);
  if (!out.ok()) return out.status();
  const engine::OutputTensor& logits = (*out)[0];
  const int64_t vocab = logits.shape.rank() > 0 ? logits.shape[logits.shape.rank() - 1] : 0;
  if (logits.type != engine::DataType::kFloat32 || logits.shape.rank() != 3 ||
      logits.shape[1] != n || vocab != static_cast<int64_t>(logits_.size())) {
    return absl::InternalError(absl::StrCat("logits ", logits.shape.ToString(), " are not [1, ", n,
                                            ", ", logits_.size(), "] float"));
  }
  std::memcpy(logits_.data(), static_cast<const float*>(logits.buffer.data()) + (n - 1) * vocab,
              static_cast<size_t>(vocab) * sizeof(float));
  if (!model_.kv_in_place()) {
    presents_.clear();
    for (size_t i = 1; i < out->size(); ++i) presents_.push_back(std::move((*out)[i]));
  }
  length_ += n;
  tokens_.insert(tokens_.end(), ids.begin(), ids.end());
  return absl::OkStatus();
}

absl::StatusOr<GenerateResult> Generate(
    Sequence& seq, absl::Span<const int32_t> prompt, const GenerateParams& params,
    const std::function<bool(int32_t, absl::string_view)>& on_token) {
  INFERD_RETURN_IF_ERROR(ValidateSamplingParams(params.sampling));
  if (prompt.empty()) return absl::InvalidArgumentError("the prompt has no tokens");
  if (params.max_new_tokens < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_new_tokens must be >= 1, got ", params.max_new_tokens));
  }
  if (static_cast<int64_t>(prompt.size()) >= seq.capacity() - seq.length()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the prompt has ", prompt.size(), " tokens; with the ", seq.length(),
        " the sequence holds it leaves no room to generate within the maximum length of ",
        seq.capacity(), " tokens (--max-length)"));
  }
  const GenerativeModel& model = seq.model();
  const std::vector<int32_t>& eos = model.config().eos_token_ids;
  GenerateResult r;
  r.prompt_tokens = static_cast<int>(prompt.size());
  Sampler sampler(params.sampling, model.vocab_size());
  StreamingDecoder stream(model.tokenizer(), /*skip_special_tokens=*/true);
  engine::RunOptions run;
  run.cancelled = params.cancelled;
  const uint64_t copied_before = seq.kv_bytes_copied();
  auto t0 = std::chrono::steady_clock::now();
  absl::Status fed = seq.Feed(prompt, run);
  if (absl::IsCancelled(fed)) {
    r.stop_reason = "cancelled";
    return r;
  }
  INFERD_RETURN_IF_ERROR(fed);
  r.prefill_ms = MillisSince(t0);
  std::string streamed;
  uint64_t allocations_at = 0;
  int decode_steps = 0;
  auto decode_start = std::chrono::steady_clock::now();
  while (true) {
    if (static_cast<int>(r.token_ids.size()) < params.min_new_tokens) {
      absl::Span<float> logits = seq.last_logits();
      for (int32_t id : eos) {
        if (id >= 0 && static_cast<size_t>(id) < logits.size()) {
          logits[id] = -std::numeric_limits<float>::infinity();
        }
      }
    }
    const int32_t next = sampler.Sample(seq.last_logits(), seq.tokens());
    r.unfed_token = next;
    if (std::find(eos.begin(), eos.end(), next) != eos.end()) {
      r.stop_reason = "eos";
      break;
    }
    r.token_ids.push_back(next);
    const std::string piece = stream.Add(next);
    streamed += piece;
    if (on_token && !on_token(next, piece)) {
      r.stop_reason = "cancelled";
      break;
    }
    bool stop = false;
    for (const std::string& s : params.stop_strings) stop = stop || absl::StrContains(streamed, s);
    if (stop) {
      r.stop_reason = "stop_string";
      break;
    }
    if (static_cast<int>(r.token_ids.size()) >= params.max_new_tokens) {
      r.stop_reason = "max_new_tokens";
      break;
    }
    if (seq.length() >= seq.capacity()) {
      r.stop_reason = "max_length";
      break;
    }
    if (params.cancelled && params.cancelled()) {
      r.stop_reason = "cancelled";
      break;
    }
    if (decode_steps == 1) allocations_at = SystemAllocations(model.session());
    const int32_t one[1] = {next};
    fed = seq.Feed(one, run);
    if (absl::IsCancelled(fed)) {
      r.stop_reason = "cancelled";
      break;
    }
    INFERD_RETURN_IF_ERROR(fed);
    r.unfed_token.reset();
    ++decode_steps;
  }
  r.decode_ms = MillisSince(decode_start);
  if (decode_steps > 1) {
    r.system_allocations_after_first_token = SystemAllocations(model.session()) - allocations_at;
  }
  r.decode_tokens_per_second =
      decode_steps > 0 && r.decode_ms > 0 ? decode_steps / (r.decode_ms / 1000.0) : 0.0;
  r.text = model.tokenizer().Decode(r.token_ids, /*skip_special_tokens=*/true);
  for (const std::string& s : params.stop_strings) {
    const size_t at = r.text.find(s);
    if (!s.empty() && at != std::string::npos) r.text.resize(at);
  }
  const uint64_t generated = std::max<uint64_t>(1, r.token_ids.size());
  r.kv_bytes_copied_per_token = (seq.kv_bytes_copied() - copied_before) / generated;
  return r;
}

}  // namespace inferd::genai
