#include "pos/logic/bearer.hpp"

namespace pos {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

}  // namespace

std::optional<std::string> bearer_token(std::optional<std::string_view> header) {
    if (!header) return std::nullopt;
    std::string_view value = *header;
    while (!value.empty() && is_space(value.front())) value.remove_prefix(1);
    while (!value.empty() && is_space(value.back())) value.remove_suffix(1);
    constexpr std::string_view kScheme = "bearer";
    if (value.size() <= kScheme.size() || !iequals(value.substr(0, kScheme.size()), kScheme) ||
        !is_space(value[kScheme.size()])) {
        return std::nullopt;
    }
    value.remove_prefix(kScheme.size());
    while (!value.empty() && is_space(value.front())) value.remove_prefix(1);
    if (value.empty() || value.size() > kMaxBearerTokenLength) return std::nullopt;
    for (const char c : value) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte == 0x7f) return std::nullopt;
    }
    return std::string(value);
}

}  // namespace pos
