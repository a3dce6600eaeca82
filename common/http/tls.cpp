#include "common/http/tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <stdexcept>

namespace common::http {
namespace {

namespace ssl = boost::asio::ssl;

// Mozilla "intermediate" (TLS 1.2 part; TLS 1.3 suites stay OpenSSL's defaults, which are all strong).
constexpr const char* kCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";
constexpr const char* kGroups = "X25519:prime256v1:secp384r1";

[[noreturn]] void fail(const std::string& what, const std::string& file, const boost::system::error_code& ec) {
    throw std::runtime_error(what + " '" + file + "': " + ec.message());
}

}  // namespace

std::shared_ptr<ssl::context> make_server_tls_context(const TlsFiles& files) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression |
                     ssl::context::single_dh_use);
    SSL_CTX* native = ctx->native_handle();
    SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION);
    if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 || SSL_CTX_set_cipher_list(native, kCiphers) != 1 ||
        SSL_CTX_set1_groups_list(native, kGroups) != 1 || SSL_CTX_set_dh_auto(native, 1) != 1)
        throw std::runtime_error("cannot configure the TLS context");
    boost::system::error_code ec;
    ctx->use_certificate_chain_file(files.cert_file, ec);
    if (ec) fail("cannot load the TLS certificate", files.cert_file, ec);
    ctx->use_private_key_file(files.key_file, ssl::context::pem, ec);
    if (ec && ec.category() == boost::asio::error::get_ssl_category() &&
        ERR_GET_LIB(static_cast<unsigned long>(ec.value())) == ERR_LIB_X509 &&
        ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH)
        ec = {};  // reported below with both names
    else if (ec)
        fail("cannot load the TLS private key", files.key_file, ec);
    if (SSL_CTX_check_private_key(native) != 1)
        throw std::runtime_error("the TLS private key '" + files.key_file + "' does not match the certificate '" +
                                 files.cert_file + "'");
    return ctx;
}

std::shared_ptr<ssl::context> make_client_tls_context(const std::string& ca_file) {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
    if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1)
        throw std::runtime_error("cannot configure the TLS context");
    ctx->set_verify_mode(ssl::verify_peer);
    boost::system::error_code ec;
    if (ca_file.empty()) {
        ctx->set_default_verify_paths(ec);
        if (ec) throw std::runtime_error("cannot load the system trust store: " + ec.message());
    } else {
        ctx->load_verify_file(ca_file, ec);
        if (ec) fail("cannot load the CA file", ca_file, ec);
    }
    return ctx;
}

}  // namespace common::http
