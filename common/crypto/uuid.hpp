#pragma once

#include <string>

namespace common::crypto {

/// A UUIDv7 (RFC 9562) as 36 lowercase characters: 48-bit Unix time in ms, then a 12-bit counter, then 62
/// random bits. Thread-safe and strictly increasing within the process: ids from the same millisecond step
/// the counter (seeded randomly below 2048); if the counter runs out or the clock steps back, the timestamp
/// is carried forward by a millisecond instead of repeating or going backwards. Across processes ids are
/// unique (62 random bits) and ordered only to the millisecond.
std::string uuid_v7();

}  // namespace common::crypto
