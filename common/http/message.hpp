#pragma once

#include <boost/json/fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace common::http {

/// A parsed HTTP request as handlers see it; Beast types stay inside the server.
struct Request {
    std::string method;      ///< "POST"
    std::string target;      ///< "/webhooks/abc?x=1"
    std::string path;        ///< "/webhooks/abc"
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::string request_id;  ///< generated per request, echoed in X-Request-Id
    std::string remote;      ///< peer address

    /// The first header with this name (case-insensitive).
    std::optional<std::string_view> header(std::string_view name) const;
};

/// A response; `body` is sent as is with `content_type`.
struct Response {
    unsigned status = 200;
    std::string body;
    std::string content_type = "application/json";
    std::vector<std::pair<std::string, std::string>> headers;
    bool close = false;  ///< close the connection after this response
};

/// A JSON response.
Response json_response(unsigned status, const boost::json::value& body);

/// The reason phrase of a status code ("Not Found").
std::string_view reason(unsigned status);

}  // namespace common::http
