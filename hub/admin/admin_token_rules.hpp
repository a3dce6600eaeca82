#pragma once

// Tokens of the operator HTTP API (product.md section 9), for `orderhub admin-token ...` and the API's auth step.
//
// Decisions:
//   - A token is 256 random bits (URL-safe base64), shown once at creation; only its SHA-256 is stored.
//   - A name (1-128 bytes of text, unique) says whose token it is: it is the actor of every change the token makes.
//   - A read-only token may only GET. Revoking is immediate in the database; a serving hub forgets a cached token
//     within its cache time (hub/adminapi/api.hpp).

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace pqxx {
class transaction_base;
}

namespace hub::admin {

/// What is stored of a token: its SHA-256 in hex. Pure.
std::string admin_token_hash(std::string_view token);

/// Creates a token; returns id, name, read_only, created_at and `token` (the only time it is shown).
/// Refusals: invalid name; conflict when the name is taken.
boost::json::object create_admin_token(pqxx::transaction_base& tx, const std::string& name, bool read_only);

/// Every token, newest first, without the token: id, name, read_only, created_at, revoked_at.
boost::json::array list_admin_tokens(pqxx::transaction_base& tx);

/// Revokes token `id` (a second revoke keeps the first time). Refusals: not_found.
boost::json::object revoke_admin_token(pqxx::transaction_base& tx, const std::string& id);

/// A live (not revoked) token as the API's auth step sees it.
struct AdminToken {
    std::string id;
    std::string name;
    bool read_only = true;
};

/// The live token whose hash is `hash`, or nullopt.
std::optional<AdminToken> find_admin_token(pqxx::transaction_base& tx, const std::string& hash);

}  // namespace hub::admin
