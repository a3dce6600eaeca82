#pragma once

// What the operator API's handlers share (hub/adminapi/api.hpp): the context, one call, and the two ways a handler
// reaches the database, both on the pool's workers (never on the I/O thread) and as the operator role for the
// transaction (`SET LOCAL ROLE orderhub_operator`, sql/hub/0015_admin_tokens.sql: the serving role may only read the
// configuration):
//   - read(): a read-only transaction;
//   - change(): a transaction that also records the change (hub.admin_changes, the token's name as actor) and
//     commits; a Refusal rolls both back.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "common/crypto/secret_box.hpp"
#include "common/db/pool.hpp"
#include "common/http/message.hpp"
#include "hub/admin/admin_token_rules.hpp"
#include "hub/adminapi/routes.hpp"

namespace hub::ingest {
class IngestService;
}

namespace hub::adminapi {

/// Owned by the AdminApi, which outlives every call.
struct Context {
    common::db::Pool& pool;
    const common::crypto::SecretBox* box;  ///< seals signing secrets and POS credentials; null: those are refused
    ingest::IngestService* ingest;         ///< replays inbox entries; null: replay answers 503
    std::string public_url;                ///< base of the webhook URLs shown
};

/// One authorised call of a route.
struct Call {
    const common::http::Request& req;
    Params params;
    admin::AdminToken token;

    /// The value of path parameter `name` ("" when the route has none).
    std::string param(std::string_view name) const;
    /// Query parameter `name`, percent-decoded.
    std::optional<std::string> query(std::string_view name) const;
    /// The body as a JSON object (an empty body: an empty object); a Refusal (invalid) when it is not one.
    boost::json::object body() const;
};

/// Field `name` of a request body: absent or null gives nullopt; another type is refused (invalid).
std::optional<std::string> string_field(const boost::json::object& body, std::string_view name);
std::optional<bool> bool_field(const boost::json::object& body, std::string_view name);
std::optional<long long> int_field(const boost::json::object& body, std::string_view name);

// read() and change() are not coroutines (GCC 12 mishandles by-value lambda parameters of coroutines, see
// common/db/pool.hpp): each returns the pool's awaitable. Callers name their lambdas before the co_await.

/// The name of the operator role in the database of `c` (hub/db/roles.hpp); outside a transaction.
std::string operator_role(pqxx::connection& c);

/// `f(pqxx::transaction_base&)` in a read-only transaction on a pool worker; its JSON value.
template <class F>
boost::asio::awaitable<boost::json::value> read(Context& ctx, F f) {
    auto job = [f = std::move(f)](pqxx::connection& c) mutable {
        const std::string role = operator_role(c);
        pqxx::read_transaction tx(c);
        tx.exec0("SET LOCAL ROLE " + tx.quote_name(role));
        return boost::json::value(f(tx));
    };
    return ctx.pool.run(std::move(job));
}

/// Records a change made by `call` on `target` (in `tx`, before its commit).
void record_change(pqxx::transaction_base& tx, const Call& call, const std::string& target, unsigned status);

/// `f(pqxx::transaction_base&)` in a transaction on a pool worker, recorded as a change by `call` on `target`
/// answered `status`, then committed; its JSON value. `call` must outlive the awaitable.
template <class F>
boost::asio::awaitable<boost::json::value> change(Context& ctx, const Call& call, std::string target, unsigned status,
                                                  F f) {
    auto job = [f = std::move(f), c = &call, target = std::move(target), status](pqxx::connection& conn) mutable {
        const std::string role = operator_role(conn);
        pqxx::work tx(conn);
        tx.exec0("SET LOCAL ROLE " + tx.quote_name(role));
        boost::json::value out(f(tx));
        record_change(tx, *c, target, status);
        tx.commit();
        return out;
    };
    return ctx.pool.run(std::move(job));
}

/// A JSON answer with `Cache-Control: no-store`.
common::http::Response answer(unsigned status, const boost::json::value& body);

/// `{"items": items, "next_cursor": null}`: a list that fits one page.
boost::json::object one_page(boost::json::value items);

/// Newest-first paging: the default and largest page size, and the `limit` query parameter of `call` checked.
inline constexpr long long kDefaultPage = 50;
inline constexpr long long kMaxPage = 200;
long long page_size(const Call& call);

/// The key a `cursor` query parameter continues after ("" without one); a bad cursor is refused (invalid).
std::string cursor_key(const Call& call);

/// `{"items": …, "next_cursor": …}` from `rows` fetched with `limit + 1`: the extra row says there is a next page,
/// whose cursor is the `key_field` of the page's last item.
boost::json::object page(boost::json::array rows, long long limit, std::string_view key_field);

}  // namespace hub::adminapi
