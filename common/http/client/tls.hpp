#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/http/client/connection.hpp"
#include "common/http/client/url.hpp"

namespace boost::asio::ssl {
class context;
}

namespace common::http::detail {

/// One client TLS context per CA file (empty: the system trust store), made on first use and kept: a CA file
/// changed on disk is not read again. Thread-safe.
class TlsContexts {
public:
    /// The context for `ca_file`; null, with a one-line reason in `error`, when it cannot be made (the next call
    /// tries again).
    std::shared_ptr<boost::asio::ssl::context> get(const std::string& ca_file, std::string& error);

private:
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<boost::asio::ssl::context>> contexts_;
};

/// The TLS handshake of a connected `c` (which has a TLS stream) with `t`: SNI for a host name, peer and host-name
/// verification, all within `timeout`. A refused certificate is tls_verify, any other failure tls_handshake.
boost::asio::awaitable<Outcome> handshake(Connection& c, const Target& t, std::chrono::milliseconds timeout);

}  // namespace common::http::detail
