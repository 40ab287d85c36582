#include "genai/spm_processor.h"

#include <sentencepiece_processor.h>

namespace inferd::genai {

SpmProcessor::~SpmProcessor() = default;

std::unique_ptr<SpmProcessor> SpmProcessor::Load(const std::string& path, std::string* error) {
  std::unique_ptr<SpmProcessor> p(new SpmProcessor());
  p->sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const sentencepiece::util::Status s = p->sp_->Load(path);
  if (!s.ok()) {
    *error = s.ToString();
    return nullptr;
  }
  return p;
}

bool SpmProcessor::Encode(const std::string& text, std::vector<int>* ids,
                          std::string* error) const {
  const sentencepiece::util::Status s = sp_->Encode(text, ids);
  if (!s.ok()) *error = s.ToString();
  return s.ok();
}

std::string SpmProcessor::Decode(const std::vector<int>& ids) const {
  std::string text;
  if (!sp_->Decode(ids, &text).ok()) return std::string();
  return text;
}

int SpmProcessor::size() const { return sp_->GetPieceSize(); }
int SpmProcessor::PieceToId(const std::string& piece) const { return sp_->PieceToId(piece); }
std::string SpmProcessor::IdToPiece(int id) const { return sp_->IdToPiece(id); }
bool SpmProcessor::IsControl(int id) const { return sp_->IsControl(id); }
bool SpmProcessor::IsUnknown(int id) const { return sp_->IsUnknown(id); }
int SpmProcessor::bos_id() const { return sp_->bos_id(); }
int SpmProcessor::unk_id() const { return sp_->unk_id(); }

}  // namespace inferd::genai
