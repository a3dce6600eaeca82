#pragma once

// Standard Webhooks (https://www.standardwebhooks.com) verification: pure functions, no I/O, no clock of their
// own. A signed request carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a
// space-separated list of `v1,<base64 HMAC-SHA256>` entries over `{id}.{timestamp}.{raw body}`; the HMAC key is
// the base64-decoded part of a `whsec_<base64>` secret.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hub::ingest {

/// Accepted distance between `webhook-timestamp` and the hub's clock, in both directions (seconds).
inline constexpr std::int64_t kSignatureToleranceSeconds = 5 * 60;

/// Longest `webhook-signature` header looked at; longer ones are refused as malformed.
inline constexpr std::size_t kMaxSignatureHeaderBytes = 4096;

/// Most entries (of any version) in one `webhook-signature` header; more are refused as malformed.
inline constexpr std::size_t kMaxSignatureEntries = 32;

/// Longest `webhook-id` accepted.
inline constexpr std::size_t kMaxWebhookIdBytes = 256;

/// Prefix of a Standard Webhooks secret.
inline constexpr std::string_view kSigningSecretPrefix = "whsec_";

/// Why a request of a signing partner was refused, or `ok`.
enum class SignatureVerdict {
    ok,
    missing,    ///< a header is absent or empty
    malformed,  ///< a header is not well formed (timestamp, id, signature list too long or too many entries)
    stale,      ///< the timestamp is more than the tolerance before or after now
    mismatch,   ///< no v1 entry matches any valid secret
    no_secret,  ///< the partner has no valid secret
};

/// The inbox error code of a verdict: `signature_missing`, `signature_malformed`, `signature_stale`,
/// `signature_mismatch`, `signature_no_secret` (empty for ok). The HTTP answer never shows it.
std::string_view signature_error_code(SignatureVerdict verdict);

/// The three Standard Webhooks headers of a request; an absent header is empty.
struct SignatureHeaders {
    std::string_view id;
    std::string_view timestamp;
    std::string_view signature;
};

/// The raw (decoded) 32-byte tags of the `v1` entries of a `webhook-signature` header, in order. Entries are
/// separated by one or more spaces or tabs; entries of other versions, without a comma, or whose tag is not
/// canonical base64 of 32 bytes are skipped. nullopt when the header is longer than kMaxSignatureHeaderBytes or
/// has more than kMaxSignatureEntries entries.
std::optional<std::vector<std::string>> parse_signature_header(std::string_view header);

/// The HMAC key of a `whsec_<base64>` secret (the prefix is optional, as in the reference libraries); nullopt
/// for an empty key or text that is not canonical base64.
std::optional<std::string> signing_key_from_secret(std::string_view secret);

/// A new secret: `whsec_` and the base64 of 32 random bytes.
std::string new_signing_secret();

/// The `v1,<base64>` entry a sender computes for this message under `key` (raw key bytes).
std::string sign_webhook(std::string_view key, std::string_view id, std::string_view timestamp, std::string_view body);

/// Verifies a request's headers and raw body against each of `keys` (raw key bytes of the partner's currently
/// valid secrets) at `now_unix_seconds`. Tags are compared in constant time; any matching v1 entry under any key
/// is enough. Checks in order: missing, malformed, stale, no_secret, mismatch.
SignatureVerdict verify_signature(const SignatureHeaders& headers, std::string_view body,
                                  const std::vector<std::string>& keys, std::int64_t now_unix_seconds);

}  // namespace hub::ingest
