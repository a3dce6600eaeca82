#pragma once

// Route matching and list cursors of the operator HTTP API (hub/adminapi/api.hpp). Pure.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hub::adminapi {

/// The values of a pattern's `{name}` segments, in order, percent-decoded.
using Params = std::vector<std::pair<std::string, std::string>>;

/// Whether `path` (below /api/admin/v1/, no leading slash) has the segments of `pattern` (`orders/{id}/resend`): each
/// literal segment equal, each `{name}` a non-empty segment that percent-decodes, stored in `params`. A trailing
/// slash is not dropped.
bool match_pattern(std::string_view pattern, std::string_view path, Params& params);

/// A route as find_route sees it.
struct RouteKey {
    std::string_view method;
    std::string_view pattern;
};

/// What a path and method came to: the index of the route (nullopt: none); when none, `allow` lists the methods
/// of the routes whose pattern matched (empty: no route has the path, 404; else 405).
struct Match {
    std::optional<std::size_t> index;
    Params params;
    std::string allow;
};
Match find_route(std::span<const RouteKey> routes, std::string_view method, std::string_view path);

/// The opaque cursor that continues a newest-first list after `last_key` (the sort key of the page's last item).
std::string encode_cursor(std::string_view last_key);

/// The key of a cursor encode_cursor made; nullopt for anything else.
std::optional<std::string> decode_cursor(std::string_view cursor);

}  // namespace hub::adminapi
