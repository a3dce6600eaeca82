#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string_view>

#include "common/http/message.hpp"
#include "pos/logic/validation_errors.hpp"

namespace pos::http {

/// The POS's failure body, Laravel-style: `{"success": false, "message": "…", "code": "…"}`; also the
/// server's own refusals (413, 408, 431, 400, 503, 500).
common::http::Response render_error(std::string_view target, unsigned status, std::string_view code,
                                    std::string_view message);

/// 401 `{"success": false, "message": "Unauthenticated."}` with `WWW-Authenticate: Bearer`.
common::http::Response unauthenticated();

/// 401 `{"status": "These credentials do not match our records."}`.
common::http::Response bad_credentials();

/// 403 `{"success": false, "message": "This action is unauthorized."}`.
common::http::Response forbidden();

/// 422 `{"success": false, "message": "<summary>", "errors": {"<dotted key>": ["…"]}}`.
common::http::Response validation_failed(const ValidationErrors& errors);

/// 503 with Retry-After: the database is unreachable.
common::http::Response store_unavailable(std::string_view target);

/// Parses a request body strictly as JSON; on failure sets `refusal` to a 400 (syntax, duplicate keys, too deep,
/// or a NUL character that PostgreSQL cannot store) and returns nullopt.
std::optional<boost::json::value> parse_json_body(const common::http::Request& req, common::http::Response& refusal);

}  // namespace pos::http
