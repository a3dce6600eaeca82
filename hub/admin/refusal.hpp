#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

// The operator rules (branches, brands, POS connections, mappings, the inbox) are functions over a transaction that
// the CLI calls and the operator HTTP API (product.md section 9) can call too: one rule, two doors. They refuse
// with a Refusal, which each door turns into its own error (the CLI: hub/admin/admin.hpp with_refusals()).

namespace hub::admin {

/// Why an operator rule refused a request; nothing was written.
struct Refusal : std::runtime_error {
    enum class Kind {
        invalid,    ///< a value breaks a rule (CLI: bad usage, exit 2; HTTP: 400)
        not_found,  ///< what it names does not exist (CLI: exit 1; HTTP: 404)
        conflict,   ///< it exists already, or clashes with what is stored (CLI: exit 1; HTTP: 409)
    };
    Refusal(Kind k, const std::string& message) : std::runtime_error(message), kind(k) {}
    Kind kind;
};

/// The most bytes of an id an operator names (branch, brand, POS connection, mapped product): the bound of a
/// webhook's ids (hub/ingest/validate.hpp kMaxIdBytes), which carry branch and product ids.
inline constexpr std::size_t kMaxIdBytes = 128;
/// The most rows one listing returns (the CLI's --limit, the operator API's ?limit=).
inline constexpr std::int64_t kMaxListLimit = 100000;

/// Refuses (invalid) a text value that is empty, longer than `max_bytes`, not UTF-8, or holds a control
/// character: ids and names are shown on terminals and dashboards and sent to the POS. `field` names it in the
/// message. Pure.
void require_text(std::string_view field, std::string_view value, std::size_t max_bytes);

}  // namespace hub::admin
