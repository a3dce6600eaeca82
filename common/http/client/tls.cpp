#include "common/http/client/tls.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/http/client/watchdog.hpp"
#include "common/http/tls.hpp"

namespace common::http::detail {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

/// Host-name verification that leaves a precise reason (X509_V_ERR_HOSTNAME_MISMATCH) for the error text.
struct HostCheck {
    ssl::host_name_verification check;
    bool operator()(bool preverified, ssl::verify_context& ctx) const {
        const bool ok = check(preverified, ctx);
        if (!ok && preverified) X509_STORE_CTX_set_error(ctx.native_handle(), X509_V_ERR_HOSTNAME_MISMATCH);
        return ok;
    }
};

/// The failure of a handshake that did not time out: a refused certificate, or anything else.
Outcome handshake_failure(SSL* ssl_handle, const boost::system::error_code& ec, const std::string& where) {
    const long verify = SSL_get_verify_result(ssl_handle);
    if (verify != X509_V_OK)
        return {ClientFailure::tls_verify,
                "the certificate of " + where + " was refused: " + X509_verify_cert_error_string(verify)};
    if (ec.category() == asio::error::get_ssl_category() &&
        ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_CERTIFICATE_VERIFY_FAILED)
        return {ClientFailure::tls_verify, "the certificate of " + where + " was refused"};
    return {ClientFailure::tls_handshake, "the TLS handshake with " + where + " failed: " + ec.message()};
}

}  // namespace

std::shared_ptr<ssl::context> TlsContexts::get(const std::string& ca_file, std::string& error) {
    std::lock_guard lock(mutex_);
    auto& c = contexts_[ca_file];
    if (!c) {
        try {
            c = make_client_tls_context(ca_file);
        } catch (const std::exception& e) {
            error = e.what();
            contexts_.erase(ca_file);
            return nullptr;
        }
    }
    return c;
}

asio::awaitable<Outcome> handshake(Connection& c, const Target& t, std::chrono::milliseconds timeout) {
    const std::string where = t.host + ":" + std::to_string(t.port);
    SSL* ssl_handle = c.tls->native_handle();
    // RFC 6066: SNI carries names only, never addresses.
    if (!t.host_is_address && SSL_set_tlsext_host_name(ssl_handle, t.host.c_str()) != 1)
        co_return Outcome{ClientFailure::tls_handshake, "cannot set the TLS server name " + t.host};
    c.tls->set_verify_mode(ssl::verify_peer);
    c.tls->set_verify_callback(HostCheck{ssl::host_name_verification(t.host)});
    Watchdog watchdog(co_await asio::this_coro::executor);
    watchdog.arm(std::chrono::steady_clock::now() + timeout, &c.socket(), nullptr, false);
    auto [ec] = co_await c.tls->async_handshake(ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
    watchdog.disarm();
    if (!ec) co_return Outcome{};
    if (watchdog.fired())
        co_return Outcome{ClientFailure::tls_handshake, "the TLS handshake with " + where + " timed out"};
    co_return handshake_failure(ssl_handle, ec, where);
}

}  // namespace common::http::detail
