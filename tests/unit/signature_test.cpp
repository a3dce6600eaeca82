#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/crypto/encoding.hpp"
#include "hub/ingest/signature.hpp"

using hub::ingest::kSignatureToleranceSeconds;
using hub::ingest::parse_signature_header;
using hub::ingest::sign_webhook;
using hub::ingest::SignatureHeaders;
using hub::ingest::SignatureVerdict;
using hub::ingest::signing_key_from_secret;
using hub::ingest::verify_signature;

namespace {

// The Standard Webhooks reference libraries' own test vector ("sign function works").
constexpr const char* kVectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr const char* kVectorId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr const char* kVectorTimestamp = "1614265330";
constexpr std::int64_t kVectorTime = 1614265330;
constexpr const char* kVectorBody = R"({"test": 2432232314})";
constexpr const char* kVectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

std::string vector_key() { return *signing_key_from_secret(kVectorSecret); }

SignatureHeaders headers(const std::string& signature, const char* timestamp = kVectorTimestamp,
                         const char* id = kVectorId) {
    return {id, timestamp, signature};
}

SignatureVerdict verify(const std::string& signature, std::int64_t now = kVectorTime,
                        std::vector<std::string> keys = {vector_key()}, const std::string& body = kVectorBody) {
    return verify_signature(headers(signature), body, keys, now);
}

}  // namespace

TEST_CASE("signature: the Standard Webhooks test vector", "[signature]") {
    REQUIRE(signing_key_from_secret(kVectorSecret));
    CHECK(signing_key_from_secret(kVectorSecret)->size() == 24);
    // The prefix is optional, as in the reference libraries.
    CHECK(signing_key_from_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == signing_key_from_secret(kVectorSecret));
    CHECK(sign_webhook(vector_key(), kVectorId, kVectorTimestamp, kVectorBody) == kVectorSignature);
    CHECK(verify(kVectorSignature) == SignatureVerdict::ok);
}

TEST_CASE("signature: a changed body, id, timestamp or key does not verify", "[signature]") {
    CHECK(verify(kVectorSignature, kVectorTime, {vector_key()}, R"({"test": 2432232315})") ==
          SignatureVerdict::mismatch);
    CHECK(verify(kVectorSignature, kVectorTime, {vector_key()}, std::string(kVectorBody) + " ") ==
          SignatureVerdict::mismatch);
    CHECK(verify_signature(headers(kVectorSignature, kVectorTimestamp, "msg_other"), kVectorBody, {vector_key()},
                           kVectorTime) == SignatureVerdict::mismatch);
    CHECK(verify_signature(headers(kVectorSignature, "1614265331"), kVectorBody, {vector_key()}, kVectorTime) ==
          SignatureVerdict::mismatch);
    // The wrong secret.
    const auto other = *signing_key_from_secret("whsec_" + common::crypto::base64_encode(std::string(32, 'k')));
    CHECK(verify(kVectorSignature, kVectorTime, {other}) == SignatureVerdict::mismatch);
    // A signature under the body's own bytes, including NUL and invalid UTF-8, verifies: the raw bytes are signed.
    const std::string raw("{\"a\":\"\xff\x00\"}", 10);
    CHECK(verify_signature(headers(sign_webhook(vector_key(), kVectorId, kVectorTimestamp, raw)), raw, {vector_key()},
                           kVectorTime) == SignatureVerdict::ok);
}

TEST_CASE("signature: 5-minute tolerance in both directions", "[signature]") {
    CHECK(verify(kVectorSignature, kVectorTime + kSignatureToleranceSeconds) == SignatureVerdict::ok);
    CHECK(verify(kVectorSignature, kVectorTime - kSignatureToleranceSeconds) == SignatureVerdict::ok);
    CHECK(verify(kVectorSignature, kVectorTime + kSignatureToleranceSeconds + 1) == SignatureVerdict::stale);
    CHECK(verify(kVectorSignature, kVectorTime - kSignatureToleranceSeconds - 1) == SignatureVerdict::stale);
    CHECK(verify(kVectorSignature, kVectorTime + 86400 * 365) == SignatureVerdict::stale);
    CHECK(verify(kVectorSignature, 0) == SignatureVerdict::stale);
    // Staleness is judged before the signature: a stale request with a wrong signature is stale.
    CHECK(verify("v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=", kVectorTime + 3600) == SignatureVerdict::stale);
}

TEST_CASE("signature: several entries, one valid, in any position", "[signature]") {
    const std::string wrong = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
    const std::string other_version = "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
    CHECK(verify(wrong + " " + other_version + " " + kVectorSignature + " " + wrong) == SignatureVerdict::ok);
    CHECK(verify(std::string(kVectorSignature) + " " + wrong) == SignatureVerdict::ok);
    CHECK(verify(wrong + " " + wrong) == SignatureVerdict::mismatch);
    // The valid tag under an unknown version does not count.
    CHECK(verify("v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=") == SignatureVerdict::mismatch);
    CHECK(verify("v1a,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=") == SignatureVerdict::mismatch);
    CHECK(verify("V1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=") == SignatureVerdict::mismatch);
}

TEST_CASE("signature: header parsing tolerates spaces and skips what it does not know", "[signature]") {
    const std::string tag = *common::crypto::base64_decode("g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    auto p = parse_signature_header("   v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=  \t v2,abc   ");
    REQUIRE(p);
    CHECK(*p == std::vector<std::string>{tag});
    CHECK(verify("  " + std::string(kVectorSignature) + "   ") == SignatureVerdict::ok);
    // Empty, only spaces, no comma, empty tag, bad base64, a short or long tag: nothing usable, no crash.
    for (const char* h :
         {"", "   ", "v1", "v1,", ",", "v1,,", "v1,dawfeoifkpqwoekfpqoekf", "v1,g0hM9SsE+OTPJTGt",
          "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=A",
          "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE==", "v1,g0hM9SsE-OTPJTGt_tmIKtSyZlE3uFJELVlNIOLJ1OE=",
          "v1,%%%%", "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}) {
        INFO(h);
        auto parsed = parse_signature_header(h);
        REQUIRE(parsed);
        CHECK(parsed->empty());
    }
    // The tag of a comma-separated entry is what follows the first comma.
    CHECK(verify("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=,extra") == SignatureVerdict::mismatch);
}

TEST_CASE("signature: header bounds", "[signature]") {
    const std::string wrong = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
    std::string many;
    for (std::size_t i = 0; i < hub::ingest::kMaxSignatureEntries - 1; ++i) many += wrong + " ";
    CHECK(verify(many + kVectorSignature) == SignatureVerdict::ok);  // exactly the most entries
    CHECK(verify(many + wrong + " " + kVectorSignature) == SignatureVerdict::malformed);
    CHECK_FALSE(parse_signature_header(many + wrong + " " + kVectorSignature));
    // Longer than the limit, even made of spaces.
    const std::string padded = std::string(kVectorSignature) + std::string(hub::ingest::kMaxSignatureHeaderBytes, ' ');
    CHECK_FALSE(parse_signature_header(padded));
    CHECK(verify(padded) == SignatureVerdict::malformed);
    CHECK(parse_signature_header(std::string(hub::ingest::kMaxSignatureHeaderBytes, ' ')));
}

TEST_CASE("signature: missing and malformed headers", "[signature]") {
    const std::vector<std::string> keys = {vector_key()};
    CHECK(verify_signature({"", kVectorTimestamp, kVectorSignature}, kVectorBody, keys, kVectorTime) ==
          SignatureVerdict::missing);
    CHECK(verify_signature({kVectorId, "", kVectorSignature}, kVectorBody, keys, kVectorTime) ==
          SignatureVerdict::missing);
    CHECK(verify_signature({kVectorId, kVectorTimestamp, ""}, kVectorBody, keys, kVectorTime) ==
          SignatureVerdict::missing);
    for (const char* ts : {"hello", "-1614265330", "+1614265330", "01614265330", "1614265330.5", "1614265330 ",
                           " 1614265330", "1e9", "9999999999999", "16142653300000000000000"}) {
        INFO(ts);
        CHECK(verify_signature({kVectorId, ts, kVectorSignature}, kVectorBody, keys, kVectorTime) ==
              SignatureVerdict::malformed);
    }
    CHECK(verify_signature({"msg\n1", kVectorTimestamp, kVectorSignature}, kVectorBody, keys, kVectorTime) ==
          SignatureVerdict::malformed);
    const std::string long_id(hub::ingest::kMaxWebhookIdBytes + 1, 'a');
    CHECK(verify_signature({long_id, kVectorTimestamp, kVectorSignature}, kVectorBody, keys, kVectorTime) ==
          SignatureVerdict::malformed);
}

TEST_CASE("signature: rotation verifies under any valid secret, none is no_secret", "[signature]") {
    const auto old_key = vector_key();
    const auto new_key = *signing_key_from_secret(hub::ingest::new_signing_secret());
    const std::string by_new = sign_webhook(new_key, kVectorId, kVectorTimestamp, kVectorBody);
    CHECK(verify(kVectorSignature, kVectorTime, {new_key, old_key}) == SignatureVerdict::ok);
    CHECK(verify(by_new, kVectorTime, {new_key, old_key}) == SignatureVerdict::ok);
    CHECK(verify(by_new, kVectorTime, {old_key}) == SignatureVerdict::mismatch);            // the old key alone
    CHECK(verify(kVectorSignature, kVectorTime, {new_key}) == SignatureVerdict::mismatch);  // after the grace period
    CHECK(verify(kVectorSignature, kVectorTime, {}) == SignatureVerdict::no_secret);
}

TEST_CASE("signature: secrets and reason codes", "[signature]") {
    const auto secret = hub::ingest::new_signing_secret();
    CHECK(secret.rfind("whsec_", 0) == 0);
    REQUIRE(signing_key_from_secret(secret));
    CHECK(signing_key_from_secret(secret)->size() == 32);
    CHECK(secret != hub::ingest::new_signing_secret());
    CHECK_FALSE(signing_key_from_secret("whsec_"));
    CHECK_FALSE(signing_key_from_secret(""));
    CHECK_FALSE(signing_key_from_secret("whsec_not base64!"));
    using hub::ingest::signature_error_code;
    CHECK(signature_error_code(SignatureVerdict::ok).empty());
    CHECK(signature_error_code(SignatureVerdict::missing) == "signature_missing");
    CHECK(signature_error_code(SignatureVerdict::malformed) == "signature_malformed");
    CHECK(signature_error_code(SignatureVerdict::stale) == "signature_stale");
    CHECK(signature_error_code(SignatureVerdict::mismatch) == "signature_mismatch");
    CHECK(signature_error_code(SignatureVerdict::no_secret) == "signature_no_secret");
}
