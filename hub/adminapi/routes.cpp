#include "hub/adminapi/routes.hpp"

#include <boost/url/pct_string_view.hpp>

#include "common/crypto/encoding.hpp"

namespace hub::adminapi {
namespace {

constexpr std::string_view kCursorPrefix = "c1:";

/// The next `/`-separated segment of `s` (consumed, with its slash); nullopt at the end.
std::optional<std::string_view> next_segment(std::string_view& s, bool& ended) {
    if (ended) return std::nullopt;
    const auto slash = s.find('/');
    std::string_view seg = s.substr(0, slash);
    if (slash == std::string_view::npos) {
        ended = true;
        s = {};
    } else {
        s.remove_prefix(slash + 1);
    }
    return seg;
}

}  // namespace

bool match_pattern(std::string_view pattern, std::string_view path, Params& params) {
    Params found;
    bool pattern_ended = false;
    bool path_ended = false;
    while (auto want = next_segment(pattern, pattern_ended)) {
        auto got = next_segment(path, path_ended);
        if (!got) return false;
        if (want->size() > 2 && want->front() == '{' && want->back() == '}') {
            if (got->empty()) return false;
            auto pct = boost::urls::make_pct_string_view(*got);
            if (!pct) return false;
            found.emplace_back(std::string(want->substr(1, want->size() - 2)), pct->decode());
        } else if (*want != *got) {
            return false;
        }
    }
    if (!path_ended) return false;
    params = std::move(found);
    return true;
}

Match find_route(std::span<const RouteKey> routes, std::string_view method, std::string_view path) {
    Match m;
    for (std::size_t i = 0; i < routes.size(); ++i) {
        Params params;
        if (!match_pattern(routes[i].pattern, path, params)) continue;
        if (routes[i].method == method) {
            m.index = i;
            m.params = std::move(params);
            m.allow.clear();
            return m;
        }
        if (m.allow.find(routes[i].method) == std::string::npos)
            m.allow += (m.allow.empty() ? "" : ", ") + std::string(routes[i].method);
    }
    return m;
}

std::string encode_cursor(std::string_view last_key) {
    return common::crypto::base64url_encode(std::string(kCursorPrefix) + std::string(last_key));
}

std::optional<std::string> decode_cursor(std::string_view cursor) {
    if (cursor.size() > 512) return std::nullopt;
    auto raw = common::crypto::base64url_decode(cursor);
    if (!raw || !raw->starts_with(kCursorPrefix) || raw->size() == kCursorPrefix.size()) return std::nullopt;
    return raw->substr(kCursorPrefix.size());
}

}  // namespace hub::adminapi
