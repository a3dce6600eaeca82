#include "hub/admin/refusal.hpp"

#include "common/text/utf8.hpp"

namespace hub::admin {

void require_text(std::string_view field, std::string_view value, std::size_t max_bytes) {
    const std::string name(field);
    if (value.empty()) throw Refusal(Refusal::Kind::invalid, name + " must not be empty");
    if (value.size() > max_bytes)
        throw Refusal(Refusal::Kind::invalid, name + " is longer than " + std::to_string(max_bytes) + " bytes");
    for (std::string_view rest = value; !rest.empty();) {
        const auto c = common::text::next_utf8(rest);
        if (c.length == 0) throw Refusal(Refusal::Kind::invalid, name + " is not UTF-8 text");
        if (c.code_point < 0x20 || (c.code_point >= 0x7F && c.code_point <= 0x9F))
            throw Refusal(Refusal::Kind::invalid, name + " must not hold control characters");
        rest.remove_prefix(c.length);
    }
}

}  // namespace hub::admin
