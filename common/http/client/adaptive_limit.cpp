#include "common/http/client/adaptive_limit.hpp"

#include <algorithm>
#include <cmath>

namespace common::http::detail {

AdaptiveLimit::Change AdaptiveLimit::on_answer(std::uint64_t sent_epoch, bool overloaded) {
    if (overloaded) {
        if (sent_epoch != epoch || value <= 1) return Change::none;
        value = std::max(1.0, std::floor(value / 2));
        ++epoch;
        reduced = true;
        return Change::reduced;
    }
    if (value >= ceiling) return Change::none;
    value = std::min(ceiling, value + 1 / value);
    if (!reduced || value < ceiling) return Change::raised;
    reduced = false;
    return Change::recovered;
}

}  // namespace common::http::detail
