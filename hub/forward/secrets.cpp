#include "hub/forward/secrets.hpp"

#include "common/cli/cli.hpp"

namespace hub::forward {

common::config::OptionSpec secret_key_option() {
    return {.name = "secret-key",
            .env = "ORDERHUB_SECRET_KEY",
            .help = "64 hex characters sealing stored secrets (prefer the environment variable)",
            .placeholder = "HEX"};
}

common::crypto::SecretBox secret_box(const common::config::ParsedArgs& args) {
    auto hex = args.get("secret-key");
    if (!hex || hex->empty())
        throw common::cli::UserError(
            "ORDERHUB_SECRET_KEY is not set: it must be 64 hex characters (32 bytes), "
            "e.g. from `openssl rand -hex 32`, and stay the same for stored secrets");
    auto box = common::crypto::SecretBox::from_hex(*hex);
    if (!box) throw common::cli::UserError("ORDERHUB_SECRET_KEY must be exactly 64 hex characters (32 bytes)");
    return *box;
}

std::string token_aad(const std::string& brand, const std::string& environment) {
    return "pos_token:" + brand + ":" + environment;
}

std::string password_aad(const std::string& brand, const std::string& environment) {
    return "pos_password:" + brand + ":" + environment;
}

}  // namespace hub::forward
