// Standard Webhooks verification (hub/ingest/signature.hpp) on hostile headers. The input is split at its first
// four newlines into webhook-id, webhook-timestamp, webhook-signature, a secret and the body (the rest), so the
// seeds stay readable. Checked beyond sanitizer findings:
//   - parse_signature_header keeps only 32-byte tags and refuses exactly the over-long and over-full headers;
//   - a header that also carries the correct v1 entry for the secret never verifies as a mismatch, and the same
//     entry never verifies a different body (the clock is fixed at kNow; seeds use that timestamp).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hub/ingest/signature.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace hub::ingest;
using fuzz::require;

constexpr std::int64_t kNow = 1'700'000'000;

/// The text before the next newline (all of it when there is none); `rest` continues after the newline.
std::string_view next_field(std::string_view& rest) {
    const std::size_t end = rest.find('\n');
    const std::string_view field = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    return field;
}

std::size_t count_entries(std::string_view header) {
    std::size_t entries = 0;
    bool in_entry = false;
    for (const char c : header) {
        const bool separator = c == ' ' || c == '\t';
        if (!separator && !in_entry) ++entries;
        in_entry = !separator;
    }
    return entries;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    const std::string_view id = next_field(rest);
    const std::string_view timestamp = next_field(rest);
    const std::string_view signature = next_field(rest);
    const std::string_view secret = next_field(rest);
    const std::string_view body = rest;

    const auto tags = parse_signature_header(signature);
    const bool refusable =
        signature.size() > kMaxSignatureHeaderBytes || count_entries(signature) > kMaxSignatureEntries;
    require(tags.has_value() != refusable, "a header is refused exactly when too long or too full");
    if (tags) {
        require(tags->size() <= kMaxSignatureEntries, "at most 32 tags");
        for (const std::string& tag : *tags) require(tag.size() == 32, "tags are 32 bytes");
    }

    std::vector<std::string> keys;
    if (auto key = signing_key_from_secret(secret)) keys.push_back(std::move(*key));
    const SignatureVerdict verdict = verify_signature({id, timestamp, signature}, body, keys, kNow);
    require((verdict == SignatureVerdict::ok) == signature_error_code(verdict).empty(), "an error code unless ok");
    if (keys.empty()) {
        require(verdict != SignatureVerdict::ok, "no key, no ok");
        return 0;
    }

    const std::string own = sign_webhook(keys.front(), id, timestamp, body);
    const std::string with_own = std::string(signature) + " " + own;
    const SignatureVerdict signed_verdict = verify_signature({id, timestamp, with_own}, body, keys, kNow);
    require(signed_verdict != SignatureVerdict::mismatch && signed_verdict != SignatureVerdict::no_secret,
            "the correct v1 entry is found among any others");
    const std::string other_body = std::string(body) + "x";
    const SignatureVerdict tampered = verify_signature({id, timestamp, own}, other_body, keys, kNow);
    require(tampered != SignatureVerdict::ok, "a signature does not verify another body");
    return 0;
}
