#include "hub/ingest/fields.hpp"

namespace hub::ingest::fields {
namespace {

constexpr std::string_view kTimestampMessage =
    "must be a timestamp: YYYY-MM-DD HH:MM:SS or ISO 8601 with T, optional fraction and offset";

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// E.164 allows at most 15 digits; 6 is the shortest national number seen in practice.
constexpr std::size_t kMinPhoneDigits = 6;
constexpr std::size_t kMaxPhoneDigits = 15;

}  // namespace

bool is_color(std::string_view s) {
    if ((s.size() != 1 + 3 && s.size() != 1 + 6) || s[0] != '#') {
        return false;
    }
    for (std::size_t i = 1; i < s.size(); ++i) {
        if (!is_hex(s[i])) {
            return false;
        }
    }
    return true;
}

bool is_phone(std::string_view s) {
    if (s.size() < 1 + kMinPhoneDigits || s.size() > 1 + kMaxPhoneDigits || s[0] != '+') {
        return false;
    }
    for (std::size_t i = 1; i < s.size(); ++i) {
        if (!is_digit(s[i])) {
            return false;
        }
    }
    return true;
}

std::optional<std::string_view> check_text(const boost::json::value& v, const Scope& scope, std::string_view key,
                                           TextRule rule, std::string_view type_message) {
    const boost::json::string* s = v.if_string();
    if (s == nullptr) {
        scope.add(key, std::string(type_message));
        return std::nullopt;
    }
    const std::string_view text(s->data(), s->size());
    if (text_fits(text, rule)) return text;
    if (text.size() < rule.min_bytes) {
        scope.add(key, "must not be empty");
        return std::nullopt;
    }
    if (text.size() > rule.max_bytes) {
        scope.add(key, "must be at most " + std::to_string(rule.max_bytes) + " bytes");
        return std::nullopt;
    }
    if (text.find('\0') != std::string_view::npos) {
        scope.add(key, "must not contain NUL characters");
        return std::nullopt;
    }
    return text;
}

std::optional<std::string_view> required_text(const Members& o, const Scope& scope, std::string_view key,
                                              TextRule rule) {
    const boost::json::value* v = o.find(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    return check_text(*v, scope, key, rule);
}

std::optional<std::string_view> optional_text(const Members& o, const Scope& scope, std::string_view key,
                                              TextRule rule) {
    const boost::json::value* v = o.find(key);
    if (v == nullptr || v->is_null()) {
        return std::nullopt;
    }
    return check_text(*v, scope, key, rule, "must be a string or null");
}

std::optional<std::int64_t> required_quantity(const Members& o, const Scope& scope, std::string_view key) {
    const boost::json::value* v = o.find(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    if (!v->is_int64() && !v->is_uint64()) {
        scope.add(key, "must be an integer");
        return std::nullopt;
    }
    // A uint64 value is above INT64_MAX, hence above the bound.
    if (v->is_uint64() || v->get_int64() < 1 || v->get_int64() > kMaxQuantity) {
        scope.add(key, "must be an integer from 1 to " + std::to_string(kMaxQuantity));
        return std::nullopt;
    }
    return v->get_int64();
}

std::optional<Money> required_money(const Members& o, const Scope& scope, std::string_view key) {
    const boost::json::value* v = o.find(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    auto converted = convert_money(*v);
    if (const auto* problem = std::get_if<std::string_view>(&converted)) {
        scope.add(key, std::string(*problem));
        return std::nullopt;
    }
    return std::get<Money>(converted);
}

std::optional<Timestamp> check_timestamp(const boost::json::value& v, const Scope& scope, std::string_view key,
                                         std::string_view type_message) {
    const boost::json::string* s = v.if_string();
    if (s == nullptr) {
        scope.add(key, std::string(type_message));
        return std::nullopt;
    }
    auto ts = parse_timestamp(std::string_view(s->data(), s->size()));
    if (!ts) {
        scope.add(key, std::string(kTimestampMessage));
    }
    return ts;
}

}  // namespace hub::ingest::fields
