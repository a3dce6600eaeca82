#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <string>

#include "common/http/message.hpp"

namespace common::http {

/// How long a client should wait before retrying while a dependency (the database) is unavailable: the one value
/// every 503 of that kind carries in Retry-After.
inline constexpr std::chrono::seconds kUnavailableRetryAfter{5};

/// A failure answered at the edge. Handlers return one; render() is the only place that turns it into a body.
struct HttpError {
    unsigned status = 500;
    std::string code;     ///< stable machine word: "invalid_request", "database_unavailable", ...
    std::string message;  ///< for humans; never a secret, a body or a full phone number
    boost::json::array details{};
    std::chrono::seconds retry_after{0};  ///< 0: no Retry-After header
};

/// `{"status": "failed", "error": {"code", "message", "details"}}`; callers may add fields (the webhook surface adds
/// "order_id").
boost::json::object failure_body(const HttpError& e);

/// `e` as an answer: its status, `body` (failure_body(e) unless given, e.g. with fields added) as JSON, and
/// Retry-After when set.
Response render(const HttpError& e, const boost::json::object* body = nullptr);

/// The answer to "the database is unavailable": 503, `code`, Retry-After kUnavailableRetryAfter.
HttpError unavailable(std::string code, std::string message);

}  // namespace common::http
