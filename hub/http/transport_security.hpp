#pragma once

// HTTPS as the browser sees it. A hub whose public URL is https:// (a proxy ends TLS in front of it) or whose
// listener speaks TLS is reached over HTTPS, whatever its own listener speaks: its session cookies are `Secure`
// and every answer carries Strict-Transport-Security, so that a browser never sends the cookie in clear.

#include <string_view>

#include "common/http/server.hpp"

namespace hub::http {

/// The value of the Strict-Transport-Security header: one year, this host only (other hosts of the domain are not
/// ours to pin).
inline constexpr std::string_view kHsts = "max-age=31536000";

/// True when `url` is an https:// URL (the scheme in any case).
bool https_url(std::string_view url);

/// `inner`, with Strict-Transport-Security on every answer (streams included).
common::http::Handler with_hsts(common::http::Handler inner);

/// `inner`, with Strict-Transport-Security on every refusal of the server itself (413, 408, 503, ...).
common::http::ErrorRenderer with_hsts(common::http::ErrorRenderer inner);

}  // namespace hub::http
