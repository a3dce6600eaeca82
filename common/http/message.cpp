#include "common/http/message.hpp"

#include <strings.h>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace common::http {

std::optional<std::string_view> Request::header(std::string_view name) const {
    for (const auto& [k, v] : headers)
        if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
    return std::nullopt;
}

void LogFields::set(std::string_view key, std::string value) {
    for (auto& [k, v] : items_)
        if (k == key) {
            v = std::move(value);
            return;
        }
    if (items_.empty()) items_.reserve(8);  // a webhook's line sets six or seven: one allocation, not four
    items_.emplace_back(key, std::move(value));
}

std::string_view LogFields::get(std::string_view key) const {
    for (const auto& [k, v] : items_)
        if (k == key) return v;
    return {};
}

Response json_response(unsigned status, const boost::json::value& body) {
    Response r;
    r.status = status;
    r.body = boost::json::serialize(body);
    return r;
}

std::string_view reason(unsigned status) {
    switch (status) {
        case 200: return "OK";
        case 201: return "Created";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 408: return "Request Timeout";
        case 409: return "Conflict";
        case 413: return "Payload Too Large";
        case 422: return "Unprocessable Entity";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        default: return "";
    }
}

}  // namespace common::http
