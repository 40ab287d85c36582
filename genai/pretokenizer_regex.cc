#include "genai/pretokenizer_regex.h"

#include <unicode/uchar.h>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace inferd::genai {
namespace {

// Deep enough for every published pattern; a hostile one fails to match rather than overflow.
constexpr int kMaxDepth = 2000;

}  // namespace

class PretokenizerRegex::Parser {
 public:
  Parser(absl::string_view pattern, std::vector<Node>* nodes)
      : text_(DecodeUtf8(pattern)), nodes_(*nodes) {}

  absl::StatusOr<int> Parse() {
    INFERD_ASSIGN_OR_RETURN(int root, ParseAlt());
    if (pos_ != text_.size()) return Error("unbalanced ')'");
    return root;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("regex '", EncodeUtf8(text_), "': ", what, " at character ", pos_));
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char32_t Peek() const { return text_[pos_]; }
  bool Eat(char32_t c) {
    if (!AtEnd() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  int Add(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

  absl::StatusOr<int> ParseAlt() {
    Node alt;
    alt.kind = Node::kAlt;
    INFERD_ASSIGN_OR_RETURN(int first, ParseConcat());
    alt.children.push_back(first);
    while (Eat('|')) {
      INFERD_ASSIGN_OR_RETURN(int next, ParseConcat());
      alt.children.push_back(next);
    }
    if (alt.children.size() == 1) return first;
    return Add(std::move(alt));
  }

  absl::StatusOr<int> ParseConcat() {
    Node seq;
    seq.kind = Node::kConcat;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      INFERD_ASSIGN_OR_RETURN(int atom, ParseRepeat());
      if (atom >= 0) seq.children.push_back(atom);
    }
    return Add(std::move(seq));
  }

  absl::StatusOr<int> ParseNumber() {
    if (AtEnd() || Peek() < '0' || Peek() > '9') return Error("expected a number");
    int n = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
      n = n * 10 + static_cast<int>(Peek() - '0');
      if (n > 100000) return Error("repetition count too large");
      ++pos_;
    }
    return n;
  }

  absl::StatusOr<int> ParseRepeat() {
    INFERD_ASSIGN_OR_RETURN(int atom, ParseAtom());
    if (atom < 0) return atom;
    while (!AtEnd()) {
      int min = 0, max = -1;
      const char32_t c = Peek();
      if (c == '?') {
        max = 1;
      } else if (c == '*') {
      } else if (c == '+') {
        min = 1;
      } else if (c == '{') {
        const size_t save = pos_;
        ++pos_;
        if (AtEnd() || Peek() < '0' || Peek() > '9') {  // a literal '{'
          pos_ = save;
          break;
        }
        INFERD_ASSIGN_OR_RETURN(min, ParseNumber());
        max = min;
        if (Eat(',')) {
          max = -1;
          if (!AtEnd() && Peek() != '}') {
            INFERD_ASSIGN_OR_RETURN(max, ParseNumber());
          }
        }
        if (AtEnd() || Peek() != '}') return Error("expected '}'");
        if (max >= 0 && max < min) return Error("repetition {m,n} with n < m");
      } else {
        break;
      }
      ++pos_;
      Node rep;
      rep.kind = Node::kRepeat;
      rep.min = min;
      rep.max = max;
      rep.children = {atom};
      if (Eat('?')) {
        rep.greedy = false;
      } else {
        Eat('+');  // possessive: matched greedily (no published pattern relies on the difference)
      }
      atom = Add(std::move(rep));
    }
    return atom;
  }

  // Parses the escape after a backslash into a class item or a literal code point.
  absl::StatusOr<ClassItem> ParseEscape() {
    if (AtEnd()) return Error("trailing backslash");
    const char32_t c = text_[pos_++];
    ClassItem item;
    switch (c) {
      case 'p':
      case 'P': {
        item.kind = ClassItem::kProperty;
        item.negated = c == 'P';
        std::string name;
        if (Eat('{')) {
          while (!AtEnd() && Peek() != '}') AppendUtf8(text_[pos_++], &name);
          if (!Eat('}')) return Error("unterminated \\p{");
        } else if (!AtEnd()) {
          AppendUtf8(text_[pos_++], &name);
        }
        if (!name.empty() && name[0] == '^') {
          item.negated = !item.negated;
          name.erase(0, 1);
        }
        absl::StatusOr<UnicodeProperty> property = FindUnicodeProperty(name);
        if (!property.ok()) return Error(property.status().message());
        item.property = *property;
        return item;
      }
      case 's':
      case 'S':
        item.kind = ClassItem::kSpace;
        item.negated = c == 'S';
        return item;
      case 'd':
      case 'D':
        item.kind = ClassItem::kDigit;
        item.negated = c == 'D';
        return item;
      case 'w':
      case 'W':
        item.kind = ClassItem::kWord;
        item.negated = c == 'W';
        return item;
      default:
        break;
    }
    char32_t lit = c;
    if (c == 'r') lit = '\r';
    if (c == 'n') lit = '\n';
    if (c == 't') lit = '\t';
    if (c == 'f') lit = '\f';
    if (c == 'v') lit = '\v';
    if (c == '0') lit = 0;
    if (c == 'x' || c == 'u') {
      const bool braced = c == 'x' && Eat('{');
      const int digits = braced ? 8 : (c == 'x' ? 2 : 4);
      char32_t v = 0;
      int n = 0;
      while (!AtEnd() && n < digits && isxdigit(static_cast<int>(Peek() < 128 ? Peek() : 0))) {
        const char32_t h = text_[pos_++];
        v = v * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
        ++n;
      }
      if (n == 0 || (braced && !Eat('}')) || v > 0x10FFFF) return Error("bad hex escape");
      lit = v;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '1' && c <= '9')) {
      if (c != 'r' && c != 'n' && c != 't' && c != 'f' && c != 'v') {
        return Error(absl::StrCat("unsupported escape \\", EncodeUtf8(std::u32string(1, c))));
      }
    }
    item.kind = ClassItem::kRange;
    item.lo = item.hi = lit;
    return item;
  }

  absl::StatusOr<int> ParseClass() {
    Node n;
    n.kind = Node::kClass;
    n.icase = icase_;
    n.negated = Eat('^');
    bool first = true;
    while (true) {
      if (AtEnd()) return Error("unterminated character class");
      if (Peek() == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      ClassItem item;
      if (Eat('\\')) {
        INFERD_ASSIGN_OR_RETURN(item, ParseEscape());
      } else if (Peek() == '[' && pos_ + 1 < text_.size() && text_[pos_ + 1] == ':') {
        return Error("POSIX classes [:name:] are not supported");
      } else {
        item.lo = item.hi = text_[pos_++];
      }
      if (item.kind == ClassItem::kRange && pos_ + 1 < text_.size() && Peek() == '-' &&
          text_[pos_ + 1] != ']') {
        ++pos_;
        ClassItem hi;
        if (Eat('\\')) {
          INFERD_ASSIGN_OR_RETURN(hi, ParseEscape());
          if (hi.kind != ClassItem::kRange) return Error("bad range in character class");
        } else {
          hi.lo = hi.hi = text_[pos_++];
        }
        if (hi.lo < item.lo) return Error("reversed range in character class");
        item.hi = hi.lo;
      }
      n.items.push_back(std::move(item));
    }
    return Add(std::move(n));
  }

  absl::StatusOr<int> ParseGroup() {
    const bool saved_icase = icase_;
    Node look;
    bool lookahead = false;
    if (Eat('?')) {
      if (Eat(':')) {
      } else if (Eat('=') || (Peek() == '!' && Eat('!'))) {
        lookahead = true;
        look.kind = Node::kLookahead;
        look.negated = text_[pos_ - 1] == '!';
      } else if (Peek() == 'i' || Peek() == '-') {
        bool on = true;
        while (!AtEnd() && (Peek() == 'i' || Peek() == '-')) {
          if (Peek() == '-') on = false;
          if (Peek() == 'i') icase_ = on;
          ++pos_;
        }
        if (Eat(')')) return -1;  // (?i) for the rest of the enclosing group
        if (!Eat(':')) return Error("unsupported group flags");
      } else if (Eat('<') || Eat('P')) {
        if (Peek() == '=' || Peek() == '!') return Error("lookbehind is not supported");
        if (text_[pos_ - 1] == 'P') Eat('<');
        while (!AtEnd() && Peek() != '>') ++pos_;  // a named group: the name is not needed
        if (!Eat('>')) return Error("unterminated group name");
      } else {
        return Error("unsupported group");
      }
    }
    INFERD_ASSIGN_OR_RETURN(int inner, ParseAlt());
    if (!Eat(')')) return Error("missing ')'");
    icase_ = saved_icase;
    if (!lookahead) return inner;
    look.children = {inner};
    return Add(std::move(look));
  }

  absl::StatusOr<int> ParseAtom() {
    const char32_t c = text_[pos_++];
    Node n;
    switch (c) {
      case '(': {
        const bool before = icase_;
        INFERD_ASSIGN_OR_RETURN(int g, ParseGroup());
        if (g == -1) {  // inline flags: keep them for what follows
          return -1;
        }
        (void)before;
        return g;
      }
      case '[':
        return ParseClass();
      case '.':
        n.kind = Node::kAny;
        return Add(std::move(n));
      case '^':
        n.kind = Node::kStart;
        return Add(std::move(n));
      case '$':
        n.kind = Node::kEnd;
        return Add(std::move(n));
      case '*':
      case '+':
      case '?':
        return Error("quantifier without an operand");
      case '\\': {
        INFERD_ASSIGN_OR_RETURN(ClassItem item, ParseEscape());
        if (item.kind == ClassItem::kRange) {
          n.kind = Node::kChar;
          n.ch = item.lo;
          n.icase = icase_;
        } else {
          n.kind = Node::kClass;
          n.items.push_back(std::move(item));
        }
        return Add(std::move(n));
      }
      default:
        n.kind = Node::kChar;
        n.ch = c;
        n.icase = icase_;
        return Add(std::move(n));
    }
  }

  std::u32string text_;
  std::vector<Node>& nodes_;
  size_t pos_ = 0;
  bool icase_ = false;
};

absl::StatusOr<PretokenizerRegex> PretokenizerRegex::Compile(absl::string_view pattern) {
  PretokenizerRegex re;
  re.pattern_ = std::string(pattern);
  Parser parser(pattern, &re.nodes_);
  INFERD_ASSIGN_OR_RETURN(re.root_, parser.Parse());
  return re;
}

bool PretokenizerRegex::MatchesChar(const Node& n, char32_t c) const {
  if (n.kind == Node::kAny) return c != '\n';
  if (n.kind == Node::kChar) return c == n.ch || (n.icase && FoldCase(c) == FoldCase(n.ch));
  bool hit = false;
  for (const ClassItem& item : n.items) {
    bool m = false;
    switch (item.kind) {
      case ClassItem::kRange:
        m = (c >= item.lo && c <= item.hi);
        if (!m && n.icase) {
          const char32_t f = FoldCase(c);
          const auto u = static_cast<char32_t>(u_toupper(static_cast<UChar32>(c)));
          m = (f >= item.lo && f <= item.hi) || (u >= item.lo && u <= item.hi);
        }
        break;
      case ClassItem::kProperty:
        m = item.property.Contains(c) != item.negated;
        break;
      case ClassItem::kSpace:
        m = IsWhiteSpace(c) != item.negated;
        break;
      case ClassItem::kDigit:
        m = IsDigit(c) != item.negated;
        break;
      case ClassItem::kWord:
        m = IsWordChar(c) != item.negated;
        break;
    }
    if (m) {
      hit = true;
      break;
    }
  }
  return hit != n.negated;
}

bool PretokenizerRegex::MatchSeq(const Node& n, size_t index, std::u32string_view text, size_t pos,
                                 int depth, Cont k) const {
  if (index == n.children.size()) return k(pos);
  return Match(n.children[index], text, pos, depth + 1,
               [&](size_t p) { return MatchSeq(n, index + 1, text, p, depth + 1, k); });
}

bool PretokenizerRegex::MatchRepeat(const Node& n, int count, std::u32string_view text, size_t pos,
                                    int depth, Cont k) const {
  if (depth > kMaxDepth) return false;
  auto more = [&]() {
    return (n.max < 0 || count < n.max) &&
           Match(n.children[0], text, pos, depth + 1, [&](size_t p) {
             return p != pos && MatchRepeat(n, count + 1, text, p, depth + 1, k);
           });
  };
  if (n.greedy) return more() || (count >= n.min && k(pos));
  return (count >= n.min && k(pos)) || more();
}

bool PretokenizerRegex::Match(int index, std::u32string_view text, size_t pos, int depth,
                              Cont k) const {
  if (depth > kMaxDepth) return false;
  const Node& n = nodes_[index];
  switch (n.kind) {
    case Node::kChar:
    case Node::kClass:
    case Node::kAny:
      return pos < text.size() && MatchesChar(n, text[pos]) && k(pos + 1);
    case Node::kStart:
      return pos == 0 && k(pos);
    case Node::kEnd:
      return pos == text.size() && k(pos);
    case Node::kConcat:
      return MatchSeq(n, 0, text, pos, depth, k);
    case Node::kAlt:
      for (int child : n.children) {
        if (Match(child, text, pos, depth + 1, k)) return true;
      }
      return false;
    case Node::kLookahead: {
      const bool m = Match(n.children[0], text, pos, depth + 1, [](size_t) { return true; });
      return m != n.negated && k(pos);
    }
    case Node::kRepeat: {
      const Node& child = nodes_[n.children[0]];
      if (child.kind != Node::kChar && child.kind != Node::kClass && child.kind != Node::kAny) {
        return MatchRepeat(n, 0, text, pos, depth, k);
      }
      // One character per repetition: measure the run, then try its lengths in order.
      size_t run = 0;
      const size_t limit = n.max < 0 ? text.size() - pos : static_cast<size_t>(n.max);
      while (run < limit && pos + run < text.size() && MatchesChar(child, text[pos + run])) ++run;
      const auto min = static_cast<size_t>(n.min);
      if (run < min) return false;
      if (n.greedy) {
        for (size_t i = run + 1; i-- > min;) {
          if (k(pos + i)) return true;
        }
      } else {
        for (size_t i = min; i <= run; ++i) {
          if (k(pos + i)) return true;
        }
      }
      return false;
    }
  }
  return false;
}

bool PretokenizerRegex::Find(std::u32string_view text, size_t start, size_t* begin,
                             size_t* end) const {
  for (size_t b = start; b <= text.size(); ++b) {
    size_t e = 0;
    if (Match(root_, text, b, 0, [&](size_t p) {
          e = p;
          return true;
        })) {
      *begin = b;
      *end = e;
      return true;
    }
  }
  return false;
}

bool PretokenizerRegex::FullMatch(std::u32string_view text) const {
  return Match(root_, text, 0, 0, [&](size_t p) { return p == text.size(); });
}

}  // namespace inferd::genai
