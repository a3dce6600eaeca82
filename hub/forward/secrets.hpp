#pragma once

#include <string>

#include "common/config/options.hpp"
#include "common/crypto/secret_box.hpp"

namespace hub::forward {

/// The option naming ORDERHUB_SECRET_KEY (64 hex characters). Prefer the environment: flags show in `ps`.
common::config::OptionSpec secret_key_option();

/// The SecretBox of ORDERHUB_SECRET_KEY; a cli::UserError (never showing the value) when missing or malformed.
common::crypto::SecretBox secret_box(const common::config::ParsedArgs& args);

/// Associated data binding a sealed secret to its row, so a sealed value cannot be moved to another brand.
std::string token_aad(const std::string& brand, const std::string& environment);
std::string password_aad(const std::string& brand, const std::string& environment);

}  // namespace hub::forward
