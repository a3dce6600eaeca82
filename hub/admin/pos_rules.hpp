#pragma once

// POS connections and item mappings, for `orderhub pos ...` and `map ...` and for the operator HTTP API
// (hub/admin/refusal.hpp).
//
// Decisions:
//   - A POS connection belongs to a brand and an environment; setting one creates the brand when new (a brand comes
//     into being with whichever of `pos set` and `branch create` names it first) and replaces what was stored.
//   - It has a token, login credentials (e-mail and password together), or both; secrets are sealed, bound to
//     their brand and environment, and never shown again.
//   - http:// is taken only to this machine (127.0.0.0/8, ::1, localhost): the token and the password travel with
//     every delivery and login. Another host needs https://, or an explicit allowance to send them in clear; such
//     connections are listed as insecure.
//   - New credentials give the brand's jobs that failed authentication another go (due now, attempts reset).
//   - A mapping is keyed by partner, kind (item or option) and the platform's id; setting one replaces its POS id.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/crypto/secret_box.hpp"

namespace pqxx {
class transaction_base;
}

namespace hub::admin {

/// What `pos set` gives.
struct PosConnectionInput {
    std::string brand;
    std::string environment = "production";
    std::string base_url;
    std::optional<std::string> token;
    std::optional<std::string> email;
    std::optional<std::string> password;
    std::string ca_file;               ///< empty: the system store
    bool allow_insecure_http = false;  ///< accept http:// to a host that is not loopback
};

/// True when `base_url` is an absolute http:// or https:// URL with a host and without user, query or fragment: what
/// a POS connection (and `pos verify`) may be pointed at.
bool usable_base_url(std::string_view base_url);

/// True when the POS at `base_url` would get the bearer token and the password in clear over a network: http:// (not
/// https://) to a host that is not loopback. An unreadable URL counts as insecure.
bool insecure_base_url(std::string_view base_url);

/// Stores the connection (and the brand, when new) and re-queues the brand's auth_failed jobs. Refusals (invalid):
/// a base URL that is not absolute http(s) without user, query or fragment, or insecure and not allowed; an e-mail
/// without a password or the reverse; neither a token nor credentials; an unreadable CA file. Returns what `pos set`
/// prints (no secret).
boost::json::object set_pos_connection(pqxx::transaction_base& tx, const common::crypto::SecretBox& box,
                                       const PosConnectionInput& in);

/// Every POS connection without its secrets: brand, environment, base_url, token, credentials, ca_file, insecure.
boost::json::array list_pos_connections(pqxx::transaction_base& tx);

/// Maps a platform item or option id to a POS id. Refusals: invalid kind or ids; not_found partner.
boost::json::object set_mapping(pqxx::transaction_base& tx, const std::string& partner, const std::string& kind,
                                const std::string& external, const std::string& pos_id);

/// Mappings, by partner, kind and platform id; an empty `partner` or `kind` does not filter. Refusals: invalid kind.
boost::json::array list_mappings(pqxx::transaction_base& tx, const std::string& partner, const std::string& kind);

/// Deletes one mapping and returns it. Refusals: invalid kind; not_found.
boost::json::object delete_mapping(pqxx::transaction_base& tx, const std::string& partner, const std::string& kind,
                                   const std::string& external);

}  // namespace hub::admin
