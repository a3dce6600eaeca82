#include "hub/ingest/signature.hpp"

#include "common/crypto/digest.hpp"
#include "common/crypto/encoding.hpp"
#include "common/crypto/random.hpp"

namespace hub::ingest {
namespace {

constexpr std::string_view kVersion1 = "v1";
constexpr std::size_t kSecretBytes = 32;
// Twelve digits reach the year 33658: enough, and no overflow in the arithmetic below.
constexpr std::size_t kMaxTimestampDigits = 12;

bool is_separator(char c) { return c == ' ' || c == '\t'; }

/// Unix seconds written canonically (digits only, no sign, no leading zero); nullopt otherwise.
std::optional<std::int64_t> parse_unix_seconds(std::string_view text) {
    if (text.empty() || text.size() > kMaxTimestampDigits || (text.size() > 1 && text[0] == '0')) return std::nullopt;
    std::int64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    return value;
}

/// Ids are opaque to us, but they go into the signed content and the inbox: no control characters.
bool valid_id(std::string_view id) {
    if (id.size() > kMaxWebhookIdBytes) return false;
    for (unsigned char c : id)
        if (c < 0x20 || c == 0x7f) return false;
    return true;
}

}  // namespace

std::string_view signature_error_code(SignatureVerdict verdict) {
    switch (verdict) {
        case SignatureVerdict::ok: return "";
        case SignatureVerdict::missing: return "signature_missing";
        case SignatureVerdict::malformed: return "signature_malformed";
        case SignatureVerdict::stale: return "signature_stale";
        case SignatureVerdict::mismatch: return "signature_mismatch";
        case SignatureVerdict::no_secret: return "signature_no_secret";
    }
    return "signature_mismatch";
}

std::optional<std::vector<std::string>> parse_signature_header(std::string_view header) {
    if (header.size() > kMaxSignatureHeaderBytes) return std::nullopt;
    std::vector<std::string> tags;
    std::size_t entries = 0;
    std::size_t pos = 0;
    while (pos < header.size()) {
        if (is_separator(header[pos])) {
            ++pos;
            continue;
        }
        std::size_t end = pos;
        while (end < header.size() && !is_separator(header[end])) ++end;
        const std::string_view entry = header.substr(pos, end - pos);
        pos = end;
        if (++entries > kMaxSignatureEntries) return std::nullopt;
        const auto comma = entry.find(',');
        if (comma == std::string_view::npos || entry.substr(0, comma) != kVersion1) continue;
        auto tag = common::crypto::base64_decode(entry.substr(comma + 1));
        if (tag && tag->size() == common::crypto::kSha256Bytes) tags.push_back(std::move(*tag));
    }
    return tags;
}

std::optional<std::string> signing_key_from_secret(std::string_view secret) {
    if (secret.starts_with(kSigningSecretPrefix)) secret.remove_prefix(kSigningSecretPrefix.size());
    auto key = common::crypto::base64_decode(secret);
    if (!key || key->empty()) return std::nullopt;
    return key;
}

std::string new_signing_secret() {
    return std::string(kSigningSecretPrefix) +
           common::crypto::base64_encode(common::crypto::random_bytes(kSecretBytes));
}

std::string sign_webhook(std::string_view key, std::string_view id, std::string_view timestamp, std::string_view body) {
    std::string content;
    content.reserve(id.size() + timestamp.size() + body.size() + 2);
    content.append(id).append(1, '.').append(timestamp).append(1, '.').append(body);
    return std::string(kVersion1) + "," + common::crypto::base64_encode(common::crypto::hmac_sha256(key, content));
}

SignatureVerdict verify_signature(const SignatureHeaders& headers, std::string_view body,
                                  const std::vector<std::string>& keys, std::int64_t now_unix_seconds) {
    if (headers.id.empty() || headers.timestamp.empty() || headers.signature.empty()) return SignatureVerdict::missing;
    const auto timestamp = parse_unix_seconds(headers.timestamp);
    auto tags = parse_signature_header(headers.signature);
    if (!timestamp || !tags || !valid_id(headers.id)) return SignatureVerdict::malformed;
    const std::int64_t age = now_unix_seconds - *timestamp;
    if (age > kSignatureToleranceSeconds || age < -kSignatureToleranceSeconds) return SignatureVerdict::stale;
    if (keys.empty()) return SignatureVerdict::no_secret;

    std::string content;
    content.reserve(headers.id.size() + headers.timestamp.size() + body.size() + 2);
    content.append(headers.id).append(1, '.').append(headers.timestamp).append(1, '.').append(body);
    bool matched = false;
    for (const auto& key : keys) {
        const std::string expected = common::crypto::hmac_sha256(key, content);
        // Every pair is compared (no early exit), so the time does not depend on which entry or key matched.
        for (const auto& tag : *tags) matched = common::crypto::constant_time_equals(tag, expected) || matched;
    }
    return matched ? SignatureVerdict::ok : SignatureVerdict::mismatch;
}

}  // namespace hub::ingest
