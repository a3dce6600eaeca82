#pragma once

#include <cstddef>

#include "common/crypto/secret_box.hpp"

namespace pqxx {
class connection_base;
}

namespace hub::admin {

/// How many sealed values `secrets rotate-key` re-sealed, per kind.
struct ResealCounts {
    std::size_t pos_tokens = 0;       ///< hub.pos_connections.token_sealed
    std::size_t pos_passwords = 0;    ///< hub.pos_connections.password_sealed
    std::size_t signing_secrets = 0;  ///< hub.partner_signing_secrets.secret_sealed
};

/// Re-seals every sealed value of the hub (POS tokens and passwords, partners' signing secrets) from `current` to
/// `next` in one transaction: rows locked (FOR UPDATE), each value opened with `current` and sealed with `next`
/// under the same associated data. A value that does not open aborts everything with a common::cli::UserError that
/// names its table and row (never the value); nothing is changed then.
ResealCounts reseal_all(pqxx::connection_base& conn, const common::crypto::SecretBox& current,
                        const common::crypto::SecretBox& next);

}  // namespace hub::admin
