#include "hub/http/transport_security.hpp"

#include <boost/url/parse.hpp>
#include <memory>

namespace hub::http {
namespace {

using common::http::Request;
using common::http::Response;

/// The answer of `inner` with HSTS. A free coroutine with its parameters by value (GCC 12 mishandles by-value
/// parameters of coroutine lambdas); `inner` is shared, so it outlives every call.
boost::asio::awaitable<Response> answer_with_hsts(std::shared_ptr<const common::http::Handler> inner, Request req) {
    Response r = co_await (*inner)(std::move(req));
    r.headers.emplace_back("Strict-Transport-Security", std::string(kHsts));
    co_return r;
}

}  // namespace

bool https_url(std::string_view url) {
    auto u = boost::urls::parse_absolute_uri(url);
    return u && u->scheme_id() == boost::urls::scheme::https;
}

common::http::Handler with_hsts(common::http::Handler inner) {
    auto shared = std::make_shared<const common::http::Handler>(std::move(inner));
    return [shared](Request req) { return answer_with_hsts(shared, std::move(req)); };
}

common::http::ErrorRenderer with_hsts(common::http::ErrorRenderer inner) {
    return [inner = std::move(inner)](std::string_view target, unsigned status, std::string_view code,
                                      std::string_view message) {
        Response r = inner(target, status, code, message);
        r.headers.emplace_back("Strict-Transport-Security", std::string(kHsts));
        return r;
    };
}

}  // namespace hub::http
