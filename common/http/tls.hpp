#pragma once

#include <memory>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace common::http {

/// A PEM certificate chain (leaf first, then intermediates) and its private key, for a TLS listener.
struct TlsFiles {
    std::string cert_file;
    std::string key_file;
};

/// A server TLS context: TLS 1.2 and 1.3 only, no compression, no renegotiation, the server's cipher preference
/// and Mozilla's "intermediate" cipher list, loaded with `files` (the key must match the certificate). Throws
/// std::runtime_error with a one-line reason naming the file.
std::shared_ptr<boost::asio::ssl::context> make_server_tls_context(const TlsFiles& files);

/// A client TLS context: TLS 1.2+ only, peer verification against `ca_file` (PEM), or the system trust store
/// (`set_default_verify_paths`) when `ca_file` is empty. Throws std::runtime_error with a one-line reason.
std::shared_ptr<boost::asio::ssl::context> make_client_tls_context(const std::string& ca_file);

}  // namespace common::http
