#include "common/http/client/url.hpp"

#include <boost/url/parse.hpp>
#include <cctype>
#include <charconv>

#include "common/http/client.hpp"

namespace common::http {
namespace detail {

std::optional<Target> parse_target(std::string_view url, std::string& error) {
    auto parsed = boost::urls::parse_uri(url);
    if (!parsed) {
        error = "the URL is not an absolute http or https URL";
        return std::nullopt;
    }
    const auto& u = *parsed;
    Target t;
    if (u.scheme_id() == boost::urls::scheme::https) {
        t.tls = true;
    } else if (u.scheme_id() != boost::urls::scheme::http) {
        error = "the URL scheme must be http or https";
        return std::nullopt;
    }
    if (u.has_userinfo()) {
        error = "credentials in the URL are not supported";
        return std::nullopt;
    }
    switch (u.host_type()) {
        case boost::urls::host_type::ipv4:
        case boost::urls::host_type::ipv6:
            t.host = std::string(u.host_address());
            t.host_is_address = true;
            break;
        case boost::urls::host_type::name:
            t.host = std::string(u.encoded_host());
            if (t.host.find('%') != std::string::npos) {
                error = "the URL host must not be percent-encoded";
                return std::nullopt;
            }
            break;
        default: error = "the URL has no usable host"; return std::nullopt;
    }
    if (t.host.empty()) {
        error = "the URL has no host";
        return std::nullopt;
    }
    const std::uint16_t default_port = t.tls ? 443 : 80;
    t.port = default_port;
    if (u.has_port() && !u.port().empty()) {
        const auto text = u.port();
        unsigned value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
            error = "the URL port is not a number between 1 and 65535";
            return std::nullopt;
        }
        t.port = static_cast<std::uint16_t>(value);
    }
    t.host_header = u.host_type() == boost::urls::host_type::ipv6 ? "[" + t.host + "]" : t.host;
    if (t.port != default_port) t.host_header += ":" + std::to_string(t.port);
    t.resource = std::string(u.encoded_target());
    if (t.resource.empty() || t.resource.front() != '/') t.resource.insert(0, "/");
    return t;
}

std::string pool_key(const Target& t, const std::string& ca_file) {
    return (t.tls ? "https|" : "http|") + t.host + "|" + std::to_string(t.port) + "|" + (t.tls ? ca_file : "");
}

bool is_token(std::string_view s) {
    if (s.empty()) return false;
    for (unsigned char ch : s) {
        if (std::isalnum(ch)) continue;
        if (std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(ch)) == std::string_view::npos) return false;
    }
    return true;
}

bool is_field_value(std::string_view s) {
    for (unsigned char ch : s)
        if (ch == '\r' || ch == '\n' || ch == '\0') return false;
    return true;
}

}  // namespace detail

std::string join_url(std::string_view base, std::string_view path) {
    while (!base.empty() && base.back() == '/') base.remove_suffix(1);
    std::string url(base);
    url += path;
    return url;
}

std::optional<std::string> origin(std::string_view url) {
    std::string error;
    const auto t = detail::parse_target(url, error);
    if (!t) return std::nullopt;
    // An IPv6 literal is the only host with a colon; it keeps its brackets so that the port stays apart.
    std::string host = t->host.find(':') != std::string::npos ? "[" + t->host + "]" : t->host;
    for (char& ch : host) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return (t->tls ? "https://" : "http://") + host + ":" + std::to_string(t->port);
}

}  // namespace common::http
