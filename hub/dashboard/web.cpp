#include "hub/dashboard/web.hpp"

namespace hub::dashboard {

std::string_view content_type_of(std::string_view name) {
    const auto ends = [&](std::string_view ext) {
        return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
    };
    if (ends(".html")) return "text/html; charset=utf-8";
    if (ends(".css")) return "text/css; charset=utf-8";
    if (ends(".js")) return "text/javascript; charset=utf-8";
    if (ends(".svg")) return "image/svg+xml";
    if (ends(".json")) return "application/json";
    return "application/octet-stream";
}

std::optional<common::http::Response> web_response(std::string_view path) {
    std::string_view name = path;
    if (name == "/" || name.empty()) name = "/index.html";
    name.remove_prefix(1);
    for (const auto& f : web_files()) {
        if (f.name != name) continue;
        common::http::Response r;
        r.content_type = content_type_of(f.name);
        r.body = std::string(f.content);
        // Only our own files: no inline script or style, no other origin, no framing.
        r.headers.emplace_back("Content-Security-Policy",
                               "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; "
                               "object-src 'none'");
        r.headers.emplace_back("X-Content-Type-Options", "nosniff");
        r.headers.emplace_back("Referrer-Policy", "no-referrer");
        r.headers.emplace_back("X-Frame-Options", "DENY");
        r.headers.emplace_back("Cache-Control", "no-cache");
        return r;
    }
    return std::nullopt;
}

}  // namespace hub::dashboard
