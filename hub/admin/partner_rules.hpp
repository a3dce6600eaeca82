#pragma once

// Partners (delivery platforms), for `orderhub partner ...` and the operator HTTP API (hub/admin/refusal.hpp).
//
// Decisions:
//   - A partner's webhook key and signing secret are shown once, when issued (create, rotate, rotate-secret); only
//     the key's SHA-256 and the sealed secret are stored. Nothing else ever returns them.
//   - The label (partner_reference at the POS) is 1-64 of A-Z a-z 0-9 _ . - starting with a letter or digit,
//     unique; by default it is made from the name.
//   - Rotating the secret keeps the older ones valid for a grace period (0-8784 hours).

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <string>

#include "common/crypto/secret_box.hpp"

namespace pqxx {
class transaction_base;
}

namespace hub::admin {

/// What `partner create` gives.
struct PartnerInput {
    std::string name;
    std::optional<std::string> label;  ///< nullopt: made from the name
    std::string time_zone = "UTC";
    bool signing = false;
};

/// A partner with what was issued for it this once.
struct IssuedPartner {
    boost::json::object partner;  ///< id, name, label, time_zone, signing (and what the call changed)
    std::string webhook_key;      ///< empty when none was issued
};

/// `base` (trailing slashes dropped) + `/webhooks/` + `key`. Pure.
std::string webhook_url(std::string base, const std::string& key);

/// Checks `in` (the rules above). Refusals: invalid name, label or (signing) a missing `box`. Pure.
void check_partner_input(const PartnerInput& in, const common::crypto::SecretBox* box);

/// Creates a partner with a new webhook key (and, signing, a secret sealed by `box`, in `partner.signing_secret`).
/// Refusals: those of check_partner_input; invalid time zone; conflict when the label is taken.
IssuedPartner create_partner(pqxx::transaction_base& tx, const common::crypto::SecretBox* box, const PartnerInput& in);

/// Every partner, newest first, without keys or secrets.
boost::json::array list_partners(pqxx::transaction_base& tx);

/// One partner, without keys or secrets. Refusals: not_found.
boost::json::object show_partner(pqxx::transaction_base& tx, const std::string& id);

/// A new webhook key; the old one stops working. Refusals: not_found.
IssuedPartner rotate_partner_key(pqxx::transaction_base& tx, const std::string& id);

/// A new signing secret (in the result's `signing_secret`); older ones expire after `grace_hours`. Refusals:
/// invalid grace; not_found; conflict when the partner does not sign.
boost::json::object rotate_partner_secret(pqxx::transaction_base& tx, const common::crypto::SecretBox& box,
                                          const std::string& id, long long grace_hours);

/// A partner's own rate limit (token bucket): `per_second` requests a second, bursts of `burst` (nullopt: twice the
/// rate); both nullopt: back to the hub's default. Refusals: invalid numbers (1..1000000, a burst without a rate);
/// not_found.
boost::json::object set_partner_limit(pqxx::transaction_base& tx, const std::string& id,
                                      std::optional<long long> per_second, std::optional<long long> burst);

/// Disables a partner: its URL answers 404. Refusals: not_found.
boost::json::object disable_partner(pqxx::transaction_base& tx, const std::string& id);

}  // namespace hub::admin
