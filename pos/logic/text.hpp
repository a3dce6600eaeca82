#pragma once

#include <cstddef>
#include <string_view>

namespace pos {

/// The number of characters (Unicode code points) in valid UTF-8 `text`, as Laravel's max:N counts them.
std::size_t utf8_length(std::string_view text);

/// True when `text` is empty or holds only ASCII white space (what Laravel's `required` refuses).
bool is_blank(std::string_view text);

}  // namespace pos
