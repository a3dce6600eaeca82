#include "pos/http/responses.hpp"

#include <boost/json.hpp>

#include "common/json/parse.hpp"
#include "pos/logic/storable.hpp"

namespace pos::http {

using common::http::Response;

Response render_error(std::string_view, unsigned status, std::string_view code, std::string_view message) {
    auto r = common::http::json_response(status, {{"success", false}, {"message", message}, {"code", code}});
    if (status == 503) r.headers.emplace_back("Retry-After", "5");
    return r;
}

Response unauthenticated() {
    auto r = common::http::json_response(401, {{"success", false}, {"message", "Unauthenticated."}});
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
}

Response bad_credentials() {
    return common::http::json_response(401, {{"status", "These credentials do not match our records."}});
}

Response forbidden() {
    return common::http::json_response(403, {{"success", false}, {"message", "This action is unauthorized."}});
}

Response validation_failed(const ValidationErrors& errors) {
    boost::json::object by_key;
    for (const auto& [key, messages] : errors) {
        boost::json::array list;
        for (const auto& m : messages) list.emplace_back(m);
        by_key[key] = std::move(list);
    }
    return common::http::json_response(
        422, {{"success", false}, {"message", summarize_errors(errors)}, {"errors", std::move(by_key)}});
}

Response store_unavailable(std::string_view target) {
    return render_error(target, 503, "unavailable", "The order store is unavailable; retry later.");
}

std::optional<boost::json::value> parse_json_body(const common::http::Request& req, Response& refusal) {
    auto parsed = common::json::parse_strict(req.body);
    if (!parsed.value) {
        refusal =
            render_error(req.target, 400, "malformed_json", "The request body is not valid JSON: " + parsed.error);
        return std::nullopt;
    }
    if (contains_nul(*parsed.value)) {
        refusal = render_error(req.target, 400, "malformed_json", "The request body must not contain NUL characters.");
        return std::nullopt;
    }
    return std::move(parsed.value);
}

}  // namespace pos::http
